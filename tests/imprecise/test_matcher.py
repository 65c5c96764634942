"""IntervalQuery.matcher(): pushing a stream in chunks gives the results of one run."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from tests.imprecise.streams import interval_queries, interval_streams

STRATEGIES = ("skip_till_any_match", "skip_till_next_match")


def _results(found: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((repr(sorted(m.ids().items())), m.start, m.end, m.confidence) for m in found)


@settings(max_examples=60, deadline=None)
@given(
    interval_queries(),
    interval_streams(max_events=6),
    st.sampled_from(STRATEGIES),
    st.sampled_from(("points", "events")),
    st.lists(st.integers(1, 6), min_size=1, max_size=6),
)
def test_chunks_give_the_results_of_one_run(
    text: str, events: list[dict[str, Any]], strategy: str, engine: str, sizes: list[int]
) -> None:
    """With U_max declared the matcher emits results as they become final; with it
    measured it holds the events to the end. Either way, the chunked results (exact
    fractions) are those of one whole run, each emitted once."""
    for u_max in (2, None):
        q = kleene.compile(
            text, time="interval", strategy=strategy, engine=engine, u_max=u_max, exact=True
        )
        m = q.matcher()
        found, start = [], 0
        for size in sizes * len(events):
            if start >= len(events):
                break
            found += m.push(events[start : start + size])
            start += size
        found += m.flush()
        assert _results(found) == _results(q.run(events))


def test_results_become_final_before_the_end_with_u_max_declared() -> None:
    """a [0, 1] then b [2, 3] with WITHIN 4 and U_max 1: once an event with lower bound
    20 arrives, t_emit = 19 is past b's upper bound plus the window, so (a, b) is
    final and pushed out before flush, with confidence 1 (a always precedes b)."""
    q = kleene.compile("PATTERN SEQ(A a, B b) WITHIN 4", time="interval", u_max=1, engine="points")
    m = q.matcher()
    assert m.push([{"type": "A", "id": 1, "lower": 0, "upper": 1}]) == []
    assert m.push([{"type": "B", "id": 2, "lower": 2, "upper": 3}]) == []
    out = m.push([{"type": "C", "id": 3, "lower": 20, "upper": 20}])
    assert [(r.ids(), r.confidence) for r in out] == [({"a": (1,), "b": (2,)}, 1)]
    assert m.flush() == []


def test_the_callback_receives_the_results_and_rejected_events_are_taken_once() -> None:
    q = kleene.compile("PATTERN SEQ(A a, B b)", time="interval")
    got: list[Any] = []
    m = q.matcher(on_matches=got.extend)
    events = [
        {"type": "A", "id": 1, "lower": 0, "upper": 1},
        {"type": "B", "id": 2, "lower": 3, "upper": 2},
        {"type": "B", "id": 3, "lower": 2, "upper": 2},
    ]
    assert m.push(events) == [] and m.flush() == []
    assert [r.ids() for r in got] == [{"a": (1,), "b": (3,)}]
    rejected = m.take_rejected()
    assert [(r.id, r.reason) for r in rejected] == [(2, "lower bound 3 is after upper bound 2")]
    assert m.take_rejected() == []
