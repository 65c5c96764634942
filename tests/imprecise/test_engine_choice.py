"""engine="points"|"events"|"auto" for interval queries (kleene.imprecise.choice), and
the run pruning of the event-based framework (VLDB 2010, Appendix C.2)."""

from __future__ import annotations

import pytest

import kleene
from kleene.imprecise.admission import Admission
from kleene.imprecise.events import EventFramework

ANY = "skip_till_any_match"
NEXT = "skip_till_next_match"


def test_auto_picks_by_length_u_max_and_strategy() -> None:
    def engine(text: str, **options: object) -> str:
        return kleene.compile(text, time="interval", **options).engine

    assert engine("PATTERN SEQ(A a, B b)", strategy=ANY) == "events"
    assert engine("PATTERN SEQ(A a, B b)", strategy=ANY, u_max=1) == "events"
    assert engine("PATTERN SEQ(A a, B b)", strategy=NEXT, u_max=2) == "points"
    assert engine("PATTERN SEQ(A a, B b)", strategy=NEXT, u_max=3) == "events"
    assert engine("PATTERN SEQ(A a, B b)", strategy=ANY, u_max=0) == "points"
    assert engine("PATTERN SEQ(A a)", strategy=ANY, u_max=9) == "points"
    assert engine("PATTERN SEQ(A a, B b)", engine="points", u_max=9) == "points"
    assert engine("PATTERN SEQ(A a)", engine="events") == "events"


def test_explain_says_which_framework_method_and_why() -> None:
    q = kleene.compile("PATTERN SEQ(A a, B b)", time="interval", strategy=ANY, u_max=4)
    assert "query-order method with sorting" in q.explain()
    assert "U_max = 4, pattern length 2" in q.explain()
    q = kleene.compile("PATTERN SEQ(A a, A b)", time="interval", engine="events")
    assert "query-order method" in q.explain() and "once per component" in q.explain()
    q = kleene.compile("PATTERN SEQ(A a, A b)", time="interval", method="any")
    assert "any-state method" in q.explain() and "asked for" in q.explain()
    q = kleene.compile("PATTERN SEQ(A a, B b)", time="interval", method="selectivity")
    text = q.explain()
    assert "engine: events" in text and "selectivity order" in text
    assert "number of events that matched it over the stream seen so far" in text
    q = kleene.compile("PATTERN SEQ(A a, B b)", time="interval", strategy=NEXT, u_max=1)
    assert "engine: points" in q.explain() and "NELT" in q.explain()


def test_unknown_engine_or_method_is_a_query_error() -> None:
    with pytest.raises(kleene.QueryError, match="expected one of: auto, points, events"):
        kleene.compile("PATTERN SEQ(A a, B b)", time="interval", engine="nfa")
    with pytest.raises(kleene.QueryError, match="expected one of: auto, any, query, selectivity"):
        kleene.compile("PATTERN SEQ(A a, B b)", time="interval", method="sorted")


def test_auto_with_measured_u_max_zero_runs_points_and_agrees() -> None:
    events = [
        {"type": "A", "id": 1, "lower": 1, "upper": 1},
        {"type": "B", "id": 2, "lower": 2, "upper": 2},
    ]
    for engine in ("auto", "events", "points"):
        q = kleene.compile("PATTERN SEQ(A a, B b)", time="interval", engine=engine)
        (m,) = q.run(events)
        assert (m.start, m.end, m.confidence) == (1, 2, 1.0)


def _runs_after(text: str, events: list[dict[str, object]], method: str) -> int:
    q = kleene.compile(text, time="interval", strategy=ANY, exact=True, u_max=2)
    admission = Admission(q.plan, q.fields, q.interval)
    framework = EventFramework(q.plan, q.window, 2, q.keep, method)
    most = 0
    for e in events:
        framework.push(admission.admit([e]), admission.now_lower)
        most = max(most, len(framework.runs))
    return most


def test_time_to_live_prunes_runs_past_the_window() -> None:
    """Without the first rule the runs of every A would stay: 200 of them."""
    events = [{"type": "A", "id": i, "lower": i, "upper": i + 2} for i in range(200)]
    assert _runs_after("PATTERN SEQ(A a, B b) WITHIN 3", events, "any") <= 8
    assert _runs_after("PATTERN SEQ(A a, B b) WITHIN 3", events, "query") <= 8


def test_runs_missing_a_predecessor_are_pruned() -> None:
    """Only Bs, no window: a run (-, b) can never get its A once b.upper < t_emit."""
    events = [{"type": "B", "id": i, "lower": i, "upper": i + 2} for i in range(200)]
    assert _runs_after("PATTERN SEQ(A a, B b)", events, "any") <= 8
