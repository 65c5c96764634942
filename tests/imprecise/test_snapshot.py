"""Snapshots of the interval matcher: a matcher resumed mid-stream finds exactly what an
uninterrupted one finds (and what the possible worlds give); damaged, crafted or foreign
snapshots are refused with a SnapshotError that says what to do."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

import kleene
from kleene.errors import SnapshotError
from kleene.imprecise import state
from kleene.imprecise.admission import Admission
from kleene.imprecise.events import EventFramework
from kleene.imprecise.framework import PointFramework
from kleene.imprecise.kleene_dp import KleeneFramework
from kleene.lang import ast, parse
from kleene.oracle.imprecise import evaluate_worlds
from kleene.runtime import snapshot
from tests.fuzz.test_snapshot_fuzz import _mutate, damaged, mutation
from tests.imprecise.streams import interval_queries, interval_streams
from tests.imprecise.test_kleene_vs_worlds import kleene_queries

STRATEGIES = ("skip_till_any_match", "skip_till_next_match")


def rows(found: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (sorted(m.ids().items()), m.start, m.end, m.confidence, sorted(m.values().items()))
        for m in found
    )


def worlds(text: str, events: list[dict[str, Any]], strategy: str) -> list[tuple[Any, ...]]:
    found = evaluate_worlds(parse(text), events, strategy=ast.Strategy(strategy))
    return sorted(
        (sorted(r.ids.items()), r.start, r.end, r.confidence, sorted(r.values.items()))
        for r in found
    )


def resumed(q: Any, events: list[dict[str, Any]], cut: int) -> tuple[list[Any], list[Any]]:
    """Results and rejected events of a matcher fed ``events[:cut]``, snapshotted, then
    resumed (twice over: a resumed matcher's snapshot resumes as well) for the rest."""
    m = q.matcher()
    found = m.push(events[:cut])
    m = q.matcher(state=q.matcher(state=m.snapshot()).snapshot())
    found += m.push(events[cut:]) + m.flush()
    return found, m.take_rejected()


#: (engine, method): the point-based framework and each method of the event-based one
ENGINES = (("points", "auto"), ("events", "query"), ("events", "any"), ("events", "selectivity"))


@settings(max_examples=120, deadline=None)
@given(
    interval_queries(),
    interval_streams(max_events=6),
    st.sampled_from(STRATEGIES),
    st.sampled_from(ENGINES),
    st.sampled_from((2, None)),
    st.integers(0, 6),
)
def test_a_resumed_matcher_finds_what_an_uninterrupted_one_finds(
    text: str,
    events: list[dict[str, Any]],
    strategy: str,
    engine: tuple[str, str],
    u_max: int | None,
    cut: int,
) -> None:
    """U_max declared (results leave as they become final, the framework's runs, buffers
    and NELTs are live at the cut) or measured (events held until flush)."""
    q = kleene.compile(
        text,
        time="interval",
        strategy=strategy,
        engine=engine[0],
        method=engine[1],
        u_max=u_max,
        exact=True,
    )
    found, _ = resumed(q, events, cut)
    assert rows(found) == rows(q.run(events)) == worlds(text, events, strategy)


@settings(max_examples=60, deadline=None)
@given(kleene_queries(), interval_streams(max_events=5, types=("A", "B")), st.integers(0, 5))
def test_a_resumed_kleene_matcher_finds_what_an_uninterrupted_one_finds(
    text: str, events: list[dict[str, Any]], cut: int
) -> None:
    q = kleene.compile(text, time="interval", strategy=STRATEGIES[0], exact=True, u_max=2)
    found, _ = resumed(q, events, cut)
    assert rows(found) == rows(q.run(events)) == worlds(text, events, STRATEGIES[0])


def test_rejected_events_and_admission_survive_a_snapshot() -> None:
    """After the cut: a duplicate of an id seen before, an event wholly before a lower
    bound seen before (arrival order, section 2.2), and a rejected event not yet taken
    come out of the resumed matcher."""
    q = kleene.compile("PATTERN SEQ(A a, B b) WITHIN 5", time="interval", u_max=3)
    m = q.matcher()
    m.push([{"type": "A", "id": 1, "lower": 4, "upper": 6}, {"type": "A", "id": 9}])
    r = q.matcher(state=m.snapshot())
    r.push([{"type": "B", "id": 1, "lower": 7, "upper": 7}])
    r.push([{"type": "B", "id": 2, "lower": 1, "upper": 2}])
    reasons = [x.reason for x in r.take_rejected()]
    assert len(reasons) == 3
    assert "lower" in reasons[0]
    assert "duplicate event id 1" in reasons[1]
    assert "out of order" in reasons[2]


def test_a_snapshot_of_another_query_or_options_is_refused() -> None:
    text = "PATTERN SEQ(A a, B b) WITHIN 5"
    m = kleene.compile(text, time="interval", u_max=3).matcher()
    m.push([{"type": "A", "id": 1, "lower": 4, "upper": 6}])
    data = m.snapshot()
    for other in (
        kleene.compile(text + " CONFIDENCE > 0.5", time="interval", u_max=3),
        kleene.compile(text, time="interval", u_max=4),
        kleene.compile(text, time="interval", u_max=3, engine="points"),
        kleene.compile(text, time="interval", u_max=3, lower_field="lo"),
    ):
        with pytest.raises(SnapshotError, match=r"another query .* resume it with the query"):
            other.matcher(state=data)
    with pytest.raises(SnapshotError, match=r"interval events, not from a SASE\+ query;"):
        kleene.compile(text).matcher(state=data)
    point = kleene.compile(text).matcher().snapshot()
    with pytest.raises(SnapshotError, match=r"from a SASE\+ query, not from a query over interval"):
        kleene.compile(text, time="interval", u_max=3).matcher(state=point)


def test_a_heartbeat_survives_a_snapshot() -> None:
    """The promise of a heartbeat (no event starts before it) holds after a resume: an
    event breaking it is rejected by the resumed matcher as by the uninterrupted one."""
    q = kleene.compile("PATTERN SEQ(A a, B b) WITHIN 5", time="interval", u_max=3)
    m = q.matcher()
    m.push([{"type": "A", "id": 1, "lower": 4, "upper": 6}])
    m.heartbeat(10)
    r = q.matcher(state=m.snapshot())
    late = [{"type": "B", "id": 2, "lower": 8, "upper": 9}]
    m.push(late)
    r.push(late)
    expected = m.take_rejected()
    assert len(expected) == 1 and "heartbeat 10" in expected[0].reason
    assert [x.reason for x in r.take_rejected()] == [expected[0].reason]


def test_every_mutable_part_of_a_framework_is_saved() -> None:
    """Each framework object's attributes are those kleene.imprecise.state saves and
    those it rebuilds from the query (a new attribute must be classified there, or it
    would be lost on resume); the rebuilt ones do not change while events run."""
    q = kleene.compile("PATTERN SEQ(A a, B b) WHERE a.x = b.x WITHIN 4", time="interval")
    k = kleene.compile("PATTERN SEQ(A+ a[], B b)", time="interval", strategy=STRATEGIES[0])
    points = PointFramework(q.plan, q.window, 2, q.keep)
    by_events = EventFramework(q.plan, q.window, 2, q.keep, "query")
    by_selectivity = EventFramework(q.plan, q.window, 2, q.keep, "selectivity")
    kleene_fw = KleeneFramework(k.plan, k.window, k.keep)
    objects = [
        *(points, points.expansion, points.matching, points.collapser),
        *(by_events, by_events.order, by_events.collapser, kleene_fw),
        *(by_selectivity, by_selectivity.order),
    ]
    assert {type(o) for o in objects} == set(state.SAVED) == set(state.REBUILT)
    before = [{n: repr(v) for n, v in vars(o).items()} for o in objects]
    events = [
        {"type": "A", "id": 1, "lower": 0, "upper": 2, "x": 1},
        {"type": "B", "id": 2, "lower": 1, "upper": 3, "x": 1},
        {"type": "B", "id": 3, "lower": 9, "upper": 9, "x": 1},
    ]
    for fw in (points, by_events, by_selectivity, kleene_fw):
        admission = Admission(fw.plan if hasattr(fw, "plan") else q.plan, q.fields, q.interval)
        fw.push(admission.admit(events), admission.now_lower)
    for o, seen in zip(objects, before, strict=True):
        saved, rebuilt = set(state.SAVED[type(o)]), set(state.REBUILT[type(o)])
        assert set(vars(o)) == saved | rebuilt and not saved & rebuilt
        assert all(repr(getattr(o, n)) == seen[n] for n in rebuilt)


# --- the loader under fuzz ----------------------------------------------------------------

POOL = [None, True, -1, 0, 3, 2**40, 1.5, "x", "A", (), [], {}, (0,), [0], {0: 0}, (0, 1)]


def _setup(text: str, events: list[dict[str, Any]], engine: str, cut: int) -> tuple[Any, Any]:
    q = kleene.compile(text, time="interval", engine=engine, u_max=2, exact=True)
    m = q.matcher()
    m.push(events[:cut])
    return q, m


@settings(max_examples=100, deadline=None)
@given(
    interval_queries(),
    interval_streams(max_events=5),
    st.sampled_from(("points", "events")),
    st.integers(0, 5),
    st.lists(mutation, min_size=1, max_size=3),
)
def test_damaged_bytes_are_refused_or_resume_identically(
    text: str, events: list[dict[str, Any]], engine: str, cut: int, mutations: list[Any]
) -> None:
    q, m = _setup(text, events, engine, cut)
    data = damaged(m.snapshot(), mutations)
    note(repr(mutations))
    try:
        r = q.matcher(state=data)
    except SnapshotError:
        return
    expected = q.matcher(state=m.snapshot())
    rest = events[cut:]
    assert rows(r.push(rest) + r.flush()) == rows(expected.push(rest) + expected.flush())


@settings(max_examples=200, deadline=None)
@given(
    interval_queries(),
    interval_streams(max_events=5),
    st.sampled_from(("points", "events")),
    st.integers(1, 5),
    st.integers(0, 10**6),
    st.integers(0, 2),
    st.sampled_from(POOL),
)
def test_crafted_state_trees_are_refused_on_load_or_run(
    text: str,
    events: list[dict[str, Any]],
    engine: str,
    cut: int,
    pick: int,
    kind: int,
    value: Any,
) -> None:
    """A changed tree, framed with a valid header and checksum: refused with a
    SnapshotError, or loaded into a matcher that runs on to the end."""
    q, m = _setup(text, events, engine, cut)
    tree = snapshot.unseal(m.snapshot(), snapshot.INTERVAL, q.fingerprint)
    tree = _mutate(tree, pick, kind, value)
    note(repr(tree))
    data = snapshot.seal(snapshot.INTERVAL, q.fingerprint, tree)
    with contextlib.suppress(SnapshotError):
        r = q.matcher(state=data)
        r.push(events[cut:])
        r.flush()
