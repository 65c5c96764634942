"""The SES syntax: event sets in SEQ, prev(), and the refusals with their places."""

from __future__ import annotations

import pytest

from kleene import kinds
from kleene.compiler import expr as ir
from kleene.errors import EventError, QueryError, QuerySyntaxError
from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.model import LEFT, RIGHT, ConstraintForm, SetVariable
from kleene.lang import ast, parse, parse_program, parse_ses
from tests.eventsets.chemo import Q1


def test_q1_parses_into_sets_with_a_plain_variable_as_a_set_of_one() -> None:
    node = parse_ses("PATTERN SEQ({C c, P+ p}, B b) WHERE prev(p.V) < p.V WITHIN 15 days")
    sets = [[(m.event_type, m.var, m.plus) for m in s.members] for s in node.pattern.sets]
    assert sets == [[("C", "c", False), ("P", "p", True)], [("B", "b", False)]]
    assert node.within == ast.Window(15, ast.TimeUnit.DAYS)
    assert node.where == (ast.Binary(ast.BinOp.LT, ast.Prev("p", "V"), ast.AttrRef("p", "V")),)


def is_ses(text: str) -> bool:
    """Whether the kind registry reads ``text`` as an event-set pattern."""
    return kinds.kind_of_text(text).name == "eventset"


def test_is_ses_tells_the_kinds_apart() -> None:
    assert is_ses(Q1)
    assert is_ses("PATTERN {A a, B+ b} WITHIN 3")
    assert not is_ses("PATTERN SEQ(A a, B+ b[]) WHERE skip_till_any_match(a, b) {a.x = 1}")
    assert not is_ses("PATTERN SEQ(")  # does not parse: the SASE+ path reports it


def test_q1_lowers_to_example_2s_pattern() -> None:
    p = ses_pattern(Q1, time_unit="d")
    assert p.sets == (
        (SetVariable("c", False, 0), SetVariable("p", True, 0)),
        (SetVariable("b", False, 1),),
    )
    assert p.window == 15
    forms = [(c.form, c.variables, c.attributes, c.op) for c in p.constraints]
    assert forms == [
        (ConstraintForm.PROPERTY, ("c",), ("type",), "="),
        (ConstraintForm.PROPERTY, ("p",), ("type",), "="),
        (ConstraintForm.PROPERTY, ("b",), ("type",), "="),
        (ConstraintForm.PROPERTY, ("c",), ("L",), "="),
        (ConstraintForm.PROPERTY, ("p",), ("L",), "="),
        (ConstraintForm.PROPERTY, ("b",), ("L",), "="),
        (ConstraintForm.RELATIONSHIP, ("c", "p"), ("PID", "PID"), "="),
        (ConstraintForm.RELATIONSHIP, ("p", "b"), ("PID", "PID"), "="),
        (ConstraintForm.PREV, ("p",), ("V", "V"), "<"),
    ]
    rel = p.constraints[6]
    assert rel.is_equality_relationship
    assert isinstance(rel.comparison.left, ir.Load) and rel.comparison.left.source == LEFT
    assert isinstance(rel.comparison.right, ir.Load) and rel.comparison.right.source == RIGHT
    assert p.properties("c")[1].comparison.right == ir.Const("C")


def test_operands_are_put_in_the_forms_order() -> None:
    p = ses_pattern("PATTERN SEQ({A+ a}) WHERE 3 < a.x AND a.x > prev(a.x) WITHIN 5")
    prop, prev = p.constraints[1], p.constraints[2]
    assert (prop.form, prop.op, prop.comparison.right) == (
        ConstraintForm.PROPERTY,
        ">",
        ir.Const(3),
    )
    assert (prev.form, prev.op) == (ConstraintForm.PREV, "<")


def test_windows_in_time_units() -> None:
    text = "PATTERN SEQ({A a}, B b) WITHIN 2 hours"
    assert ses_pattern(text, time_unit="s").window == 7200
    assert ses_pattern(text, time_unit="min").window == 120
    assert ses_pattern(text, datetimes=True).window == 7200 * 1_000_000
    assert ses_pattern("PATTERN SEQ({A a}, B b) WITHIN 7", time_unit="s").window == 7
    with pytest.raises(EventError, match="time_unit"):
        ses_pattern(text)


