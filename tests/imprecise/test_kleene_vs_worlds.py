"""Kleene closure over interval events (SASE++ section 4 and Algorithm 1) equals the
possible-worlds oracle exactly on random small streams, with and without a confidence
threshold."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.errors import QueryError
from kleene.lang import ast, parse
from kleene.oracle.imprecise import evaluate_worlds
from tests.imprecise.streams import interval_streams

ANY = "skip_till_any_match"

# predicates of a Kleene variable k (correlated: they read its order; uncorrelated: not)
KLEENE_PREDICATES = (
    "k[i].x > k[i-1].x",
    "k[i].x != k[i-1].x",
    "k[i].x > 0",
    "k.LEN >= 2",
    "sum(k[].x) <= 3",
)


@st.composite
def kleene_queries(draw: Any) -> str:
    """SEQ of 1-3 components, exactly one of them a Kleene k[], with some predicates
    on it, maybe a window and a RETURN of an order-independent value."""
    n = draw(st.integers(0, 2))
    at = draw(st.integers(0, n))
    parts = [f"{draw(st.sampled_from(('A', 'B')))} v{i}" for i in range(n)]
    parts.insert(at, f"{draw(st.sampled_from(('A', 'B')))}+ k[]")
    chosen = draw(st.lists(st.sampled_from(KLEENE_PREDICATES), max_size=2, unique=True))
    text = f"PATTERN SEQ({', '.join(parts)})"
    if chosen:
        text += " WHERE " + " AND ".join(chosen)
    if draw(st.booleans()):
        text += f" WITHIN {draw(st.integers(1, 5))}"
    if draw(st.booleans()):
        text += " RETURN k.LEN AS n, sum(k[].x) AS s"
    return text


def _rows(found: Any) -> list[tuple[Any, ...]]:
    return sorted(
        ((sorted(m[0].items()), m[1], m[2], m[3], sorted(m[4].items())) for m in found),
        key=lambda r: (r[0], r[1], r[2]),
    )


def expected(text: str, events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    found = evaluate_worlds(parse(text), events, strategy=ast.Strategy.SKIP_TILL_ANY_MATCH)
    return _rows((r.ids, r.start, r.end, r.confidence, r.values) for r in found)


def run(text: str, events: list[dict[str, Any]], **options: Any) -> list[tuple[Any, ...]]:
    q = kleene.compile(text, time="interval", strategy=ANY, exact=True, **options)
    return _rows((m.ids(), m.start, m.end, m.confidence, m.values()) for m in q.run(events))


@settings(max_examples=300, deadline=None)
@given(kleene_queries(), interval_streams(max_events=6, types=("A", "B")))
def test_kleene_equals_the_worlds(text: str, events: list[dict[str, Any]]) -> None:
    assert run(text, events) == expected(text, events)


@settings(max_examples=150, deadline=None)
@given(
    kleene_queries(),
    interval_streams(max_events=6, types=("A", "B")),
    st.sampled_from((Fraction(1, 4), Fraction(1, 2), Fraction(3, 4))),
    st.booleans(),
)
def test_a_threshold_keeps_exactly_the_worlds_results_above_it(
    text: str, events: list[dict[str, Any]], threshold: Fraction, as_clause: bool
) -> None:
    """Algorithm 1 prunes prefixes, yet the results are the oracle's whose confidence
    exceeds the threshold (the CONFIDENCE clause and the confidence= option alike)."""
    want = [r for r in expected(text, events) if r[3] > threshold]
    if as_clause:
        got = run(f"{text} CONFIDENCE > {float(threshold)}", events)
    else:
        got = run(text, events, confidence=float(threshold))
    assert got == want


def test_a_set_whose_prefix_fails_a_predicate_is_still_found() -> None:
    """k[i].x != k[i-1].x is not inherited by subsets: (1, 2, 1) holds, its prefix
    (1, 1) in time order does not. Pruning by predicates would lose it; the bound by
    time order does not."""
    events = [
        {"type": "A", "id": "p", "lower": 0, "upper": 0, "x": 1},
        {"type": "A", "id": "q", "lower": 1, "upper": 1, "x": 2},
        {"type": "A", "id": "r", "lower": 2, "upper": 2, "x": 1},
    ]
    text = "PATTERN SEQ(A+ k[]) WHERE k[i].x != k[i-1].x CONFIDENCE > 0.5"
    got = run(text, events)
    assert [r[0] for r in got] == [
        [("k", ("p",))],
        [("k", ("p", "q"))],
        [("k", ("p", "q", "r"))],
        [("k", ("q",))],
        [("k", ("q", "r"))],
        [("k", ("r",))],
    ]
    assert got == expected(text, events)


def test_the_kleene_order_follows_the_times_in_each_world() -> None:
    """b1 (x = 1) in [0, 1] and b2 (x = 2) in [0, 2], uniform: {b1, b2} matches
    k[i].x > k[i-1].x only in the worlds where b1 occurs strictly before b2, (0, 1),
    (0, 2) and (1, 2): 3 of the 6 equally likely worlds."""
    events = [
        {"type": "B", "id": "b1", "lower": 0, "upper": 1, "x": 1},
        {"type": "B", "id": "b2", "lower": 0, "upper": 2, "x": 2},
    ]
    got = run("PATTERN SEQ(B+ k[]) WHERE k[i].x > k[i-1].x", events)
    both = [r for r in got if r[0] == [("k", ("b1", "b2"))]]
    assert both[0][3] == Fraction(3, 6)


def test_kleene_under_skip_till_next_match_is_refused() -> None:
    with pytest.raises(QueryError, match="skip_till_any_match only"):
        kleene.compile("PATTERN SEQ(A a, B+ b[])", time="interval", strategy="skip_till_next_match")
