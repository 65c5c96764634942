"""Near-miss suggestions for misspelled words of the query language.

When the parser stops at (or right after) a word that is not valid there, and the word
is close to a strategy, a keyword, an aggregate function, a time unit or an output
format, the syntax error names what was probably meant ("did you mean
skip_till_next_match?") instead of the terminals the parser state would accept.
Closeness is :func:`difflib.get_close_matches`.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from difflib import get_close_matches

STRATEGIES = (
    "strict_contiguity",
    "partition_contiguity",
    "skip_till_next_match",
    "skip_till_any_match",
)
FUNCTIONS = ("avg", "min", "max", "sum", "count")
KEYWORDS = (
    "PATTERN",
    "SEQ",
    "WHERE",
    "WITHIN",
    "RETURN",
    "OUTPUT",
    "DEFINE",
    "UNION",
    "AND",
    "NOT",
    "TRUE",
    "FALSE",
)
UNITS = ("seconds", "minutes", "hours", "days")
FORMATS = ("ALL", "NON-OVERLAP", "COLLAPSED")

_ALL_WORDS = frozenset(
    w.lower().replace("-", "_")
    for w in (*STRATEGIES, *FUNCTIONS, *KEYWORDS, *UNITS, *FORMATS, "or", "as", "i", "len")
)
_AFTER_WHERE = re.compile(r"\bwhere\s*$", re.IGNORECASE)


def _listing(words: Collection[str], last: str = "and") -> str:
    items = list(words)
    return ", ".join(items[:-1]) + f" {last} " + items[-1]


def _is_word_char(char: str) -> bool:
    return char.isascii() and (char.isalnum() or char in "_-")


def word_at(text: str, at: int) -> tuple[int, str]:
    """The word (letters, digits, ``_`` and ``-``) that offset ``at`` is in, or else the
    one that ends right before it (blanks between allowed), with its start offset."""
    start = end = min(at, len(text))
    if not (start > 0 and _is_word_char(text[start - 1])) and not (
        end < len(text) and _is_word_char(text[end])
    ):
        while start > 0 and text[start - 1].isspace():
            start -= 1
        end = start
    while start > 0 and _is_word_char(text[start - 1]):
        start -= 1
    while end < len(text) and _is_word_char(text[end]):
        end += 1
    return start, text[start:end].strip("-")


def _guess(word: str | None) -> str:
    return f" (did you mean {word}?)" if word else ""


def did_you_mean(word: str, choices: Collection[str], cutoff: float = 0.6) -> str:
    """`` (did you mean X?)`` naming the choice closest to ``word``, or "" when none is
    close (for the words other front ends validate themselves)."""
    return _guess(_close(word, choices, cutoff))


def _close(word: str, choices: Collection[str], cutoff: float) -> str | None:
    found = get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return found[0] if found else None


def near_miss(text: str, at: int, expected: Collection[str]) -> tuple[int, str] | None:
    """``(offset, message)`` naming the intended word when the parse error at offset
    ``at`` is a misspelling (of the word there, or of the word before it); None
    otherwise."""
    start, word = word_at(text, at)
    found = _misspelled(text, start, word, expected)
    if found is None and start > 0:
        before = start
        while before > 0 and text[before - 1].isspace():
            before -= 1
        if before > 0 and _is_word_char(text[before - 1]):
            start, word = word_at(text, before)
            found = _misspelled(text, start, word, ())
    return found


def _misspelled(
    text: str, start: int, word: str, expected: Collection[str]
) -> tuple[int, str] | None:
    if len(word) < 3 or word[0].isdigit():
        return None
    normal = word.lower().replace("-", "_")
    following = text[start + len(word) :].lstrip()[:1]
    if normal == "not" and following not in (".", "["):
        return start, (
            f"'{word}' cannot stand here, after an operator: put the negated condition in "
            "parentheses, as in a.ok = (not b.ok)"
        )
    if normal in _ALL_WORDS:
        return None
    function = _close(normal, FUNCTIONS, 0.6) if following == "(" else None
    strategy = _close(normal, STRATEGIES, 0.75)
    after_where = _AFTER_WHERE.search(text[:start]) is not None
    if function is None and (strategy or (after_where and following in ("(", "{"))):
        return start, (
            f"unknown event selection strategy '{word}'{_guess(strategy)}: the strategies "
            f"are {_listing(STRATEGIES)}"
        )
    keyword = _close(word.upper(), KEYWORDS, 0.75)
    if keyword:
        return start, f"unexpected '{word}': did you mean {keyword}?"
    if "UNIT" in expected:
        unit = _close(normal, UNITS, 0.6)
        if unit:
            return start, f"unknown time unit '{word}'{_guess(unit)}: use {_listing(UNITS, 'or')}"
    if "OUTPUT_FORMAT" in expected:
        form = _close(word.upper().replace("_", "-"), FORMATS, 0.6)
        if form is None:
            return None
        return start, (
            f"unknown output format '{word}'{_guess(form)}: the formats are {_listing(FORMATS)}"
        )
    if function or (following == "(" and ("DOT" in expected or "LSQB" in expected)):
        return start, (
            f"unknown function '{word}'{_guess(function)}: the functions are {_listing(FUNCTIONS)}"
        )
    return None
