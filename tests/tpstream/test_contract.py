"""The TPStream kind on the one contract of every kind (kleene.runtime.contract): its
matcher's lifecycle (``advance_to``, ``rejected_count``, ``reported``), its match's
result protocol (kleene.match.MatchLike) and its snapshot tag and fingerprint."""

from __future__ import annotations

import datetime as dt
from itertools import pairwise
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.errors import EventError, SnapshotError
from kleene.match import MatchLike, RunResult
from kleene.runtime import snapshot
from kleene.runtime.contract import CompiledQuery, StreamMatcher
from kleene.tpstream.model import TemporalMatch
from kleene.tpstream.query import TemporalQuery
from tests.tpstream.streams import closed, events, queries

BEFORE = "FROM S PARTITION BY k DEFINE A AS S.a = 1, B AS S.b = 1 PATTERN A before B WITHIN 50"


def rows(*spec: tuple[int, int, int, int]) -> list[dict[str, Any]]:
    """Events (timestamp, k, a, b), each with the id ``e<timestamp>``."""
    return [
        {"type": "S", "timestamp": t, "id": f"e{t}", "k": k, "a": a, "b": b} for t, k, a, b in spec
    ]


# partition 7: A over [1, 3) (events 1, 2), B over [4, 5) (event 4); partition 8 nothing
PAIR = rows((1, 7, 1, 0), (2, 7, 1, 0), (3, 7, 0, 0), (4, 7, 0, 1), (5, 7, 0, 0), (6, 8, 0, 0))


def test_the_query_and_its_matcher_are_of_the_contract() -> None:
    q = kleene.compile(BEFORE)
    assert isinstance(q, TemporalQuery) and isinstance(q, CompiledQuery)
    assert q.kind == "tpstream" and q.variables == ("A", "B")
    assert q.partition_attributes == ("k",)
    assert isinstance(q.matcher(), StreamMatcher)
    result = q.run_detailed(PAIR)
    assert isinstance(result, RunResult) and len(result.matches) == 1


def test_a_match_speaks_the_result_protocol() -> None:
    q = kleene.compile(BEFORE + " RETURN count(A) AS n, start(B) AS b")
    (m,) = q.run(PAIR)
    assert isinstance(m, MatchLike)
    assert m.partition == (7,)
    # the ids of each situation's first and last events (one id for a one-event one)
    assert m.ids() == {"A": ("e1", "e2"), "B": ("e4",)}
    # detected at B's start, B still running: the end is the detection time
    assert (m.start, m.end, m.time, m.detected) == (1, 4, 4, 4)
    assert m.situations["B"].end is None
    assert m.values() == {"n": 2, "b": 4} and m.values() is not m.returned
    assert hash(m.key()) == hash(q.run(PAIR)[0].key())
    assert m.key() == ((7,), (("A", 1), ("B", 4)))
    # reported at its last end: Definition 12's time, the largest end
    (late,) = TemporalQuery(BEFORE, low_latency=False).run(PAIR)
    assert (late.start, late.end, late.ids(), late.key()) == (1, 5, m.ids(), m.key())


def test_ids_are_positions_without_an_id_column_and_the_same_on_both_paths() -> None:
    q = TemporalQuery(BEFORE)
    plain = [{k: v for k, v in e.items() if k != "id"} for e in PAIR]
    (m,) = q.run(plain)
    assert m.ids() == {"A": (0, 1), "B": (3,)}
    table = pa.Table.from_pylist(PAIR * 1)
    columnar = q.matcher()
    columnar.admission.min_rows = 1  # column-wise however short
    found = columnar.push(table) + columnar.flush()
    evented = q.matcher()
    evented.columnar = False
    assert [x.ids() for x in found] == [x.ids() for x in evented.run(table)]
    assert found[0].ids() == {"A": ("e1", "e2"), "B": ("e4",)}


def test_ids_survive_a_snapshot() -> None:
    """A buffered situation's ids and those of one still going on in the deriver."""
    q = TemporalQuery(BEFORE, low_latency=False)
    first = q.matcher()
    assert first.push(PAIR[:4]) == []  # A ended and buffered, B going on
    resumed = q.matcher(state=first.snapshot())
    (m,) = resumed.push(PAIR[4:]) + resumed.flush()
    assert m.ids() == {"A": ("e1", "e2"), "B": ("e4",)}


def test_the_snapshot_has_the_tpstream_tag_and_the_kind_fingerprint() -> None:
    q = TemporalQuery(BEFORE)
    state = q.matcher().snapshot()
    facts = [BEFORE, ["type", "timestamp", "id"], None, True, None]
    assert q.fingerprint() == snapshot.kind_fingerprint(snapshot.TPSTREAM, facts)
    snapshot.unseal(state, snapshot.TPSTREAM, q.fingerprint())
    with pytest.raises(SnapshotError, match="TPStream query"):
        snapshot.unseal(state, snapshot.QUERY, q.fingerprint())
    with pytest.raises(SnapshotError):
        TemporalQuery(BEFORE, low_latency=False).matcher(state=state)


