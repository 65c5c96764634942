"""Syntax errors: plain words, the right line and column, and the caret line."""

from __future__ import annotations

import pytest

from kleene.errors import QueryError, QuerySyntaxError
from kleene.lang import parse
from tests.lang.support import assert_error_at

# (query text, the fragment the error points at, words the message must contain)
CASES = [
    ("", "", "expected DEFINE or PATTERN"),
    ("WHERE a.x > 1", "WHERE", "expected DEFINE or PATTERN"),
    ("PATTERN", "", "expected a component like 'Stock a' or 'Stock+ a[]' or SEQ(...)"),
    ("PATTERN SEQ(Stock a,)", ")", "expected a component like 'Stock a' or 'Stock+ a[]'"),
    ("PATTERN SEQ()", ")", "expected a component like 'Stock a'"),
    ("PATTERN SEQ(Stock a, B b", "", "expected ')' or ','"),
    ("PATTERN SEQ Stock a", "Stock", "expected '('"),
    ("PATTERN SEQ(Stock+ a)", ")", "expected '['"),
    ("PATTERN SEQ(~(Stock+ a[]))", "+", "unexpected '+': expected a name"),
    ("PATTERN Stock count", "count", "'count' is a reserved word"),
    ("PATTERN SEQ(A a, B+ i[])", "i[]", "'i' is a reserved word"),
    ("PATTERN A a WHERE", "", "expected an event selection strategy such as skip_till_next_match"),
    ("PATTERN A a WHERE a.x >", "", "expected an expression like 'a.price'"),
    ("PATTERN A a WHERE a.x > 1 AND", "", "expected an expression"),
    ("PATTERN A a WHERE a.x > 1 a.y", "a.y", "expected an operator like '+', '>' or 'and'"),
    ("PATTERN A a WHERE a.x > 1 a.y", "a.y", "a clause (WHERE, WITHIN, RETURN or OUTPUT)"),
    ("PATTERN A a WHERE a.x # 3", "#", "unexpected character '#'"),
    ("PATTERN A a WHERE a.x < 2 < 3", "< 3", "comparisons do not chain"),
    ("PATTERN A a WHERE skip_till_next_match(a) a.x", "a.x", "expected '{'"),
    ("PATTERN A a WHERE skip_till_next_match(a) { a.x > 1", "", "expected '}'"),
    ("PATTERN A a WHERE skip_till_next_match() { }", ")", "expected a name"),
    ("PATTERN A a WHERE skip_till_any_match(a[]) { }", "a[]", "a is not a Kleene variable"),
    ("PATTERN A+ a[] WHERE skip_till_any_match(a) { }", "a)", "write a[] in the variable list"),
    ("PATTERN A a WHERE a.x = 'abc", "'abc", "unterminated string"),
    ('PATTERN A a WHERE a.x = "abc\nAND a.y = 1', '"abc', "unterminated string"),
    ("PATTERN A a WHERE a.x = 1 /* x\n AND a.x = 'a", "/*", "unterminated comment"),
    ("PATTERN A a /* x", "/*", "unterminated comment"),
    ("PATTERN A a WHERE a.x > 1 /* x", "/*", "unterminated comment"),
    ("PATTERN A a WITHIN", "", "expected a number"),
    ("PATTERN A a WITHIN 5 fortnights", "fortnights", "a time unit"),
    ("PATTERN A a OUTPUT some", "some", "expected ALL, NON-OVERLAP or COLLAPSED"),
    ("PATTERN A a RETURN a.x AS", "", "expected a name"),
    ("PATTERN A a RETURN a.x AS a.y", ".y", "unexpected '.'"),
    ("PATTERN A+ a[] WHERE a[2].x > 1", "2]", "unsupported index 2: use 1, i, i-1"),
    ("PATTERN A+ a[] WHERE a[i-2].x > 1", "2]", "only i-1"),
    ("PATTERN A+ a[] WHERE a[b.LEN].x > 1", "b.LEN", "written a[a.LEN], not a[b.LEN]"),
    ("PATTERN A+ a[] WHERE a[].x > 1", "].x", "unexpected ']': expected an index: 1, i, i-1"),
    ("PATTERN A a WHERE a.x = '/*' AND a.y > 1 /* x", "/* x", "unterminated comment"),
    ("PATTERN A+ a[] WHERE avg(a[]) > 1", "avg", "avg needs an attribute"),
    ("PATTERN A+ a[] WHERE sum(a[..i-1]) > 1", "sum", "needs an attribute"),
    ("PATTERN A+ a[] WHERE max(a[2..i-1].x) > 1", "2..", "unsupported range start 2"),
    ("PATTERN A+ a[] WHERE max(a[..i-2].x) > 1", "2]", "only ..i-1"),
    ("PATTERN A+ a[] WHERE a[1].x > 1 or [x]", "[x]", "may only be a top-level WHERE conjunct"),
    ("PATTERN A+ a[] WHERE not [x]", "[x]", "may only be a top-level WHERE conjunct"),
    ("PATTERN A+ a[] RETURN [x]", "[x]", "may only be a top-level WHERE conjunct"),
]


@pytest.mark.parametrize(("text", "at", "words"), CASES)
def test_syntax_error(text: str, at: str, words: str) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        parse(text)
    error = caught.value
    assert words in error.message
    assert "Token(" not in error.message and "lark" not in error.message.lower()
    if at:
        assert_error_at(error, text, at)
    else:  # the end of the query: just after its last character
        lines = text.rstrip().splitlines() or [""]
        assert (error.line, error.column) == (len(lines), len(lines[-1]) + 1)


@pytest.mark.parametrize(
    ("clause", "again"),
    [
        ("WHERE a.x > 1", "WHERE a.y > 2"),
        ("WHERE skip_till_any_match", "where [x]"),
        ("WITHIN 5", "WITHIN 6 hours"),
        ("RETURN a.x", "RETURN a.y"),
        ("OUTPUT ALL", "output non-overlap"),
    ],
)
def test_repeated_clause_points_at_the_second_one(clause: str, again: str) -> None:
    text = (
        f"PATTERN SEQ(A a)\n{clause}\nWITHIN 1 s\n{again}"
        if "WITHIN" not in clause
        else (f"PATTERN SEQ(A a)\n{clause}\nRETURN a.x\n{again}")
    )
    with pytest.raises(QuerySyntaxError) as caught:
        parse(text)
    keyword = clause.split()[0]
    assert (
        f"the {keyword} clause is given twice (first at line 2, column 1)" in caught.value.message
    )
    assert_error_at(caught.value, text, again)


def test_error_on_a_later_line() -> None:
    text = "PATTERN SEQ(A a, B b)\nWHERE a.x > 1\n  AND b.y >> 2"
    with pytest.raises(QuerySyntaxError) as caught:
        parse(text)
    assert_error_at(caught.value, text, "> 2")


def test_syntax_errors_are_query_errors() -> None:
    with pytest.raises(QueryError):
        parse("PATTERN")
