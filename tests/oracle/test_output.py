"""Output formats, RETURN values, windows and stream order (docs/semantics.md)."""

from __future__ import annotations

from kleene.lang import ast
from kleene.oracle import evaluate
from tests.helpers import id_sets, match, stream
from tests.oracle.build import agg, equiv, first, item, last, length, one, op, plus, query, ref

ANY = ast.Strategy.SKIP_TILL_ANY_MATCH
NEXT = ast.Strategy.SKIP_TILL_NEXT_MATCH
NON_OVERLAP = ast.OutputFormat.NON_OVERLAP

PAIRS = stream("a1@1", "a2@2", "b1@3", "a3@4", "b2@5", "b3@6", k=[1, 2, 2, 1, 1, 2])


def test_non_overlap_single_partition() -> None:
    q = query(one("A", "a"), one("B", "b"))
    # In (last, first, ...) order: (a1,b1) first, ending at position 2; of the rest only
    # (a3,b2) and (a3,b3) start after it; (a3,b2) comes first and overlaps (a3,b3).
    assert id_sets(evaluate(q, PAIRS, strategy=ANY, output=NON_OVERLAP)) == {
        match(a="a1", b="b1"),
        match(a="a3", b="b2"),
    }
    assert len(evaluate(q, PAIRS, strategy=ANY)) == 8


def test_non_overlap_per_partition() -> None:
    q = query(one("A", "a"), one("B", "b"), where=(equiv("k"),))
    # k=1: (a1,b2) and (a3,b2) both end at b2; (a1,b2) starts first and is kept.
    # k=2: (a2,b1) is kept and (a2,b3) starts before it ends. Unpartitioned, (a2,b1)
    # would have dropped (a1,b2).
    assert id_sets(evaluate(q, PAIRS, strategy=ANY, output=NON_OVERLAP)) == {
        match(a="a1", b="b2"),
        match(a="a2", b="b1"),
    }


def test_non_overlap_from_the_query() -> None:
    q = query(one("A", "a"), one("B", "b"), output=NON_OVERLAP)
    # The query's OUTPUT applies unless the argument overrides it.
    assert len(evaluate(q, PAIRS, strategy=ANY)) == 2
    assert len(evaluate(q, PAIRS, strategy=ANY, output=ast.OutputFormat.ALL)) == 8


def test_non_overlap_after_negation() -> None:
    q = query(one("A", "a"), ast.Component("N", "n", negated=True), one("B", "b"))
    events = stream("a1@1", "a2@2", "n1@3", "a3@4", "b1@5")
    # Negation leaves only (a3,b1); non-overlap then has nothing to drop.
    assert id_sets(evaluate(q, events, strategy=ANY, output=NON_OVERLAP)) == {match(a="a3", b="b1")}


def test_return_values() -> None:
    q = query(
        one("A", "a"),
        plus("B", "b"),
        one("C", "c"),
        where=(equiv("job"),),
        returns=(
            item(ref("a", "job")),
            item(agg("avg", "b", "period")),
            item(agg("max", "b", "period")),
            item(agg("count", "b", None)),
            item(first("b", "period"), "head"),
            item(last("b", "period"), "tail"),
            item(length("b"), "n"),
            item(op("/", agg("sum", "b", "period"), length("b")), "mean"),
            item(op("-", ref("c", "timestamp"), ref("a", "timestamp")), "duration"),
        ),
    )
    events = stream("a1@1", "b1@2", "b2@3", "b3@4", "c1@9", job=["J"] * 5, period=[0, 2, 5, 4, 0])
    (found,) = evaluate(q, events, strategy=NEXT)
    # b = [b1, b2, b3] with periods 2, 5, 4.
    assert found.values == {
        "a.job": "J",
        "avg(b[].period)": 11 / 3,
        "max(b[].period)": 5,
        "count(b[])": 3,
        "head": 2,
        "tail": 4,
        "n": 3,
        "mean": 11 / 3,
        "duration": 8,
    }


def test_return_value_that_cannot_be_computed_is_none() -> None:
    q = query(
        one("A", "a"), one("B", "b"), returns=(item(op("/", ref("a", "v"), ref("b", "v")), "q"),)
    )
    (found,) = evaluate(q, stream("a1@1", "b1@2", v=[3, 0]))
    # 3 / 0 has no value.
    assert found.values == {"q": None}


def test_window_is_inclusive() -> None:
    q = query(one("A", "a"), one("B", "b"), within=5)
    events = stream("a1@0", "b1@5", "b2@5.5")
    # 5 - 0 = 5 <= 5 matches; 5.5 - 0 > 5 does not.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {match(a="a1", b="b1")}
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {match(a="a1", b="b1")}
    # Under skip till next match an event past the window kills the run.
    assert evaluate(q, stream("a1@0", "x1@6", "b1@5.5"), strategy=NEXT) == []


def test_window_with_a_unit() -> None:
    q = query(one("A", "a"), one("B", "b"), within=1, unit=ast.TimeUnit.MINUTES)
    events = stream("a1@0", "b1@60", "b2@61")
    # One minute is 60 timestamp units (seconds).
    assert id_sets(evaluate(q, events, strategy=ANY)) == {match(a="a1", b="b1")}


def test_stream_order_and_default_ids() -> None:
    q = query(one("A", "a"), one("B", "b"))
    events = [
        {"type": "B", "timestamp": 2},
        {"type": "A", "timestamp": 1},
        {"type": "A", "timestamp": 2},
    ]
    # Sorted by time, then input index: A(#1), B(#0), A(#2). The second A ties with B
    # but arrived after it, so it cannot precede it. Ids are input indices.
    (found,) = evaluate(q, events, strategy=ANY)
    assert found.ids == {"a": (1,), "b": (0,)}
    assert found.positions == {"a": (0,), "b": (1,)}


def test_custom_field_names() -> None:
    q = query(one("A", "a"), one("B", "b"), where=(op("==", ref("a", "timestamp"), 1),))
    events = [
        {"kind": "A", "ts": 1, "key": "x"},
        {"kind": "A", "ts": 2, "key": "y"},
        {"kind": "B", "ts": 3, "key": "z"},
    ]
    # a.timestamp reads the time field, whatever its name.
    got = evaluate(q, events, strategy=ANY, type_field="kind", time_field="ts", id_field="key")
    assert [m.ids for m in got] == [{"a": ("x",), "b": ("z",)}]


def test_matches_ordered_by_last_then_first_position() -> None:
    q = query(one("A", "a"), one("B", "b"))
    got = evaluate(q, PAIRS, strategy=ANY)
    order = [(max(p for ps in m.positions.values() for p in ps), m.positions["a"][0]) for m in got]
    assert order == sorted(order)
