"""Event-set patterns on the one contract of every kind (issue 25): the compiled query
and its matcher, the match protocol with the partition, one RunResult, the kind's own
snapshot tag and fingerprint."""

from __future__ import annotations

import datetime as dt

import pytest

import kleene
from kleene import kinds
from kleene.errors import SnapshotError
from kleene.eventsets.query import SesQuery
from kleene.match import MatchLike, RunResult
from kleene.runtime import snapshot
from kleene.runtime.contract import CompiledQuery, StreamMatcher
from tests.eventsets.chemo import Q1, events

CHEMO = {"type_field": "L", "time_field": "T", "time_unit": "d"}


def test_the_query_and_matcher_follow_the_contract() -> None:
    q = kleene.compile(Q1, **CHEMO)
    assert isinstance(q, SesQuery) and isinstance(q, CompiledQuery)
    assert q.kind == "eventset" and kinds.kind_of(q) is kinds.get("eventset")
    m = q.matcher()
    assert isinstance(m, StreamMatcher)
    found = [*m.push(events()), *m.flush()]
    assert len(found) == 11 == m.reported
    result = q.run_detailed(events())
    assert isinstance(result, RunResult) and result.rejected == []
    assert sorted(x.key() for x in result.matches) == sorted(x.key() for x in found)


def test_matches_carry_their_partition_in_the_inputs_types() -> None:
    """Q1 equates PID across all its variables: the partitioning attribute of
    Definition 6, whose value every event of a match shares."""
    q = kleene.compile(Q1, **CHEMO)
    assert q.partition_attributes == ("PID",)
    for match in q.run(events()):
        assert isinstance(match, MatchLike)
        pids = {e["PID"] for e in events() if e["id"] in sum(match.ids().values(), ())}
        assert match.partition == tuple(pids) and type(match.partition[0]) is int
    # the same whatever the pre-processing: partitioning off does not change it
    plain = kleene.compile(Q1, preprocessing="none", **CHEMO).run(events())
    assert [x.partition for x in plain] == [x.partition for x in q.run(events())]


def test_a_pattern_without_partitioning_attributes_has_no_partition() -> None:
    q = kleene.compile("PATTERN SEQ({C c, P+ p}, {B b}) WITHIN 15 days", **CHEMO)
    assert q.partition_attributes == ()
    assert {m.partition for m in q.run(events())} == {()}


def test_a_string_partition_and_datetimes() -> None:
    rows = [
        {"id": 1, "type": "A", "K": "x", "timestamp": dt.datetime(2024, 1, 1, tzinfo=dt.UTC)},
        {"id": 2, "type": "B", "K": "x", "timestamp": dt.datetime(2024, 1, 2, tzinfo=dt.UTC)},
    ]
    (match,) = kleene.compile("PATTERN SEQ({A a}, B b) WHERE a.K = b.K WITHIN 2 days").run(rows)
    assert match.partition == ("x",)
    assert match.start == rows[0]["timestamp"] and match.end == rows[1]["timestamp"]


def test_snapshots_have_the_event_set_tag_and_fingerprint() -> None:
    q = kleene.compile(Q1, **CHEMO)
    m = q.matcher()
    m.push(events()[:5])
    state = m.snapshot()
    facts = [Q1, "all", "L", "T", "id", "d", "automaton", "fpc"]
    assert q.fingerprint == snapshot.kind_fingerprint(snapshot.EVENTSET, facts)
    snapshot.unseal(state, snapshot.EVENTSET, q.fingerprint)  # does not raise
    with pytest.raises(SnapshotError, match="taken from an event-set pattern"):
        snapshot.unseal(state, snapshot.QUERY, q.fingerprint)
    # a resumed matcher counts its own matches: max_matches is per matcher
    resumed = q.matcher(state=state)
    assert resumed.reported == 0
    assert len([*resumed.push(events()[5:]), *resumed.flush()]) == 11
    assert resumed.reported == 11
    # max_runs may change between the snapshot and the resumption
    assert kleene.compile(Q1, max_runs=50, **CHEMO).fingerprint == q.fingerprint
