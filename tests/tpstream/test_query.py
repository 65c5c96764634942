"""TemporalQuery end to end (deriver, kleene.tpstream.matcher, RETURN) against the
oracle, with and without low latency; the worked example of docs/semantics.md."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.errors import RejectedEventsWarning, SnapshotError
from kleene.oracle import tpstream as oracle
from kleene.tpstream.model import TemporalMatch
from kleene.tpstream.query import TemporalQuery
from tests.tpstream.streams import closed, events, queries
from tests.tpstream.test_runtime import DRIVERS, SPEED, cars


def identity(m: TemporalMatch | oracle.OracleMatch) -> tuple[Any, ...]:
    """A match's partition and situation starts (the oracle's match names the
    partition ``key``)."""
    partition = m.partition if isinstance(m, TemporalMatch) else m.key
    return (partition, tuple(sorted((k, s.start) for k, s in m.situations.items())))


def test_the_aggressive_driver_is_detected_at_8() -> None:
    """docs/semantics.md's worked example: A overlaps B is known at 4, A before C at
    C's deferred start 8, B overlaps C at B's end 8 (B, bounded by a maximum, is seen
    only then); C is still braking at 8 and ends at 9."""
    (m,) = kleene.compile(DRIVERS).run(cars())
    assert m.detected == 8
    assert {k: (s.start, s.end) for k, s in m.situations.items()} == {
        "A": (1, 4),
        "B": (2, 8),
        "C": (6, None),
    }
    assert m.returned == {"id": 1, "avg_speed": sum(SPEED[2:8]) / 6, "b_length": 6}
    (late,) = TemporalQuery(DRIVERS, low_latency=False).run(cars())
    assert late.detected == late.time == 9
    assert late.situations["C"].end == 9


def test_a_match_reported_early_stays_reported_when_the_input_ends() -> None:
    """A meets B is certain at B's start; the input ends with B still going on, so B
    is no derived situation (Definition 7), yet the match reported at 2 stands."""
    text = "FROM S DEFINE A AS S.x = 0, B AS S.x = 1 PATTERN A meets B WITHIN 4"
    stream = [{"timestamp": 1, "x": 0}, {"timestamp": 2, "x": 1}]
    (m,) = TemporalQuery(text).run(stream)
    assert (m.detected, m.situations["B"].end) == (2, None)
    assert TemporalQuery(text, low_latency=False).run(stream) == []
    assert oracle.matches(text, stream)[1] == []


def test_run_warns_of_rejected_events() -> None:
    rows = cars()
    rows[4] = dict(rows[4], speed=None)
    with pytest.warns(RejectedEventsWarning, match="1 event rejected"):
        TemporalQuery(DRIVERS).run(rows)
    result = TemporalQuery(DRIVERS).run_detailed(rows)
    assert [r.position for r in result.rejected] == [4]


def test_explain_shows_the_definitions_and_the_pattern() -> None:
    text = TemporalQuery(DRIVERS).explain()
    assert "A: CS.accel > 8 [AT LEAST 2]" in text
    assert "B: CS.speed > 70 [AT LEAST 4, AT MOST 30]; keeps first(car_id), avg(speed)" in text
    assert "C during B; B finishes C; B overlaps C; B meets C" in text


def test_matcher_snapshots_resume() -> None:
    q = TemporalQuery(DRIVERS)
    rows = cars()
    first = q.matcher()
    found = first.push(rows[:13])
    second = q.matcher(state=first.snapshot())
    found += second.push(rows[13:]) + second.flush()
    assert [identity(m) for m in found] == [identity(m) for m in q.run(rows)]
    with pytest.raises(SnapshotError):
        TemporalQuery(DRIVERS, low_latency=False).matcher(state=first.snapshot())


def check_against_oracle(
    text: str, stream: list[dict[str, Any]], low_latency: bool, order: Any = None
) -> None:
    query, expected = oracle.matches(text, stream)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no event of these streams is rejected
        found = TemporalQuery(text, low_latency=low_latency, order=order).run(stream)
    twins = {identity(m): m for m in expected}
    assert sorted(identity(m) for m in found) == sorted(twins)
    for m in found:
        twin = twins[identity(m)]
        assert m.detected <= twin.time
        for symbol, s in m.situations.items():
            whole = twin.situations[symbol]
            assert s.end == whole.end if s.end is not None else whole.end > m.detected
            assert (s.first, s.key) == (whole.positions[0], m.partition)
        assert m.returned == twin.returned(query, m.detected)
        if not low_latency:
            assert m.detected == m.time == twin.time


@settings(max_examples=100, deadline=None)
@given(queries(), events(), st.data())
def test_query_equals_the_oracle_with_low_latency(
    text: str, stream: list[dict[str, Any]], data: st.DataObject
) -> None:
    order = data.draw(st.none() | st.permutations(TemporalQuery(text).symbols))
    check_against_oracle(text, closed(stream), True, order)


@settings(max_examples=60, deadline=None)
@given(queries(), events(), st.data())
def test_query_equals_the_oracle_on_ends(
    text: str, stream: list[dict[str, Any]], data: st.DataObject
) -> None:
    order = data.draw(st.none() | st.permutations(TemporalQuery(text).symbols))
    check_against_oracle(text, closed(stream), False, order)
