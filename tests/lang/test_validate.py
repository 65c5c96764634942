"""Semantic checks: each error names the problem and points at the offending node."""

from __future__ import annotations

import pytest

from kleene.errors import QueryError, QuerySyntaxError
from kleene.lang import ast, parse, validate
from tests.lang.support import assert_error_at, locate

P = "PATTERN SEQ(A a, B+ b[], C c)\n"

# (query text, the fragment the error points at, its occurrence, words of the message)
CASES = [
    # variables
    (
        "PATTERN SEQ(A a, B b, C a)",
        "C a",
        1,
        "variable 'a' is declared twice (first at line 1, column 13)",
    ),
    ("PATTERN SEQ(~(A a), !B b)", "SEQ", 1, "at least one component that is not negated"),
    (
        P + "WHERE a.x = d.x",
        "d.x",
        1,
        "unknown variable 'd' in WHERE (the pattern declares a, b, c)",
    ),
    (P + "WHERE count(d[]) > 1", "count", 1, "unknown variable 'd' in WHERE"),
    (P + "WHERE d.LEN > 1", "d.LEN", 1, "unknown variable 'd' in WHERE"),
    (P + "RETURN a.x, z.y", "z.y", 1, "unknown variable 'z' in RETURN"),
    (
        P + "WHERE skip_till_next_match(a, zz, c) { }",
        "zz",
        1,
        "unknown variable 'zz' in the strategy's variable list",
    ),
    (P + "WHERE skip_till_next_match(a, c, a) { }", "a)", 1, "variable 'a' is listed twice"),
    # Kleene references on the wrong kind of variable
    (P + "WHERE a[1].x > 0", "a[1]", 1, "a[1].x needs a Kleene variable, but a is a single event"),
    (P + "WHERE c[i].x > 0", "c[i]", 1, "c[i].x needs a Kleene variable"),
    (P + "WHERE c[i-1].x > 0", "c[i-1]", 1, "needs a Kleene variable"),
    (P + "WHERE c[c.LEN].x > 0", "c[c.LEN]", 1, "needs a Kleene variable"),
    (P + "WHERE a.LEN > 1", "a.LEN", 1, "a.LEN needs a Kleene variable"),
    (P + "WHERE avg(c[].x) > 1", "avg", 1, "avg(c[].x) needs a Kleene variable"),
    (P + "WHERE max(a[..i-1].x) > 1", "max", 1, "needs a Kleene variable"),
    (P + "RETURN count(a[])", "count", 1, "count(a[]) needs a Kleene variable"),
    (P + "WHERE b.x > 0", "b.x", 1, "b is a Kleene variable: write b[i].x, b[1].x, b[b.LEN].x"),
    (P + "RETURN b.x", "b.x", 1, "b is a Kleene variable"),
    # the current element outside WHERE
    (P + "RETURN b[i].x", "b[i]", 1, "only exists in WHERE"),
    (P + "RETURN b[i-1].x AS y", "b[i-1]", 1, "only exists in WHERE"),
    (P + "RETURN sum(b[..i-1].x)", "sum", 1, "only exists in WHERE"),
    # the iterator rule
    (
        "PATTERN SEQ(A+ a[], B+ b[])\nWHERE a[i].x > b[i].x",
        "b[i]",
        1,
        "iterate over one Kleene variable only",
    ),
    (
        "PATTERN SEQ(A+ a[], B+ b[])\nWHERE a[i].x > avg(b[..i-1].x)",
        "avg",
        1,
        "one Kleene variable only",
    ),
    (
        P + "WHERE b[i].x > c.x",
        "c.x",
        1,
        "may only use variables before b in the pattern, but c comes after b",
    ),
    (P + "WHERE b[i-1].x < c.y + 1", "c.y", 1, "c comes after b"),
    (P + "WHERE b[i].x > b[b.LEN].x", "b[b.LEN]", 1, "known only when b has ended"),
    (P + "WHERE b[i].x > b.LEN", "b.LEN", 1, "known only when b has ended"),
    (P + "WHERE b[i].x > avg(b[].x)", "avg", 1, "known only when b has ended"),
    # negation
    (
        "PATTERN SEQ(A a, ~(N n))\nRETURN a.x, n.x",
        "n.x",
        1,
        "n is negated: a match holds no event for it",
    ),
    (
        "PATTERN SEQ(~(N n), B+ b[])\nWHERE b[i].x > n.x",
        "n.x",
        1,
        "the negated variable n cannot appear in a condition on b[i]",
    ),
    ("PATTERN SEQ(B+ b[], ~(N n), C c)\nWHERE n.x = b[i-1].x", "n.x", 1, "negated variable n"),
    (
        "PATTERN SEQ(A a, ~(N n), ~(M m), C c)\nWHERE n.x = m.x",
        "m.x",
        1,
        "may not relate two separate negations (n and m)",
    ),
    # window
    (P + "WITHIN 0", "WITHIN", 1, "the WITHIN window must be positive, not 0"),
    (P + "WITHIN -2 hours", "WITHIN", 1, "must be positive, not -2"),
    # RETURN names
    (
        P + "RETURN a.x, c.y, a.x",
        "a.x",
        2,
        "two RETURN items are named 'a.x' (first at line 2, column 8)",
    ),
    (P + "RETURN a.x AS v, c.y AS v", "c.y", 1, "two RETURN items are named 'v'"),
    (P + "RETURN c.y AS total, a.x AS total", "a.x", 1, "named 'total'"),
    (P + "RETURN avg(b[].p), avg(b[].p) AS q, AVG(b[].p)", "AVG", 1, "named 'avg(b[].p)'"),
    # types the query text shows
    (P + "WHERE a.x + 'abc' > 1", "'abc'", 1, "'+' needs numbers, but 'abc' is a string"),
    (P + "WHERE -'abc' < a.x", "'abc'", 1, "unary minus needs a number, but 'abc' is a string"),
    (P + "WHERE (a.x > 1) * 2 > 1", "a.x > 1", 1, "'*' needs numbers, but a.x > 1 is a condition"),
    (P + "WHERE a.x % true = 0", "true", 1, "'%' needs numbers, but true is a condition"),
    (P + "WHERE 'abc' < 5", "5", 1, "'<' cannot order a string and a number"),
    (P + "WHERE a.y >= 'x' + 1", "'x'", 1, "'+' needs numbers"),
    (
        P + "WHERE (a.x = 1) < c.y",
        "a.x = 1",
        1,
        "'<' orders numbers, strings or timestamps, but a.x = 1 is a condition",
    ),
    (
        P + "WHERE (a.x + 1 or c.y > 2)",
        "a.x + 1",
        1,
        "each side of 'or' must be a condition, but a.x + 1 is a number",
    ),
    (
        P + "WHERE (c.y > 2 and 'x')",
        "'x'",
        1,
        "each side of 'and' must be a condition, but 'x' is a string",
    ),
    (
        P + "WHERE not b.LEN",
        "b.LEN",
        1,
        "the operand of 'not' must be a condition, but b.LEN is a number",
    ),
    # a value is not a condition, whatever the attribute holds at run time
    (
        P + "WHERE skip_till_next_match(a, b[], c) { a.v }",
        "a.v",
        1,
        "a WHERE conjunct must be a condition, but a.v is a value, not a condition "
        "(compare it, as in a.v = true)",
    ),
    (P + "WHERE c.ok or a.x > 1", "c.ok", 1, "each side of 'or' must be a condition"),
    (P + "WHERE not max(b[].x)", "max(b[].x)", 1, "the operand of 'not' must be a condition"),
    # '=' between known kinds that differ (a condition is not the number 1)
    (
        P + "WHERE (a.x > 1) = 1",
        "1",
        2,
        "'=' compares values of one kind, but a.x > 1 is a condition and 1 is a number",
    ),
    (P + "WHERE 'abc' != 5", "5", 1, "'!=' compares values of one kind"),
    (P + "WHERE (a.x > 1) >= (c.y < 2)", "a.x > 1", 1, "'>=' orders numbers, strings or"),
    (
        P + "WHERE a.x + 1",
        "a.x + 1",
        1,
        "a WHERE conjunct must be a condition, but a.x + 1 is a number",
    ),
    (P + "WHERE a.x > 1 AND 'yes'", "'yes'", 1, "must be a condition, but 'yes' is a string"),
    (
        P + "WHERE avg(b[].x) AND a.x > 1",
        "avg",
        1,
        "must be a condition, but avg(b[].x) is a number",
    ),
    (P + "RETURN a.x + 'abc'", "'abc'", 1, "'+' needs numbers"),
]