def test_an_event_before_the_stream_time_is_rejected_as_late() -> None:
    q = TemporalQuery(BEFORE)
    for columnar in (True, False):
        m = q.matcher()
        m.columnar = columnar
        m.admission.min_rows = 1
        m.push(pa.Table.from_pylist(PAIR[:2]))
        assert m.advance_to(10) == []
        # one event of each partition before 10 (partition 8 has none yet), one at 10
        late = rows((9, 7, 0, 0), (3, 8, 0, 0), (10, 8, 1, 0))
        m.push(pa.Table.from_pylist(late))
        rejected = m.take_rejected()
        assert [(r.id, r.position) for r in rejected] == [("e9", 2), ("e3", 3)]
        assert all("before the stream's current time 10" in r.reason for r in rejected)
        assert m.rejected_count == 2
        # an earlier watermark changes nothing
        m.advance_to(5)
        m.push(rows((8, 8, 0, 0)))
        assert m.rejected_count == 3 and m.take_rejected()[0].id == "e8"


def test_the_stream_time_and_the_counts_survive_a_snapshot() -> None:
    q = TemporalQuery(BEFORE)
    m = q.matcher()
    m.push(PAIR[:2] + rows((0, 7, 0, 0)))  # late in its partition
    m.advance_to(20)
    resumed = q.matcher(state=m.snapshot())
    assert resumed.rejected_count == 1 and resumed.reported == 0
    resumed.push(rows((19, 8, 0, 0), (20, 8, 0, 0)))
    assert resumed.rejected_count == 2
    assert [r.id for r in resumed.take_rejected()] == ["e19"]


def test_reported_counts_the_matches_handed_out() -> None:
    handed: list[TemporalMatch] = []
    m = TemporalQuery(BEFORE).matcher(on_matches=handed.extend)
    assert m.push(PAIR) == [] and m.flush() == []
    assert len(handed) == 1 and m.reported == 1


def test_advance_to_takes_the_stream_kind_of_time() -> None:
    q = TemporalQuery(BEFORE)
    day = dt.datetime(2024, 5, 1, tzinfo=dt.UTC)
    m = q.matcher()
    m.push([{**e, "timestamp": day + dt.timedelta(seconds=e["timestamp"])} for e in PAIR[:2]])
    m.advance_to(day + dt.timedelta(seconds=30))
    m.push([{**PAIR[2], "timestamp": day + dt.timedelta(seconds=29)}])
    (r,) = m.take_rejected()
    assert "2024-05-01T00:00:29+00:00" in r.reason and "00:00:30" in r.reason
    with pytest.raises(EventError, match="datetimes"):
        m.advance_to(40)
    with pytest.raises(EventError, match="a number or a datetime"):
        m.advance_to("soon")
    # before any event, the watermark sets the kind of time
    fresh = q.matcher()
    fresh.advance_to(day)
    fresh.push(PAIR[:1])
    assert "datetimes" in fresh.take_rejected()[0].reason


@st.composite
def gapped(draw: st.DrawFn) -> tuple[list[list[dict[str, Any]]], list[int]]:
    """A closed random stream cut into chunks, each later chunk moved on in time by a
    random gap (so that quiet time passes), and the time each chunk may follow."""
    stream = closed(draw(events(max_size=30)))
    cuts = draw(st.lists(st.integers(0, len(stream)), max_size=4))
    bounds = sorted({0, len(stream), *cuts})
    chunks, marks, shift = [], [], 0
    for a, b in pairwise(bounds):
        gap = draw(st.integers(0, 60))
        shift += gap
        chunk = [{**e, "timestamp": e["timestamp"] + shift} for e in stream[a:b]]
        # the watermark: up to the chunk's first time (an event at it is still admitted)
        marks.append(chunk[0]["timestamp"] - draw(st.integers(0, gap)))
        chunks.append(chunk)
    return chunks, marks


@settings(max_examples=80, deadline=None)
@given(queries(), gapped(), st.booleans())
def test_advance_to_between_chunks_changes_no_match(
    text: str, data: tuple[list[list[dict[str, Any]]], list[int]], low_latency: bool
) -> None:
    """advance_to purges what no later update can match (section 5.3), so the matches
    are those of the uninterrupted run, and no event is rejected."""
    chunks, marks = data
    q = TemporalQuery(text, low_latency=low_latency, max_matches=None)
    whole = q.run_detailed([e for c in chunks for e in c])
    m = q.matcher()
    found: list[TemporalMatch] = []
    for chunk, mark in zip(chunks, marks, strict=True):
        found += m.advance_to(mark)
        found += m.push(chunk)
    found += m.flush()

    def order(x: TemporalMatch) -> tuple[Any, ...]:
        return (x.detected, x.key())

    assert sorted(found, key=order) == sorted(whole.matches, key=order)
    assert m.take_rejected() == whole.rejected == []


DURING = "FROM S DEFINE A AS S.a = 1, C AS S.c = 1 PATTERN A during C WITHIN 40"


@pytest.mark.parametrize("low_latency", [True, False])
def test_advance_to_keeps_what_a_situation_going_on_can_still_match(low_latency: bool) -> None:
    """C goes on over [0, 100) around A over [2, 5): A during C is established at A's
    end, 5, within 40 of C's start. Quiet time up to 100 must not purge A while C
    goes on (without low latency the match is found only at C's end)."""
    q = TemporalQuery(DURING, low_latency=low_latency)
    stream = [
        {"timestamp": 0, "a": 0, "c": 1},
        {"timestamp": 2, "a": 1, "c": 1},
        {"timestamp": 5, "a": 0, "c": 1},
        {"timestamp": 100, "a": 0, "c": 0},
    ]
    m = q.matcher()
    found = m.push(stream[:3]) + m.advance_to(100) + m.push(stream[3:]) + m.flush()
    assert found == q.run(stream)
    assert [(x.situations["A"].start, x.situations["C"].start, x.detected) for x in found] == [
        (2, 0, 5 if low_latency else 100)
    ]
