"""One hierarchy of errors for the whole engine.

Query errors carry the line and column of the offending spot (both 1-based) and render
the query line with a caret under it, so a user sees where the problem is without a
traceback.
"""

from __future__ import annotations

import re
from bisect import bisect_right

# The one definition of a line break in query texts, used for error positions and for
# the caret line alike: "\r\n", "\r" or "\n". Other vertical whitespace (form feed,
# vertical tab, U+2028, ...) is a blank inside a line.
LINE_BREAK = re.compile(r"\r\n|\r|\n")


def split_lines(text: str) -> list[str]:
    """The lines of ``text``, split at :data:`LINE_BREAK` only."""
    return LINE_BREAK.split(text)


def line_starts(text: str) -> list[int]:
    """The offset at which each line of ``text`` starts."""
    return [0, *(m.end() for m in LINE_BREAK.finditer(text))]


def position(text: str, offset: int, starts: list[int] | None = None) -> tuple[int, int]:
    """The 1-based (line, column) of character ``offset`` of ``text``; ``starts`` is
    :func:`line_starts` of ``text`` when the caller already has it."""
    starts = line_starts(text) if starts is None else starts
    line = bisect_right(starts, offset)
    return line, offset - starts[line - 1] + 1


def _visible(char: str) -> str:
    """A character as the caret line shows it: a tab stays a tab (so the caret lines up
    with it), any other control or separator character becomes one blank."""
    if char == "\t":
        return char
    return " " if not char.isprintable() else char


class KleeneError(Exception):
    """Base class of every error kleene raises on purpose."""


class QueryError(KleeneError):
    """A query that parses but cannot be compiled (unknown variable, misuse, type mismatch).

    ``line`` and ``column`` are 1-based; ``text`` is the whole query when known.
    """

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        text: str | None = None,
    ) -> None:
        self.message = message
        self.line = line
        self.column = column
        self.text = text
        super().__init__(self._render())

    def _render(self) -> str:
        if self.line is None or self.column is None:
            return self.message
        head = f"line {self.line}, column {self.column}: {self.message}"
        if not self.text:
            return head
        lines = split_lines(self.text)
        if not 1 <= self.line <= len(lines):
            return head
        source = "".join(map(_visible, lines[self.line - 1]))
        caret = "".join("\t" if c == "\t" else " " for c in source[: self.column - 1])
        return f"{head}\n  {source}\n  {caret}^"

    def with_text(self, text: str) -> QueryError:
        """The same error, rendered against the full query text."""
        return type(self)(self.message, line=self.line, column=self.column, text=text)


class QuerySyntaxError(QueryError):
    """The query text does not follow the grammar."""


class RunLimitError(KleeneError):
    """A matcher exceeded a configured resource limit (live runs, buffered events)."""


class MatchLimitError(RunLimitError):
    """A run produced more matches than its configured ``max_matches``."""


class SnapshotError(KleeneError):
    """A saved matcher state cannot be restored: corrupt, truncated, of an unknown format
    version, or taken from another query."""


class EventError(KleeneError):
    """Input events cannot be read at all (no type or time column, unreadable file)."""


class TimeError(EventError, TypeError):
    """A time given to ``advance_to`` is no time, or not of the stream's kind (also a
    TypeError, as such a time was before there was one stream time for every kind)."""


class KleeneWarning(UserWarning):
    """Base class of every warning kleene issues."""


class RejectedEventsWarning(KleeneWarning):
    """Some input events were rejected (``run_detailed`` returns them with reasons)."""


class SchemaWarning(KleeneWarning):
    """The input cannot hold what the query reads (an attribute or event type it lacks)."""