@pytest.mark.parametrize(("text", "at", "occurrence", "words"), CASES)
def test_validation_error(text: str, at: str, occurrence: int, words: str) -> None:
    query = parse(text)
    with pytest.raises(QueryError) as caught:
        validate(query, text)
    error = caught.value
    assert not isinstance(error, QuerySyntaxError)
    assert words in error.message
    assert_error_at(error, text, at, occurrence)


VALID = [
    "PATTERN A a",
    P + "WHERE [symbol] AND a.x = 1 AND b[i].x > a.x AND b[i].x >= b[i-1].x",
    P + "WHERE b[i].x > avg(b[..i-1].x) AND b[i].y > b[1].y AND c.x < b[b.LEN].x",
    P + "WHERE c.x > avg(b[].x) AND b.LEN >= 3 AND count(b[]) < 10 AND sum(b[].v) > 0",
    P
    + "WHERE a.flag = true AND (c.ok = true or not c.bad = true) AND a.x = 'IBM' AND a.name < 'M'",
    P + "WHERE a.x = 'one' AND c.y != 2 AND true",
    P + "WHERE min(b[].name) < 'M' AND max(b[..i-1].x) <= b[i].x",
    "PATTERN SEQ(A a, ~(N n), C c)\nWHERE a.id = n.id AND n.id = c.id AND n.v > 0",
    "PATTERN SEQ(B+ b[], ~(N n), C c)\nWHERE n.x > b[b.LEN].x AND n.y < avg(b[].y)",
    P + "WHERE skip_till_any_match(a, b[], c) { [k] }",
    P + "WHERE skip_till_next_match(b[]) { b[i].x > b[i-1].x }",
    P + "WITHIN 0.5 seconds",
    P + "RETURN a.x, a.x + 1, b[1].x, b[b.LEN].x AS last, b.LEN, avg(b[].x), count(b[]), c.x AS x",
    P + "RETURN -a.x, a.x / 2 > 1 AS big, not a.f = false",
]


