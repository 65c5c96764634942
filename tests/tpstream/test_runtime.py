"""The TPStream runtime around the situation matcher: admission, partitions, RETURN,
times, input forms and snapshots. A naive scanning matcher (tests/tpstream/reference.py)
stands in for kleene.tpstream.matcher here, so these tests hold the runtime alone."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.errors import SnapshotError
from kleene.oracle import tpstream as oracle
from kleene.tpstream.query import TemporalQuery
from kleene.tpstream.runtime import TemporalMatcher
from tests.tpstream.reference import ScanMatcher
from tests.tpstream.streams import closed, events, queries

DRIVERS = """FROM CarSensors CS PARTITION BY CS.car_id
DEFINE A AS CS.accel > 8 AT LEAST 2,
       B AS CS.speed > 70 BETWEEN 4 AND 30,
       C AS CS.accel < -9 AT LEAST 2
PATTERN A meets B; A overlaps B; A starts B; A during B
        AND C during B; B finishes C; B overlaps C; B meets C
        AND A before C
WITHIN 300
RETURN first(B.car_id) AS id, avg(B.speed) AS avg_speed, duration(B) AS b_length"""

# car 1 accelerates over [1, 4), speeds over [2, 8), brakes hard over [6, 9): A overlaps
# B, B overlaps C, A before C. Car 2 speeds but never accelerates hard.
SPEED = [60, 65, 72, 80, 85, 86, 84, 75, 68, 60]
ACCEL = [0, 9, 9, 9, 2, 0, -10, -10, -10, 0]


def drive(car: int, speed: list[int], accel: list[int]) -> list[dict[str, Any]]:
    return [
        {"type": "CarSensors", "timestamp": t, "car_id": car, "speed": s, "accel": a}
        for t, (s, a) in enumerate(zip(speed, accel, strict=True))
    ]


def cars() -> list[dict[str, Any]]:
    one, two = drive(1, SPEED, ACCEL), drive(2, SPEED, [0] * 10)
    return [e for pair in zip(one, two, strict=True) for e in pair]


def scanning(query: TemporalQuery, state: bytes | None = None) -> TemporalMatcher:
    return TemporalMatcher(
        query.plan,
        query.fields,
        time_unit=query.time_unit,
        make_matcher=ScanMatcher,
        fingerprint=query.fingerprint(),
        state=state,
    )


def run(query: TemporalQuery, stream: Any) -> list[Any]:
    m = scanning(query)
    return m.push(stream) + m.flush()


def shape(found: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(
        (m.partition, tuple((k, s.start, s.end) for k, s in sorted(m.situations.items())), m.time)
        for m in found
    )


def test_the_aggressive_driver() -> None:
    (m,) = run(TemporalQuery(DRIVERS), cars())
    assert m.partition == (1,)
    assert {k: (s.start, s.end) for k, s in m.situations.items()} == {
        "A": (1, 4),
        "B": (2, 8),
        "C": (6, 9),
    }
    assert m.time == 9
    assert m.returned == {"id": 1, "avg_speed": sum(SPEED[2:8]) / 6, "b_length": 6}


def test_input_forms_agree() -> None:
    query = TemporalQuery(DRIVERS)
    rows = cars()
    expected = shape(run(query, rows))
    assert expected
    assert shape(run(query, pa.Table.from_pylist(rows))) == expected
    assert shape(run(query, pd.DataFrame(rows))) == expected


def test_datetimes_stay_datetimes_and_lengths_take_units() -> None:
    text = DRIVERS.replace("AT LEAST 2", "AT LEAST 2 s").replace("WITHIN 300", "WITHIN 5 min")
    start = dt.datetime(2026, 1, 1, 12, 0)
    rows = [
        dict(e, timestamp=start + dt.timedelta(seconds=e["timestamp"]))
        for e in drive(1, SPEED, ACCEL)
    ]
    (m,) = run(TemporalQuery(text), rows)
    assert m.situations["B"].start == start + dt.timedelta(seconds=2)
    assert m.time == start + dt.timedelta(seconds=9)
    assert m.returned["b_length"] == 6.0
    # numbers with lengths in seconds: one timestamp unit is a millisecond here
    ms = [dict(e, timestamp=e["timestamp"] * 1000) for e in drive(1, SPEED, ACCEL)]
    text_ms = text.replace("BETWEEN 4 AND 30", "BETWEEN 4 s AND 30 s")
    (m,) = run(TemporalQuery(text_ms, time_unit="ms"), ms)
    assert (m.situations["C"].start, m.situations["C"].end) == (6000, 9000)


def test_bad_events_are_rejected_with_their_reason() -> None:
    rows = drive(1, SPEED, ACCEL)
    rows[3] = dict(rows[3], speed=None)
    rows[5] = dict(rows[5], speed="fast")
    rows.insert(7, dict(rows[6], timestamp=2))  # late within car 1's partition
    rows.insert(8, dict(rows[6]))  # time 6 again
    rows.insert(9, dict(rows[6], type="Weather", speed="x"))  # another stream: passed over
    rows.insert(10, dict(rows[6], timestamp="noon"))
    m = scanning(TemporalQuery(DRIVERS))
    m.push(rows)
    reasons = {r.position: r.reason for r in m.take_rejected()}
    assert reasons[3] == "missing attribute 'speed' for event type 'CarSensors'"
    assert reasons[5] == "attribute 'speed' of 'CarSensors' is a string ('fast'), expected a number"
    assert reasons[7].startswith("late event: time 2 is before")
    assert reasons[8].startswith("duplicate time 6 in its partition")
    assert "noon" in reasons[10]
    assert set(reasons) == {3, 5, 7, 8, 10}
    # an event of another partition may come earlier than car 1's latest
    m.push({"type": "CarSensors", "timestamp": 0, "car_id": 3, "speed": 0, "accel": 0})
    assert m.take_rejected() == []


@settings(max_examples=40, deadline=None)
@given(queries(max_symbols=3), events(), st.integers(0, 30))
def test_a_snapshot_resumes_where_it_was_taken(
    text: str, stream: list[dict[str, Any]], cut: int
) -> None:
    query = TemporalQuery(text)
    whole = run(query, stream)
    first = scanning(query)
    found = first.push(stream[:cut])
    second = scanning(query, first.snapshot())
    found += second.push(stream[cut:]) + second.flush()
    assert shape(found) == shape(whole)
    assert [m.returned for m in found] == [m.returned for m in whole]


def test_a_snapshot_of_another_query_or_damaged_is_refused() -> None:
    m = scanning(TemporalQuery(DRIVERS))
    m.push(cars()[:5])
    data = m.snapshot()
    with pytest.raises(SnapshotError, match="another query"):
        scanning(TemporalQuery(DRIVERS.replace("300", "301")), data)
    with pytest.raises(SnapshotError, match="corrupt"):
        scanning(TemporalQuery(DRIVERS), data[:-1] + bytes([data[-1] ^ 1]))


@settings(max_examples=80, deadline=None)
@given(queries(), events())
def test_runtime_equals_the_oracle(text: str, stream: list[dict[str, Any]]) -> None:
    """Whole situations, the cross product filtered by Definitions 11-12, RETURN."""
    stream = closed(stream)
    query, expected = oracle.matches(text, stream)
    found = run(TemporalQuery(text), stream)
    assert shape(found) == sorted(
        (m.key, tuple((k, s.start, s.end) for k, s in sorted(m.situations.items())), m.time)
        for m in expected
    )
    by_identity = {(m.key, tuple(s.start for s in m.situations.values())): m for m in expected}
    for m in found:
        twin = by_identity[(m.partition, tuple(s.start for s in m.situations.values()))]
        assert m.returned == twin.returned(query)


@settings(max_examples=30, deadline=None)
@given(queries(max_symbols=3), events(), st.integers(0, 30))
def test_a_rejected_event_changes_nothing(text: str, stream: list[dict[str, Any]], at: int) -> None:
    """A batch with a bad event is admitted event by event, a clean one column-wise:
    both give the same matches."""
    query = TemporalQuery(text)
    bad = {"timestamp": 0, "k": 0}  # no x, no y: every query reads one
    found = query.run_detailed([*stream[:at], bad, *stream[at:]])
    assert [r.position for r in found.rejected] == [min(at, len(stream))]
    assert shape(found.matches) == shape(query.run(stream))
