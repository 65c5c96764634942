"""Plain-word syntax errors from lark's parse failures.

Lark reports the terminals the LALR state would accept; this module names them as a
user would ("a component like 'Stock a'", "an expression like 'a.price'") and builds a
:class:`~kleene.errors.QuerySyntaxError` with the line, column and query text.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from kleene.errors import QuerySyntaxError, position
from kleene.lang._suggest import near_miss

_WORDS = {
    "PATTERN": "PATTERN",
    "SEQ": "SEQ(...)",
    "SEQ_GROUP": "SEQ(...)+",
    "WHERE": "WHERE",
    "WITHIN": "WITHIN",
    "RETURN": "RETURN",
    "OUTPUT": "OUTPUT",
    "AS": "AS",
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": "a quoted string",
    "NEG_MARK": "'~' or '!'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "LBRACE": "'{'",
    "RBRACE": "'}'",
    "COMMA": "','",
    "DOT": "'.'",
    "DOTDOT": "'..'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "MUL_OP": "'*', '/' or '%'",
    "COMPARE": "a comparison such as '=' or '<'",
    "STRATEGY": "an event selection strategy such as skip_till_next_match",
    "UNIT": "a time unit (seconds, minutes, hours, days)",
    "OUTPUT_FORMAT": "ALL, NON-OVERLAP or COLLAPSED",
    "I": "'i'",
    "LEN": "LEN",
    "AND": "'and'",
    "OR": "'or'",
    "NOT": "'not'",
    "TRUE": "true",
    "FALSE": "false",
    "$END": "the end of the query",
}

_COMPONENT = "a component like 'Stock a' or 'Stock+ a[]'"
_EXPRESSION = "an expression like 'a.price', 42 or 'avg(a[..i-1].price)'"
_CONDITION = "a condition like 'a.price > 10' or '[symbol]'"
_OPERATOR = "an operator like '+', '>' or 'and'"
_CLAUSE = "a clause (WHERE, WITHIN, RETURN or OUTPUT)"

_UNTERMINATED_COMMENT = "unterminated comment: '/*' has no closing '*/'"

# Strings and comments, so that a '/*' inside a string is not taken for a comment; the
# last alternative is a '/*' without its '*/'.
_LEXEMES = re.compile(
    r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|//[^\n]*|/\*.*?\*/|/\*", re.DOTALL
)

_EXPRESSION_START = frozenset(
    {
        "NUMBER",
        "STRING",
        "NAME",
        "TRUE",
        "FALSE",
        "LPAR",
        "MINUS",
        "NOT",
        "LSQB",
        "AVG",
        "MIN",
        "MAX",
        "SUM",
        "COUNT",
        "PREV",
    }
)
_OPERATORS = frozenset({"PLUS", "MINUS", "MUL_OP", "COMPARE", "AND", "AMPERSANDS", "WEDGE", "OR"})
_CLAUSES = ("WHERE", "WITHIN", "RETURN", "OUTPUT")
_AGGREGATES = frozenset({"AVG", "MIN", "MAX", "SUM", "COUNT"})


def describe_expected(expected: Collection[str], words: Mapping[str, str] | None = None) -> str:
    """Names the acceptable terminals of a parser state in plain words; ``words`` adds
    the terminals of another grammar that imports these rules."""
    left = set(expected)
    phrases: list[str] = []
    if "I" in left:  # inside a[...]
        phrases.append("an index: 1, i, i-1 or the variable's LEN as in a[a.LEN]")
        left -= {"I", "NUMBER", "NAME"}
    if {"SEQ", "SEQ_GROUP"} <= left:  # after PATTERN: SEQ(...) says it
        left.discard("SEQ_GROUP")
    if {"NAME", "NEG_MARK"} <= left:
        phrases.append(_COMPONENT)
        left -= {"NAME", "NEG_MARK", "LBRACE"}  # an event set {T v, ...} is a component too
    if "NUMBER" in left and "NAME" in left:
        if "STRATEGY" in left:
            phrases.append(_WORDS["STRATEGY"])
            phrases.append(_CONDITION)
            left.discard("STRATEGY")
        else:
            phrases.append(_EXPRESSION)
        left -= _EXPRESSION_START
    if {"NUMBER", "MINUS"} <= left:  # WITHIN: a negative amount parses, then fails validation
        left.discard("MINUS")
    if "COMPARE" in left or "MUL_OP" in left:
        phrases.append(_OPERATOR)
        left -= _OPERATORS
    if left & _AGGREGATES:
        phrases.append("an aggregate (avg, min, max, sum, count)")
        left -= _AGGREGATES
    if left & {"AND", "AMPERSANDS", "WEDGE"}:
        phrases.append("'and'")
        left -= {"AND", "AMPERSANDS", "WEDGE"}
    clauses = [c for c in _CLAUSES if c in left]
    if len(clauses) > 1:
        phrases.append(_CLAUSE)
        left -= set(clauses)
    end = "$END" in left
    left.discard("$END")
    known = {**_WORDS, **(words or {})}
    phrases.extend(sorted(known.get(name, name) for name in left))
    if end:
        phrases.append(_WORDS["$END"])
    if not phrases:
        return "something else"
    if len(phrases) == 1:
        return phrases[0]
    return ", ".join(phrases[:-1]) + " or " + phrases[-1]


def _end_position(text: str) -> tuple[int, int]:
    """The line and column just after the last non-blank character of ``text``."""
    return position(text, len(text.rstrip()))


def _unterminated_comment(text: str, before: int) -> tuple[int, int] | None:
    """Where an unclosed ``/*`` starts, if one starts before offset ``before``."""
    for found in _LEXEMES.finditer(text):
        if found.start() > before:
            return None
        if found.group() == "/*":
            return position(text, found.start())
    return None


def _unexpected_token(
    error: UnexpectedToken, text: str, words: Mapping[str, str] | None
) -> tuple[int, int, str]:
    token = error.token
    expected = error.accepts or error.expected
    at = len(text) if token.type == "$END" else token.start_pos or 0
    comment = _unterminated_comment(text, at)
    if comment is not None:
        return comment[0], comment[1], _UNTERMINATED_COMMENT
    end = token.type == "$END"
    hint = near_miss(text, len(text.rstrip()) if end else at, expected)
    if hint is not None:
        return (*position(text, hint[0]), hint[1])
    if end:
        line, column = _end_position(text)
        expecting = describe_expected(expected, words)
        return line, column, f"unexpected end of the query: expected {expecting}"
    line, column = position(text, at)
    if token.type == "COMPARE" and "COMPARE" not in expected:
        return (
            line,
            column,
            (f"unexpected '{token}': comparisons do not chain; write 'a.x < b.x and b.x < c.x'"),
        )
    return line, column, f"unexpected '{token}': expected {describe_expected(expected, words)}"


def _unexpected_characters(
    error: UnexpectedCharacters, text: str, words: Mapping[str, str] | None
) -> tuple[int, int, str]:
    comment = _unterminated_comment(text, error.pos_in_stream or 0)
    if comment is not None:
        return comment[0], comment[1], _UNTERMINATED_COMMENT
    at = error.pos_in_stream or 0
    rest = text[at:]
    if rest[:1] in ("'", '"'):
        message = "unterminated string: the closing quote is missing on this line"
    else:
        hint = near_miss(text, at, error.allowed)
        if hint is not None:
            return (*position(text, hint[0]), hint[1])
        expecting = describe_expected(error.allowed, words)
        message = f"unexpected character {rest[:1]!r}: expected {expecting}"
    line, column = position(text, at)
    return line, column, message


def syntax_error(
    error: UnexpectedInput, text: str, words: Mapping[str, str] | None = None
) -> QuerySyntaxError:
    """Translates a lark parse failure into a QuerySyntaxError; ``words`` names the
    terminals of a grammar that imports these rules (the TPStream language)."""
    if isinstance(error, UnexpectedToken):
        line, column, message = _unexpected_token(error, text, words)
    elif isinstance(error, UnexpectedCharacters):
        line, column, message = _unexpected_characters(error, text, words)
    else:  # UnexpectedEOF: the LALR parser reports the end as an UnexpectedToken instead
        line, column = _end_position(text)
        expected = getattr(error, "expected", None) or ()
        message = f"unexpected end of the query: expected {describe_expected(expected, words)}"
    return QuerySyntaxError(message, line=line, column=column, text=text)