REFUSED = [
    # (text, the refused part, words of the message)
    ("PATTERN SEQ({A a}) WHERE a.x + 1 < 3 WITHIN 1", "a.x + 1", "not an expression"),
    ("PATTERN SEQ({A a}) WHERE a.x < 3 or a.x > 4 WITHIN 1", "a.x < 3 or", "not a comparison"),
    ("PATTERN SEQ({A a}) WHERE not a.x < 3 WITHIN 1", "not a.x", "not a comparison"),
    ("PATTERN SEQ({A a}) WHERE a.x WITHIN 1", "a.x", "not a comparison"),
    ("PATTERN SEQ({A a}, {B b}) WHERE a.x < avg(b[].x) WITHIN 1", "avg(", "not an expression"),
    ("PATTERN SEQ({A+ a}) WHERE a[i].x < 3 WITHIN 1", "a[i].x", "indexed reference"),
    ("PATTERN SEQ({A a}) WHERE 1 < 2 WITHIN 1", "1 < 2", "none of them"),
    ("PATTERN SEQ({A a, B b}) WHERE a.x = a.y WITHIN 1", "a.x = a.y", "two different"),
    ("PATTERN SEQ({A+ a}) WHERE prev(a.x) < a.y WITHIN 1", "prev(a.x) < a.y", "same attribute"),
    ("PATTERN SEQ({A a}) WHERE prev(a.x) < a.x WITHIN 1", "prev(a.x) <", "T+ a"),
    ("PATTERN SEQ({A a}) WHERE z.x = 1 WITHIN 1", "z.x", "unknown variable z"),
    ("PATTERN SEQ({A a}) WHERE a.x = 1", "PATTERN", "WITHIN"),
    ("PATTERN SEQ({A a}) WITHIN -2", "WITHIN -2", "negative"),
]


SYNTAX = [
    ("PATTERN SEQ({A a}, B+ b[]) WITHIN 1", "B+ b[]", "event sets like"),
    ("PATTERN SEQ({A a}, !(B b), C c) WITHIN 1", "!(B b)", "event sets like"),
    ("PATTERN SEQ({A a, B a}) WITHIN 1", "B a", "declared twice"),
    ("PATTERN SEQ({A a}, {B a}) WITHIN 1", "B a", "declared twice"),
    ("PATTERN SEQ({A a}) WHERE skip_till_any_match(a) { a.x = 1 } WITHIN 1", "WHERE", "strategy"),
    ("PATTERN SEQ({A a}) WHERE [x] WITHIN 1", "[x]", "equivalence"),
    ("PATTERN SEQ({A a}) WITHIN 1 RETURN a.x", "RETURN", "WHERE, WITHIN and OUTPUT"),
    ("PATTERN SEQ({A a}) WITHIN 1 OUTPUT NON-OVERLAP", "OUTPUT", "ALL, EARLIEST, MAXIMAL"),
    ("PATTERN SEQ(A a, B b) OUTPUT EARLIEST", "OUTPUT", "NON-OVERLAP or COLLAPSED"),
    ("PATTERN SEQ(A a, B b) WHERE prev(a.x) < b.x", "prev(", "a[i-1].x"),
    ("PATTERN SEQ(A a, SEQ({B b})+) WITHIN 1", "{B b}", "single events"),
    ("PATTERN SEQ({A a}) WHERE prev(a[1].x) < a.x WITHIN 1", "prev(", "one attribute"),
]


@pytest.mark.parametrize(("text", "at", "words"), REFUSED + SYNTAX)
def test_refusals_point_at_their_place(text: str, at: str, words: str) -> None:
    """What is not SES syntax fails to parse (QuerySyntaxError); what parses but is no
    constraint of Definition 1 fails to compile (QueryError)."""
    syntax = (text, at, words) in SYNTAX
    with pytest.raises(QuerySyntaxError if syntax else QueryError) as caught:
        ses_pattern(text) if is_ses(text) else parse(text)
    error = caught.value
    assert isinstance(error, QuerySyntaxError) == syntax
    assert words in error.message
    assert (error.line, error.column) == (1, text.index(at) + 1)


def test_an_ses_query_is_not_part_of_a_program() -> None:
    union = "PATTERN SEQ(A a) UNION PATTERN SEQ({B b}) WITHIN 1"
    with pytest.raises(QuerySyntaxError, match="UNION") as caught:
        parse_program(union)
    assert caught.value.column == union.index("PATTERN SEQ({") + 1
    with pytest.raises(QuerySyntaxError, match="DEFINE"):
        parse_program("DEFINE X AS PATTERN SEQ({B b}) WITHIN 1; PATTERN SEQ(X x)")
    with pytest.raises(QuerySyntaxError, match=r"kleene\.compile"):
        parse(Q1)
    with pytest.raises(QuerySyntaxError, match="not an event-set pattern"):
        parse_ses("PATTERN SEQ(A a)")


def test_a_variable_may_still_be_called_prev() -> None:
    node = parse("PATTERN SEQ(A prev, B b) WHERE prev.x < b.x")
    assert node.where == (
        ast.Binary(ast.BinOp.LT, ast.AttrRef("prev", "x"), ast.AttrRef("b", "x")),
    )


@pytest.mark.parametrize(
    ("clause", "output"),
    [
        ("", None),
        ("OUTPUT ALL", "all"),
        ("OUTPUT earliest", "earliest"),
        ("OUTPUT Maximal", "maximal"),
        ("OUTPUT EARLIEST MAXIMAL", "earliest-maximal"),
        ("OUTPUT earliest_maximal", "earliest-maximal"),
    ],
)
def test_the_output_clause_chooses_among_matches(clause: str, output: str | None) -> None:
    assert parse_ses(f"PATTERN SEQ({{A a}}) WITHIN 1 {clause}").output == output
