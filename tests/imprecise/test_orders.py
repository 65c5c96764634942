"""The orders the event-based framework presents events in (VLDB 2010, section 4.3 and
Appendix C.3): selectivity order's buffers and what they may drop, and heartbeats
(punctuation) that let sorted buffers release before now.lower - U_max passes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.imprecise.admission import Admission
from kleene.imprecise.events import METHODS, EventFramework
from kleene.imprecise.ordering import SelectivityOrder
from tests.imprecise.streams import interval_queries, interval_streams
from tests.imprecise.test_events_vs_worlds import run_events
from tests.imprecise.test_points_vs_worlds import _key, expected

ANY = "skip_till_any_match"
STRATEGIES = (ANY, "skip_till_next_match")


def _framework(text: str, method: str, u_max: int = 2) -> tuple[Admission, EventFramework]:
    q = kleene.compile(text, time="interval", strategy=ANY, exact=True, u_max=u_max)
    return Admission(q.plan, q.fields, q.interval), EventFramework(
        q.plan, q.window, u_max, q.keep, method
    )


def _ids(found: list[Any]) -> list[Any]:
    return sorted(repr(sorted(m.ids().items())) for m in found)


def test_selectivity_order_presents_the_rarest_component_first() -> None:
    """Three As and one B: once both buffers hold an event, the B (fewest matched so
    far) is presented before the As, which then only extend its run."""
    order = SelectivityOrder(2, None)
    admission, _ = _framework("PATTERN SEQ(A a, B b)", "selectivity")
    events = admission.admit(
        [{"type": "A", "id": i, "lower": i, "upper": i + 1} for i in range(3)]
        + [{"type": "B", "id": 9, "lower": 3, "upper": 4}]
    )
    assert order.add(events[:3], [[0]] * 3, 0, lambda k: {}) == []
    out = order.add(events[3:], [[1]], 0, lambda k: {})
    assert [e.id for e, _ in out] == [9, 0, 1, 2]
    assert order.order() == [1, 0]


def test_selectivity_order_drops_out_of_date_events_while_a_buffer_is_empty() -> None:
    """Only As, WITHIN 3: every A is out of date once t_emit passes its upper bound
    plus the window and no B can come in time; the buffer and the runs stay small."""
    admission, framework = _framework("PATTERN SEQ(A a, B b) WITHIN 3", "selectivity")
    most = 0
    for i in range(200):
        framework.push(admission.admit([{"type": "A", "id": i, "lower": i, "upper": i + 2}]), i)
        assert isinstance(framework.order, SelectivityOrder)
        most = max(most, len(framework.order.waiting) + len(framework.runs))
    assert most <= 10


LATE_PARTNERS = [
    # a2 waits alone for a B and is out of date once c3 arrives, but it can precede b1
    # (a2 [3, 5], b1 [4, 6]): the live run holding b1 keeps it
    [
        {"type": "A", "id": "a0", "lower": 0, "upper": 1},
        {"type": "B", "id": "b1", "lower": 4, "upper": 6},
        {"type": "A", "id": "a2", "lower": 3, "upper": 5},
        {"type": "C", "id": "c3", "lower": 20, "upper": 20},
    ],
    # b2 waits alone for an A; it can follow a0 within the window (a0 [0, 1], b2
    # [4, 6], WITHIN 5): the live run holding a0 keeps it
    [
        {"type": "A", "id": "a0", "lower": 0, "upper": 1},
        {"type": "B", "id": "b1", "lower": 1, "upper": 2},
        {"type": "B", "id": "b2", "lower": 4, "upper": 6},
        {"type": "C", "id": "c3", "lower": 20, "upper": 20},
    ],
]


@pytest.mark.parametrize("events", LATE_PARTNERS)
def test_an_event_that_a_live_run_can_complete_is_not_dropped(
    events: list[dict[str, Any]],
) -> None:
    text = "PATTERN SEQ(A a, B b) WITHIN 5"
    want = kleene.compile(text, time="interval", exact=True).run(events)
    late = events[2]["id"]
    assert any((late,) in m.ids().values() for m in want)
    for method in METHODS:
        q = kleene.compile(text, time="interval", exact=True, u_max=2, method=method)
        m = q.matcher()
        found = [r for e in events for r in m.push([e])] + m.flush()
        assert _ids(found) == _ids(want)


def test_a_heartbeat_releases_the_sorted_buffers_early() -> None:
    """b [1, 6] waits in E_2's buffer until t_emit passes 6: with U_max = 10 that takes
    an event starting after 16. A heartbeat 10 says no event starts before 10, so b is
    presented and (a, b) is emitted at once, equal to the result of one whole run."""
    text = "PATTERN SEQ(A a, B b) WITHIN 8"
    events = [
        {"type": "A", "id": "a", "lower": 0, "upper": 5},
        {"type": "B", "id": "b", "lower": 1, "upper": 6},
        {"type": "C", "id": "c", "lower": 11, "upper": 12},
    ]
    (want,) = kleene.compile(text, time="interval", exact=True).run(events)
    q = kleene.compile(text, time="interval", exact=True, u_max=10, method="query")
    plain = q.matcher()
    assert plain.push(events) == []  # t_emit = 11 - 10 = 1: b still buffered
    (got,) = plain.flush()
    beat = q.matcher()
    assert beat.push(events[:2]) == []
    (early,) = beat.heartbeat(10)
    assert beat.push(events[2:]) == [] and beat.flush() == []
    for r in (got, early):
        assert (r.ids(), r.start, r.end, r.confidence) == (
            want.ids(),
            want.start,
            want.end,
            want.confidence,
        )


def test_an_event_breaking_a_heartbeats_promise_is_rejected() -> None:
    q = kleene.compile("PATTERN SEQ(A a, B b)", time="interval", u_max=4)
    m = q.matcher()
    m.push([{"type": "A", "id": 1, "lower": 0, "upper": 2}])
    assert m.heartbeat(5) == []
    assert m.push([{"type": "B", "id": 2, "lower": 3, "upper": 6}]) == []
    (rejected,) = m.take_rejected()
    assert rejected.id == 2 and "before the heartbeat 5" in rejected.reason
    try:
        m.heartbeat(2.5)
    except kleene.KleeneError as exc:
        assert "whole number" in str(exc)
    else:
        raise AssertionError("a fractional heartbeat was accepted")


@settings(max_examples=50, deadline=None)
@given(
    interval_queries(),
    interval_streams(max_events=6),
    st.sampled_from(STRATEGIES),
    st.sampled_from(("points", *METHODS)),
    st.lists(st.integers(0, 2), min_size=6, max_size=6),
)
def test_heartbeats_leave_the_results_unchanged(
    text: str, events: list[dict[str, Any]], strategy: str, how: str, slack: list[int]
) -> None:
    """A heartbeat after each event, at (up to 2 before) the smallest lower bound of the
    events still to come: every event is admitted and the results (exact fractions)
    are those of one run without heartbeats."""
    options: dict[str, Any] = {"engine": "points"} if how == "points" else {"method": how}
    q = kleene.compile(text, time="interval", strategy=strategy, exact=True, u_max=2, **options)
    m = q.matcher()
    found = []
    for k, e in enumerate(events):
        found += m.push([e])
        rest = [x["lower"] for x in events[k + 1 :]]
        if rest:
            found += m.heartbeat(min(rest) - slack[k])
    found += m.flush()
    assert m.take_rejected() == []
    want = q.run(events)
    key = [(repr(sorted(r.ids().items())), r.start, r.end, r.confidence) for r in want]
    got = [(repr(sorted(r.ids().items())), r.start, r.end, r.confidence) for r in found]
    assert sorted(got) == sorted(key)


def _skewed() -> list[dict[str, Any]]:
    """As and Bs at every other instant, a C every 40 instants: the shape of Fig. 4(d)
    (the last component rare, its period longer than the window)."""
    events = []
    for t in range(0, 600, 2):
        kind = "C" if t % 40 == 38 else "AB"[(t // 2) % 2]
        events.append({"type": kind, "id": f"{kind}{t}", "lower": t, "upper": t + 2})
    return events


def test_selectivity_order_keeps_events_without_a_rare_partner_out_of_the_runs() -> None:
    """SEQ(A, B, C) WITHIN 30, a C every 40 instants: the As and Bs that can share a
    match with no C (waiting or in a live run) stay in their buffers until one can, or
    are dropped, and the runs are pruned regardless of them, so selectivity order
    matches each event against a fraction of the any-state method's runs (section 5.1
    on Fig. 4(d)), with the same results."""
    text = "PATTERN SEQ(A a, B b, C c) WITHIN 30"
    work = {}
    results = {}
    for method in ("any", "selectivity"):
        admission, framework = _framework(text, method)
        found, total = [], 0
        for e in _skewed():
            found += framework.push(admission.admit([e]), admission.now_lower)
            total += len(framework.runs)
        results[method] = _ids(found + framework.flush())
        work[method] = total
    assert results["selectivity"] == results["any"] and results["any"]
    assert work["selectivity"] * 2 <= work["any"]


@st.composite
def _long_streams(draw: Any) -> list[dict[str, Any]]:
    """Up to 40 events over 0..60, mostly As, in an arrival order that keeps the
    assumption of section 2.2 (sorted by a key inside each interval)."""
    events = []
    for i in range(draw(st.integers(1, 40))):
        lower = draw(st.integers(0, 60))
        upper = lower + draw(st.integers(0, 2))
        kind = draw(st.sampled_from("AAAABBC"))
        key = draw(st.integers(lower, upper))
        events.append(({"type": kind, "id": i, "lower": lower, "upper": upper, "x": i % 3}, key))
    return [e for e, _ in sorted(events, key=lambda item: item[1])]


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from(
        (
            "PATTERN SEQ(A a, B b, C c) WITHIN 6",
            "PATTERN SEQ(A a, C c, B b) WITHIN 5",
            "PATTERN SEQ(C c, A a, B b) WHERE a.x = b.x WITHIN 7",
            "PATTERN SEQ(A a, A b, C c) WITHIN 6",
        )
    ),
    _long_streams(),
    st.sampled_from(STRATEGIES),
)
def test_selectivity_order_equals_the_any_state_method_on_long_skewed_streams(
    text: str, events: list[dict[str, Any]], strategy: str
) -> None:
    """Streams too long for the possible-worlds oracle, pushed one event at a time:
    selectivity order (buffers held back, drops, pruning against the held-back events)
    gives the results of the any-state method, which the oracle tests cover."""
    got = {}
    for method in ("any", "selectivity"):
        q = kleene.compile(
            text, time="interval", strategy=strategy, exact=True, u_max=2, method=method
        )
        m = q.matcher()
        found = [r for e in events for r in m.push([e])] + m.flush()
        got[method] = sorted(
            (repr(sorted(r.ids().items())), r.start, r.end, r.confidence) for r in found
        )
    assert got["selectivity"] == got["any"]


def test_a_spoiler_is_kept_while_a_held_back_event_can_still_complete_a_signature() -> None:
    """Skip till next match: b's only partner c14 [1, 3] is presented late (selectivity
    order holds it until a rarer event or the end), long after t_emit passed c9 [0, 2],
    which can fall between b and c14. The arrived events a spoiler can come from are
    kept back to the earliest event not yet presented, not to t_emit: without that,
    (a, b, c14) would lose c9's factor (1/3 instead of the worlds' 5/18)."""
    events = [
        {"type": "A", "id": "a1", "lower": 0, "upper": 0},
        {"type": "C", "id": "c9", "lower": 0, "upper": 2},
        {"type": "A", "id": "a2", "lower": 0, "upper": 0},
        {"type": "B", "id": "b", "lower": 0, "upper": 1},
        {"type": "C", "id": "c14", "lower": 1, "upper": 3},
        {"type": "A", "id": "a0", "lower": 20, "upper": 20},
    ]
    text = "PATTERN SEQ(A a, B b, C c) WITHIN 6"
    want = sorted(expected(text, events, "skip_till_next_match"), key=_key)
    assert {"a": ("a1",), "b": ("b",), "c": ("c14",)} in [w[0] for w in want]
    for method in METHODS:
        assert run_events(text, events, "skip_till_next_match", method, True) == want


@settings(max_examples=30, deadline=None)
@given(
    st.sampled_from(("PATTERN SEQ(A a, B b, C c) WITHIN 6", "PATTERN SEQ(A a, A b, C c) WITHIN 6")),
    _long_streams(),
)
def test_the_ttl_floor_scan_equals_the_earliest_partnered_event(
    text: str, events: list[dict[str, Any]]
) -> None:
    """The time-to-live floor stops at the first waiting event before t_emit that has a
    rare partner and consults the live runs at most once (for the rarest component
    only): it must equal the earliest
    lower bound among every partnered waiting event (capped by t_emit)."""
    admission, framework = _framework(text, "selectivity")
    order = framework.order
    assert isinstance(order, SelectivityOrder)
    calls = []

    def alive(k: int) -> Any:
        calls.append(k)
        return framework._alive(k)

    for e in events:
        framework.push(admission.admit([e]), admission.now_lower)
        if admission.now_lower is None:
            continue
        t_emit = admission.now_lower - framework.u_max
        calls.clear()
        floor = order.ttl_floor(t_emit, alive)
        assert len(calls) <= 1
        full = order._partnered(framework._alive)
        assert floor == min([t_emit, *(x.lower for x, _ in full)])


def _created(text: str, method: str, reach: bool) -> tuple[list[Any], int]:
    """The results on the skewed stream and the runs created, with or without the check
    that refuses a run no event still to come can extend (``reach``)."""
    admission, framework = _framework(text, method)
    if not reach:
        framework._later = lambda presented, t_emit: [None] * len(presented)  # type: ignore[method-assign]
    take = framework._take
    created = 0

    def counted(*args: Any) -> Any:
        nonlocal created
        new = take(*args)
        created += new is not None
        return new

    framework._take = counted  # type: ignore[method-assign]
    found, events = [], _skewed()
    for k in range(0, len(events), 10):  # in chunks, as the bench pushes
        found += framework.push(admission.admit(events[k : k + 10]), admission.now_lower)
    return _ids(found + framework.flush()), created


@pytest.mark.parametrize("method", METHODS)
def test_runs_no_event_still_to_come_can_extend_are_never_created(method: str) -> None:
    """Appendix C.2's time-to-live rule applied at a run's birth: a run whose smallest
    valid upper bound plus W is before every event still to come for the components it
    misses (later in the push, held back by the order, or unseen) would be pruned at the
    end of the push unextended, so it is not created. Same results; selectivity order,
    which presents the frequent As and Bs after the rare C they can precede (so their
    runs waiting for another C are often out of reach when a push covers several
    instants), creates fewer runs."""
    text = "PATTERN SEQ(A a, B b, C c) WITHIN 30"
    found, created = _created(text, method, reach=True)
    plain, before = _created(text, method, reach=False)
    assert found == plain and found
    assert created <= before
    if method == "selectivity":
        assert created < before