@pytest.mark.parametrize("text", VALID)
def test_valid_queries_pass(text: str) -> None:
    validate(parse(text), text)


def test_without_text_the_error_still_has_line_and_column() -> None:
    text = P + "WHERE d.x > 1"
    with pytest.raises(QueryError) as caught:
        validate(parse(text))
    error = caught.value
    assert (error.line, error.column) == locate(text, "d.x")
    assert error.text is None
    assert str(error) == f"line 2, column 7: {error.message}"


def test_strategy_list_spans_come_from_the_ast_not_a_second_parse() -> None:
    text = "PATTERN A a\nWHERE skip_till_any_match(a, q) { }"
    with pytest.raises(QueryError, match="unknown variable 'q'") as caught:
        validate(parse(text))  # no text given: the parser recorded where q is written
    assert (caught.value.line, caught.value.column) == (2, 30)


def test_strategy_list_of_a_hand_built_query_points_at_the_query() -> None:
    query = ast.Query(
        pattern=ast.Seq((ast.Component("A", "a"),)),
        strategy=ast.Strategy.SKIP_TILL_ANY_MATCH,
        strategy_vars=("a", "q"),
        span=ast.Span(3, 4),
    )
    with pytest.raises(QueryError, match="unknown variable 'q'") as caught:
        validate(query)
    assert (caught.value.line, caught.value.column) == (3, 4)


def test_hand_built_ast_is_checked_too() -> None:
    query = ast.Query(
        pattern=ast.Seq(
            (ast.Component("A", "a"), ast.Component("B", "b", kleene=True, negated=True))
        ),
        where=(ast.Unary(ast.UnOp.NOT, ast.Equivalence(("x",))),),
    )
    with pytest.raises(QueryError, match="must be a single event") as caught:
        validate(query)
    assert caught.value.line is None and str(caught.value) == caught.value.message
    nested = ast.Query(
        pattern=ast.Seq((ast.Component("A", "a"),)),
        where=(ast.Unary(ast.UnOp.NOT, ast.Equivalence(("x",))),),
    )
    with pytest.raises(QueryError, match="top-level WHERE conjunct"):
        validate(nested)
