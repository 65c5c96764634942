"""Error positions and the caret line use one definition of a line break ("\\r\\n", "\\r",
"\\n"); other vertical whitespace is a blank inside a line."""

from __future__ import annotations

import pytest

import kleene
from kleene.errors import QueryError, position, split_lines

BREAKS = ["\n", "\r\n", "\r"]
BLANKS = ["\x0c", "\x0b", "\u2028", "\u2029", "\x85", "\x1c", "\x1e"]


def _error(text: str) -> QueryError:
    with pytest.raises(QueryError) as caught:
        kleene.compile(text)
    return caught.value


@pytest.mark.parametrize("brk", BREAKS, ids=repr)
@pytest.mark.parametrize(
    "tail",
    [
        "  c.x > 1",  # validation: unknown variable c
        "  a.x >> 1",  # syntax: unexpected '>'
        "  skip_till_nxt_match",  # a near miss, named at the word
    ],
)
def test_caret_after_each_line_break(brk: str, tail: str) -> None:
    text = f"PATTERN SEQ(A a, B b){brk}WHERE a.x < b.x and{brk}{tail}"
    error = _error(text)
    spot = 3 if ">>" not in tail else 8
    assert (error.line, error.column) == (3, spot), str(error)
    rendered = str(error).split("\n")
    assert rendered[1] == "  " + tail
    assert rendered[2] == "  " + " " * (spot - 1) + "^"


@pytest.mark.parametrize("blank", BLANKS, ids=repr)
def test_other_vertical_whitespace_is_a_blank_in_the_line(blank: str) -> None:
    text = f"PATTERN SEQ(A a, B b){blank}WHERE a.x < b.x and{blank}  c.x > 1"
    error = _error(text)
    column = text.index("c.x") + 1
    assert (error.line, error.column) == (1, column)
    source, caret = str(error).split("\n")[1:]
    assert source == "  " + text.replace(blank, " ")
    assert caret == "  " + " " * (column - 1) + "^"


def test_caret_lines_up_under_tabs() -> None:
    text = "PATTERN SEQ(A a, B b)\n\tWHERE\ta.x < c.x"
    error = _error(text)
    assert (error.line, error.column) == (2, 14)
    assert str(error).split("\n")[2] == "  \t     \t      ^"


def test_a_line_comment_ends_at_a_carriage_return() -> None:
    query = kleene.compile("PATTERN SEQ(A a, B b) // the pattern\rWHERE a.x < b.x")
    assert len(query.plan.states) == 2
    assert "a.x < b.x" in query.explain()


def test_position_and_split_lines_agree() -> None:
    text = "ab\r\ncd\ref\ngh\x0cij\u2028kl"
    lines = split_lines(text)
    assert lines == ["ab", "cd", "ef", "gh\x0cij\u2028kl"]
    for offset, char in enumerate(text):
        if char in "\r\n":
            continue
        line, column = position(text, offset)
        assert lines[line - 1][column - 1] == char
