"""The point-based framework equals the possible-worlds oracle (VLDB 2010, sections 2.3
and 3) on random small interval streams and queries, under both strategies."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.imprecise.admission import Admission
from kleene.imprecise.framework import PointFramework
from kleene.lang import ast, parse
from kleene.oracle.imprecise import evaluate_worlds
from tests.imprecise.streams import interval_queries, interval_streams

STRATEGIES = ("skip_till_any_match", "skip_till_next_match")


def expected(text: str, events: list[dict[str, Any]], strategy: str) -> list[tuple[Any, ...]]:
    found = evaluate_worlds(parse(text), events, strategy=ast.Strategy(strategy))
    return [(r.ids, r.start, r.end, r.confidence, r.values) for r in found]


def framework(text: str, events: list[dict[str, Any]], strategy: str, exact: bool) -> list[Any]:
    q = kleene.compile(text, time="interval", strategy=strategy, exact=exact, engine="points")
    found = q.run(events)
    return [(m.ids(), m.start, m.end, m.confidence, m.values()) for m in found]


def _key(row: tuple[Any, ...]) -> Any:
    return (sorted(row[0].items()), row[1], row[2])


@settings(max_examples=150, deadline=None)
@given(interval_queries(), interval_streams(), st.sampled_from(STRATEGIES))
def test_exact_confidences_equal_the_worlds(
    text: str, events: list[dict[str, Any]], strategy: str
) -> None:
    want = sorted(expected(text, events, strategy), key=_key)
    got = sorted(framework(text, events, strategy, exact=True), key=_key)
    assert got == want


@settings(max_examples=40, deadline=None)
@given(interval_queries(), interval_streams(), st.sampled_from(STRATEGIES))
def test_float_confidences_within_1e12(
    text: str, events: list[dict[str, Any]], strategy: str
) -> None:
    want = sorted(expected(text, events, strategy), key=_key)
    floats = [{k: (list(map(float, v)) if k == "pmf" else v) for k, v in e.items()} for e in events]
    got = sorted(framework(text, floats, strategy, exact=False), key=_key)
    assert [_key(r) for r in got] == [_key(r) for r in want]
    for g, w in zip(got, want, strict=True):
        assert abs(g[3] - w[3]) <= 1e-12
        assert isinstance(g[3], float)


@settings(max_examples=60, deadline=None)
@given(interval_queries(), interval_streams(), st.sampled_from(STRATEGIES))
def test_events_one_at_a_time_give_the_same_results(
    text: str, events: list[dict[str, Any]], strategy: str
) -> None:
    """Pushed one by one with a declared U_max, results come out once t_emit passes
    them (section 3, steps 1 and 3) and equal those of the whole run."""
    q = kleene.compile(text, time="interval", strategy=strategy, exact=True, u_max=2)
    admission = Admission(q.plan, q.fields, q.interval)
    points = PointFramework(q.plan, q.window, 2, q.keep)
    found = []
    for e in events:
        admitted = admission.admit([e])
        found += points.push(admitted, admission.now_lower)
        for m in found:  # a result is final when emitted: its last event ended long ago
            assert m.end < admission.now_lower - 2
    found += points.flush()
    got = sorted(((m.ids(), m.start, m.end, m.confidence) for m in found), key=_key)
    want = sorted((r[:4] for r in expected(text, events, strategy)), key=_key)
    assert got == want
