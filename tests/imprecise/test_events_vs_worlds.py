"""The event-based framework (VLDB 2010, section 4), by each of its methods (query
order with sorting, any state, selectivity order), equals the possible-worlds oracle on
random small interval streams and queries, under both strategies, with windows and
predicates; in one run and pushed one event at a time with a declared U_max (so the
sorting and selectivity buffers and the run pruning of Appendices C.2-C.3 take part).
The queries reuse event types across components, so events matching several
components are sorted into query order too."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.imprecise.admission import Admission, measured_u_max
from kleene.imprecise.events import METHODS, EventFramework
from tests.imprecise.streams import interval_queries, interval_streams
from tests.imprecise.test_points_vs_worlds import STRATEGIES, _key, expected


def run_events(
    text: str, events: list[dict[str, Any]], strategy: str, method: str, one_by_one: bool
) -> list[tuple[Any, ...]]:
    u_max = 2 if one_by_one else None
    q = kleene.compile(text, time="interval", strategy=strategy, exact=True, u_max=u_max)
    admission = Admission(q.plan, q.fields, q.interval)
    batches = [[e] for e in events] if one_by_one else [events]
    framework = None
    found = []
    for batch in batches:
        admitted = admission.admit(batch)
        if framework is None:
            size = measured_u_max(admitted) if u_max is None else u_max
            framework = EventFramework(q.plan, q.window, size, q.keep, method)
        found += framework.push(admitted, admission.now_lower)
    assert framework is not None
    found += framework.flush()
    return sorted(((m.ids(), m.start, m.end, m.confidence, m.values()) for m in found), key=_key)


@settings(max_examples=240, deadline=None)
@given(
    interval_queries(),
    interval_streams(max_events=6),
    st.sampled_from(STRATEGIES),
    st.sampled_from(METHODS),
    st.booleans(),
)
def test_event_based_equals_the_worlds(
    text: str, events: list[dict[str, Any]], strategy: str, method: str, one_by_one: bool
) -> None:
    want = sorted(expected(text, events, strategy), key=_key)
    assert run_events(text, events, strategy, method, one_by_one) == want


@settings(max_examples=40, deadline=None)
@given(interval_queries(), interval_streams(), st.sampled_from(STRATEGIES))
def test_engines_agree_through_the_api_in_floating_point(
    text: str, events: list[dict[str, Any]], strategy: str
) -> None:
    """engine="events" and engine="points" through kleene.compile, floats: the same
    signatures and ranges, confidences within 1e-12 of the exact ones."""
    want = sorted(expected(text, events, strategy), key=_key)
    floats = [{k: (list(map(float, v)) if k == "pmf" else v) for k, v in e.items()} for e in events]
    for engine in ("events", "points"):
        q = kleene.compile(text, time="interval", strategy=strategy, engine=engine)
        got = sorted(((m.ids(), m.start, m.end, m.confidence) for m in q.run(floats)), key=_key)
        assert [_key(g) for g in got] == [_key(w) for w in want]
        for g, w in zip(got, want, strict=True):
            assert isinstance(g[3], float) and abs(g[3] - w[3]) <= 1e-12


def test_an_event_tied_with_the_previous_one_does_not_set_its_nelt() -> None:
    """x at 0 ties with a at 0, so it is never strictly between a and b at 1: (a, b) and
    (x, b) both hold in the only world. An NELT taken from events starting at (rather
    than after) a's valid upper bound would drop both."""
    events = [
        {"type": "A", "id": "a", "lower": 0, "upper": 0},
        {"type": "A", "id": "x", "lower": 0, "upper": 0},
        {"type": "A", "id": "b", "lower": 1, "upper": 1},
    ]
    text = "PATTERN SEQ(A v0, A v1)"
    want = sorted(expected(text, events, "skip_till_next_match"), key=_key)
    assert [r[0] for r in want] == [{"v0": ("a",), "v1": ("b",)}, {"v0": ("x",), "v1": ("b",)}]
    for one_by_one in (False, True):
        got = run_events(text, events, "skip_till_next_match", "any", one_by_one)
        assert got == want
