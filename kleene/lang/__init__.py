"""The query-language front end: text -> AST -> checked AST -> text.

``parse`` reads a SASE+ query (SIGMOD 2008, section 2) into the AST of
:mod:`kleene.lang.ast`; ``validate`` checks what the grammar cannot (variables, Kleene
references, negation, types); ``to_text`` prints a canonical query that parses back to an
equal AST, and ``expr_to_text`` the text of one expression (a RETURN item's default name).
``parse_ses`` reads an event-set (SES) query (match-window paper, section 3) into
:class:`~kleene.lang.ast.SesQuery`; ``is_ses`` tells such a text from a SASE+ one.
"""

from kleene.lang._parser import is_ses, parse, parse_program, parse_ses
from kleene.lang._printer import expr_to_text, to_text
from kleene.lang._validate import validate

__all__ = [
    "expr_to_text",
    "is_ses",
    "parse",
    "parse_program",
    "parse_ses",
    "to_text",
    "validate",
]
