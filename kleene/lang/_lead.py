"""The tokens of a query text as the kind registry reads them (:mod:`kleene.kinds`).

Every kind of query is told apart by its tokens, read with the lexical rules of the
grammars (``grammar.lark``): blanks, ``//`` line comments and ``/* */`` block comments
are skipped, a quoted string is one token, words are compared without case. So a
comment or a string can never change what kind a text is (``// taken from the docs``
above a SASE+ query does not make it a TPStream query).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

_TOKEN = re.compile(
    r"""
      (?P<skip> \s+ | //[^\r\n]* | /\*.*?\*/ )
    | (?P<string> '(?:[^'\\\r\n]|\\.)*' | "(?:[^"\\\r\n]|\\.)*" )
    | (?P<word> [A-Za-z_][A-Za-z0-9_]* )
    | (?P<number> (?:\d+\.\d+|\.\d+|\d+)(?:[eE][+-]?\d+)? )
    | (?P<other> . )
    """,
    re.VERBOSE | re.DOTALL,
)

STRING = "'"  # the token of any quoted string
NUMBER = "0"  # the token of any number
_OPEN, _CLOSE = "([{", ")]}"


def tokens(text: str) -> list[str]:
    """The significant tokens of ``text``: words upper-cased, every string as
    :data:`STRING`, every number as :data:`NUMBER`, any other character as itself."""
    out = []
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "skip":
            continue
        if kind == "word":
            out.append(m.group().upper())
        elif kind == "string":
            out.append(STRING)
        elif kind == "number":
            out.append(NUMBER)
        else:
            out.append(m.group())
    return out


@dataclass(frozen=True)
class Lead:
    """A query text's tokens, with the facts kinds are recognised by."""

    tokens: tuple[str, ...]

    @classmethod
    def of(cls, text: str) -> Lead:
        return cls(tuple(tokens(text)))

    @property
    def first(self) -> str | None:
        """The first token (None for a text of blanks and comments)."""
        return self.tokens[0] if self.tokens else None

    @cached_property
    def top_level(self) -> frozenset[str]:
        """The tokens outside every bracket: the clause keywords and ``UNION``."""
        depth, out = 0, set()
        for t in self.tokens:
            if t in _OPEN:
                depth += 1
            elif t in _CLOSE:
                depth = max(depth - 1, 0)
            elif depth == 0:
                out.add(t)
        return frozenset(out)

    @cached_property
    def has_event_set(self) -> bool:
        """Whether a PATTERN clause holds a set in braces as a component
        (``PATTERN SEQ({C c, P+ p}, B b)`` or ``PATTERN {A a, B b}``), the mark of an
        event-set pattern; a WHERE block's braces follow a strategy, never these."""
        toks = self.tokens
        for i, t in enumerate(toks):
            if t != "{" or i == 0:
                continue
            before = toks[i - 1]
            if before == "PATTERN" or (before in ("(", ",") and _in_pattern(toks, i)):
                return True
        return False


def _in_pattern(toks: tuple[str, ...], at: int) -> bool:
    """Whether token ``at`` lies inside the brackets that follow a PATTERN keyword."""
    depth = 0
    for i in range(at - 1, -1, -1):
        t = toks[i]
        if t in _CLOSE:
            depth += 1
        elif t in _OPEN:
            if depth == 0:  # the bracket that holds ``at``: is it PATTERN SEQ( ?
                return i >= 2 and toks[i - 2] == "PATTERN"
            depth -= 1
    return False
