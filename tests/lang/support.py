"""Helpers for the query-language tests: where a fragment sits, and error checks."""

from __future__ import annotations

from kleene.errors import QueryError


def locate(text: str, fragment: str, occurrence: int = 1) -> tuple[int, int]:
    """The 1-based line and column of the ``occurrence``-th ``fragment`` in ``text``."""
    index = -1
    for _ in range(occurrence):
        index = text.index(fragment, index + 1)
    before = text[:index]
    line = before.count("\n") + 1
    column = index - (before.rfind("\n") + 1) + 1
    return line, column


def assert_error_at(error: QueryError, text: str, fragment: str, occurrence: int = 1) -> None:
    """The error points at ``fragment`` and renders that line with a caret under it."""
    line, column = locate(text, fragment, occurrence)
    assert (error.line, error.column) == (line, column), str(error)
    assert error.text == text
    rendered = str(error).splitlines()
    assert rendered[0] == f"line {line}, column {column}: {error.message}"
    assert rendered[1] == "  " + text.splitlines()[line - 1]
    assert rendered[2] == "  " + " " * (column - 1) + "^"
