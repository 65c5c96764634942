"""The query-language front ends: text -> AST -> checked AST -> text.

``parse`` reads a SASE+ query (SIGMOD 2008, section 2) into the AST of
:mod:`kleene.lang.ast`; ``validate`` checks what the grammar cannot (variables, Kleene
references, negation, types); ``to_text`` prints a canonical query that parses back to an
equal AST, and ``expr_to_text`` the text of one expression (a RETURN item's default name).
``parse_program`` reads DEFINE statements and UNIONs, ``parse_ses`` an event-set (SES)
query (match-window paper, section 3) into :class:`~kleene.lang.ast.SesQuery`, and
``parse_tpstream`` a TPStream query (EDBT 2018, :mod:`kleene.lang.tpstream`).

Which kind a text is, is told by the kind registry alone (:func:`kleene.kinds.kind_of_text`,
from the tokens of :mod:`kleene.lang._lead`); ``is_ses`` is a thin wrapper over it, kept
for its last callers.
"""

from kleene.lang._parser import parse, parse_program, parse_ses
from kleene.lang._printer import expr_to_text, to_text
from kleene.lang._validate import validate
from kleene.lang.tpstream import parse as parse_tpstream

__all__ = [
    "expr_to_text",
    "is_ses",
    "parse",
    "parse_program",
    "parse_ses",
    "parse_tpstream",
    "to_text",
    "validate",
]


def is_ses(text: str) -> bool:
    """Whether the kind registry takes ``text`` for an event-set pattern."""
    from kleene import kinds  # the registry reads this package's tokens: import late

    return kinds.kind_of_text(text).name == "eventset"
