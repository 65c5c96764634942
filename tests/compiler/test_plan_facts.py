"""Facts the compiler hands the runtimes in the plan, so that they never read the AST:
the vectorized evaluation's shape, the RETURN items, the canonical text, the window."""

from __future__ import annotations

import pytest

import kleene
from kleene.compiler import build_plan
from kleene.compiler.returns import ValueType
from kleene.compiler.shape import CUR, PREV
from kleene.lang import expr_to_text, parse
from kleene.lang.ast import IndexKind
from kleene.vocabulary import OutputFormat

PEERS = """PATTERN SEQ(Stock a, Stock+ b[], Stock c)
WHERE strict_contiguity AND a.price > 10
  AND b[i].price > b[i-1].price AND b[b.LEN].volume > 5 AND c.price < b[b.LEN].price"""


def conditions(conds: tuple) -> list[tuple[str, dict]]:
    return [(expr_to_text(c.expr), c.refs) for c in conds]


def test_the_shape_sorts_each_conjunct_onto_begin_take_or_end() -> None:
    shape = kleene.compile(PEERS).plan.shape
    assert shape.vectorizable and shape.declined is None
    a, b, c = shape.components
    assert [(x.var, x.kleene, x.first_state, x.rest_state) for x in (a, b, c)] == [
        ("a", False, 0, None),
        ("b", True, 1, 2),
        ("c", False, 3, None),
    ]
    assert conditions(a.begin) == [("a.price > 10", {("a", "price", None): CUR})]
    # b[i] > b[i-1] reads the element before: a take condition only
    I = IndexKind  # noqa: E741
    assert conditions(b.take) == [
        (
            "b[i].price > b[i-1].price",
            {("b", "price", I.CURRENT): CUR, ("b", "price", I.PREVIOUS): PREV},
        )
    ]
    assert b.begin == ()
    assert conditions(b.end) == [("b[b.LEN].volume > 5", {("b", "volume", I.LAST): CUR})]
    assert conditions(c.begin) == [
        ("c.price < b[b.LEN].price", {("c", "price", None): CUR, ("b", "price", I.LAST): PREV})
    ]
    assert not shape.adjacent_key


@pytest.mark.parametrize(
    ("where", "adjacent"),
    [("strict_contiguity AND b.k == a.k", True), ("partition_contiguity AND [k]", False)],
)
def test_a_key_under_strict_contiguity_must_be_shared_by_adjacent_events(
    where: str, adjacent: bool
) -> None:
    """Routing by the partition implies the key equality; without routing every event of
    a match shares the key iff each event shares its predecessor's."""
    plan = kleene.compile(f"PATTERN SEQ(A a, B b) WHERE {where}").plan
    assert plan.routed is not adjacent
    assert plan.shape.adjacent_key is adjacent


def test_equivalence_over_every_variable_becomes_adjacent_equalities() -> None:
    text = "PATTERN SEQ(A a, B+ b[]) WHERE strict_contiguity AND [k]"
    shape = kleene.compile(text).plan.shape
    a, b = shape.components
    assert a.begin == ()
    assert [expr_to_text(c.expr) for c in b.take] == ["b[i].k = b[i-1].k"]
    assert [expr_to_text(c.expr) for c in b.begin] == ["b[1].k = a.k"]


@pytest.mark.parametrize(
    ("text", "options", "reason"),
    [
        ("PATTERN SEQ(A a, B b)", {}, "not strict or partition contiguity"),
        ("PATTERN SEQ(A a, ~(C c), B b) WHERE strict_contiguity", {}, "negation"),
        ("PATTERN SEQ(A a, B b) WHERE strict_contiguity AND b.x > a.x", {}, None),
    ],
)
def test_the_shape_says_why_it_declines(text: str, options: dict, reason: str | None) -> None:
    shape = kleene.compile(text, **options).plan.shape
    if reason is None:
        assert shape.vectorizable
    else:
        assert reason in (shape.declined or "") and shape.components == ()


def test_the_shape_declines_collapsed_output() -> None:
    # the engine choice refuses this combination before any engine runs; the pass
    # still records why the vector engine would not take it
    text = "PATTERN SEQ(A a, B+ b[]) WHERE strict_contiguity"
    plan = build_plan(parse(text), text, output=OutputFormat.COLLAPSED)
    assert "collapsed" in (plan.shape.declined or "")


def test_the_shape_follows_the_strategy_given_as_an_option() -> None:
    text = "PATTERN SEQ(A a, B b) WHERE b.x > a.x"
    assert not kleene.compile(text).plan.shape.vectorizable
    assert kleene.compile(text, strategy="strict_contiguity").plan.shape.vectorizable


def test_return_items_carry_name_time_flag_and_value_type() -> None:
    text = """PATTERN SEQ(A a, B+ b[]) RETURN a.x AS x, a.timestamp, max(b[].timestamp) AS last,
      b.LEN, count(b[]), sum(b[].v), avg(b[].v), min(b[].v), a.x + b[1].v, a.x / 2, -a.x,
      a.x > 1, not (a.x > 1), 1, 2.5, 'hi', true"""
    items = kleene.compile(text).plan.return_items
    attr = ValueType("attr", "x")
    assert [(i.name, i.time) for i in items[:3]] == [
        ("x", False),
        ("a.timestamp", True),
        ("last", True),
    ]
    assert [i.type for i in items] == [
        attr,
        ValueType("time"),
        ValueType("time"),
        ValueType("long"),
        ValueType("long"),
        ValueType("number", operands=(ValueType("attr", "v"),)),
        ValueType("double"),
        ValueType("widened", "v"),
        ValueType("number", operands=(attr, ValueType("attr", "v"))),
        ValueType("double"),
        ValueType("number", operands=(attr,)),
        ValueType("boolean"),
        ValueType("boolean"),
        ValueType("long"),
        ValueType("double"),
        ValueType("string"),
        ValueType("boolean"),
    ]
    plan = kleene.compile(text).plan
    assert plan.return_names == tuple(i.name for i in items)
    assert plan.return_times == tuple(i.time for i in items)


def test_canonical_text_is_the_same_for_the_same_query_written_differently() -> None:
    one = kleene.compile("PATTERN SEQ(A a, B b) WHERE b.x > a.x WITHIN 5 minutes").plan
    two = kleene.compile("pattern   SEQ(A a,B b)\n where (b.x > a.x)\n within 5 min").plan
    assert one.text != two.text and one.canonical == two.canonical
    assert one.within == two.within == "5 minutes"
    assert kleene.compile("PATTERN SEQ(A a, B b) WITHIN 7").plan.within == "7"
    assert kleene.compile("PATTERN SEQ(A a, B b)").plan.within is None
