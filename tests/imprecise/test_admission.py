"""Admission of interval events (VLDB 2010, section 2.2): every bad event is rejected
with its reason, never dropped."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pyarrow as pa
import pytest

import kleene
from kleene.imprecise import IntervalQuery

QUERY = "PATTERN SEQ(A a, B b) WHERE a.x = 1"


def run(events: Any, **options: Any) -> tuple[list[Any], list[kleene.RejectedEvent]]:
    q: IntervalQuery = kleene.compile(QUERY, time="interval", exact=True, **options)
    result = q.run_detailed(events)
    return result.matches, result.rejected


def reasons(events: Any, **options: Any) -> dict[Any, str]:
    return {r.id: r.reason for r in run(events, **options)[1]}


def test_each_bad_interval_is_rejected_with_its_reason() -> None:
    events = [
        {"type": "A", "id": 1, "lower": 5, "upper": 3, "x": 1},
        {"type": "A", "id": 2, "lower": 1.5, "upper": 3, "x": 1},
        {"type": "A", "id": 3, "upper": 3, "x": 1},
        {"type": "A", "id": 4, "lower": "1", "upper": 3, "x": 1},
        {"type": "A", "id": 5, "lower": 1, "upper": 2, "x": 1, "pmf": [0.5]},
        {"type": "A", "id": 6, "lower": 1, "upper": 2, "x": 1, "pmf": [1.5, -0.5]},
        {"type": "A", "id": 7, "lower": 1, "upper": 2, "x": 1, "pmf": [0.5, 0.25]},
        {"type": "A", "id": 8, "lower": 1, "upper": 2, "x": 1, "pmf": "0.5 0.5"},
        {"type": "A", "id": 9, "lower": 1, "upper": 2},
    ]
    got = reasons(events)
    assert got == {
        1: "lower bound 5 is after upper bound 3",
        2: "'lower' is 1.5, not a whole number (time is discrete)",
        3: "missing 'lower'",
        4: "'lower' is '1', not a whole number (time is discrete)",
        5: "'pmf' has 1 probabilities for 2 points",
        6: "'pmf' holds the negative probability -0.5",
        7: "the probabilities in 'pmf' sum to 0.75, not 1",
        8: "'pmf' must be a list of probabilities, not '0.5 0.5'",
        9: "missing attribute 'x' for event type 'A'",
    }


def test_arrival_order_violation_is_rejected() -> None:
    """e2 lies wholly before e1, seen earlier: section 2.2 excludes this order."""
    events = [
        {"type": "A", "id": "e1", "lower": 5, "upper": 6, "x": 1},
        {"type": "B", "id": "e2", "lower": 1, "upper": 4},
        {"type": "B", "id": "e3", "lower": 2, "upper": 5},  # overlaps e1: fine
    ]
    matches, rejected = run(events)
    assert [r.id for r in rejected] == ["e2"]
    assert rejected[0].reason.startswith("out of order: its interval [1, 4] ends before the")
    assert rejected[0].position == 1 and rejected[0].record["lower"] == 1
    assert matches == []  # e3 ends at 5, where e1 starts: no b after a


def test_a_rejected_event_does_not_move_the_order_bound() -> None:
    events = [
        {"type": "A", "id": "bad", "lower": 9, "upper": 3, "x": 1},
        {"type": "A", "id": "a", "lower": 1, "upper": 2, "x": 1},
        {"type": "B", "id": "b", "lower": 3, "upper": 3},
    ]
    matches, rejected = run(events)
    assert [r.id for r in rejected] == ["bad"]
    assert [(m.ids(), m.confidence) for m in matches] == [({"a": ("a",), "b": ("b",)}, 1)]


def test_duplicate_ids_and_declared_u_max() -> None:
    events = [
        {"type": "A", "id": 1, "lower": 1, "upper": 2, "x": 1},
        {"type": "A", "id": 1, "lower": 1, "upper": 2, "x": 1},
        {"type": "B", "id": 2, "lower": 1, "upper": 9},
        {"type": "B", "id": [3], "lower": 1, "upper": 2},
    ]
    got = [(r.id, r.reason) for r in run(events, u_max=3)[1]]
    assert got == [
        (1, "duplicate event id 1: every event needs its own id"),
        (2, "interval [1, 9] is longer than u_max = 3 (upper - lower = 8)"),
        ([3], "event id [3] is not a number or a string"),
    ]


def test_timestamp_with_symmetric_or_asymmetric_uncertainty() -> None:
    events = [
        {"type": "A", "id": "a", "timestamp": 10, "x": 1},
        {"type": "B", "id": "b", "timestamp": 11},
    ]
    # [9, 11] and [10, 12]: pairs a < b out of 3 x 3 = 6
    (m,) = run(events, uncertainty=1)[0]
    assert (m.start, m.end, m.confidence) == (9, 12, Fraction(6, 9))
    # [10, 12] and [11, 13]: pairs out of 9 = 6 as well, the range shifts
    (m,) = run(events, uncertainty=(0, 2))[0]
    assert (m.start, m.end, m.confidence) == (10, 13, Fraction(6, 9))


def test_explicit_probabilities_and_point_events() -> None:
    events = [
        {"type": "A", "id": "a", "lower": 1, "upper": 2, "x": 1, "pmf": [0.25, 0.75]},
        {"type": "B", "id": "b", "lower": 2, "upper": 2},  # a point event
    ]
    (m,) = run(events)[0]
    assert m.confidence == 0.25 and (m.start, m.end) == (1, 2)


def test_columnar_input_is_read_through_the_shared_readers() -> None:
    table = pa.table(
        {
            "type": ["A", "B", "B"],
            "id": [1, 2, 3],
            "lower": [1, 2, 4],
            "upper": [3, 2, 1],
            "x": [1, None, None],
        }
    )
    matches, rejected = run(table)
    assert [r.reason for r in rejected] == ["lower bound 4 is after upper bound 1"]
    assert [(m.ids(), m.confidence) for m in matches] == [({"a": (1,), "b": (2,)}, Fraction(1, 3))]


def test_nothing_is_dropped() -> None:
    """Bad events are rejected whatever their type: the A events lack x, the C events
    (a type the query does not read) have lower > upper; the B events are fine."""
    events = [
        {"type": t, "id": i, "lower": i, "upper": i + 1 - (i % 3)}
        for i, t in enumerate("ABCABCABC")
    ]
    q = kleene.compile(QUERY, time="interval")
    with pytest.warns(kleene.RejectedEventsWarning, match="6 events rejected"):
        q.run(events)
    rejected = q.run_detailed(events).rejected
    assert [r.id for r in rejected] == [0, 2, 3, 5, 6, 8]
