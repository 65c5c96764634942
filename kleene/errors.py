"""One hierarchy of errors for the whole engine.

Query errors carry the line and column of the offending spot (both 1-based) and render
the query line with a caret under it, so a user sees where the problem is without a
traceback.
"""

from __future__ import annotations


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
        lines = self.text.splitlines()
        if not 1 <= self.line <= len(lines):
            return head
        source = lines[self.line - 1]
        caret = " " * (self.column - 1) + "^"
        return f"{head}\n  {source}\n  {caret}"

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


class KleeneWarning(UserWarning):
    """Base class of every warning kleene issues."""


class RejectedEventsWarning(KleeneWarning):
    """Some input events were rejected (``run_detailed`` returns them with reasons)."""


class SchemaWarning(KleeneWarning):
    """The input cannot hold what the query reads (an attribute or event type it lacks)."""
