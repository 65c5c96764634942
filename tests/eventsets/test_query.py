"""SesQuery: kleene.compile for event-set patterns, run, rejected events, the push
matcher and its snapshots, explain."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.errors import (
    EventError,
    MatchLimitError,
    QueryError,
    RejectedEventsWarning,
    SnapshotError,
)
from kleene.eventsets.query import SesQuery
from kleene.eventsets.selection import OUTPUTS
from kleene.oracle.eventsets import evaluate
from tests.eventsets.chemo import Q1, events, rows
from tests.eventsets.strategies import ses_queries, ses_rows

CHEMO = {"type_field": "L", "time_field": "T", "time_unit": "d"}


def ids(matches: list[kleene.Match]) -> list[Any]:
    return sorted(sorted(m.ids().items()) for m in matches)


def oracle_ids(output: str = "all") -> list[Any]:
    found = evaluate(Q1, rows(), time_unit="d", output=output)
    return sorted(
        sorted((v, tuple(f"e{p + 1}" for p in seq)) for v, seq in m.bindings.items()) for m in found
    )


def test_compile_picks_the_kind_of_query() -> None:
    assert isinstance(kleene.compile(Q1), SesQuery)
    assert isinstance(kleene.compile("PATTERN SEQ(A a, B b) WITHIN 3"), kleene.Query)
    with pytest.raises(kleene.QuerySyntaxError):
        kleene.compile("PATTERN SEQ({A a}, ")


@pytest.mark.parametrize("output", OUTPUTS)
def test_chemo_runs_to_the_oracles_matches(output: str) -> None:
    q = kleene.compile(Q1, output=output, **CHEMO)
    assert ids(q.run(events())) == oracle_ids(output)


def test_chemo_matches_carry_positions_and_times() -> None:
    q = kleene.compile(Q1, output="earliest-maximal", **CHEMO)
    found = q.run(events())
    # ordered by last event, then first: e11 (patient 1), then e12 from e5, e12 from e7
    assert [m.ids()["b"] for m in found] == [("e11",), ("e12",), ("e12",)]
    first = found[0]
    assert first.positions == {"c": (0,), "p": (2, 8), "b": (10,)}
    assert (first.start, first.end) == (3, 17)


def test_datetimes_need_no_time_unit() -> None:
    dated = [{**e, "T": dt.datetime(2011, 7, e["T"], 9, 30)} for e in events()]
    q = kleene.compile(Q1, type_field="L", time_field="T", output="earliest-maximal")
    found = q.run(dated)
    assert ids(found) == oracle_ids("earliest-maximal")
    assert found[0].start == dt.datetime(2011, 7, 3, 9, 30)


def test_a_window_with_a_unit_over_numbers_needs_time_unit() -> None:
    q = kleene.compile(Q1, type_field="L", time_field="T")
    with pytest.raises(EventError, match="time_unit"):
        q.run(events())


def test_tables_and_frames_give_the_same_matches() -> None:
    q = kleene.compile(Q1, **CHEMO)
    expected = ids(q.run(events()))
    assert ids(q.run(pd.DataFrame(events()))) == expected
    assert ids(q.run(pa.Table.from_pylist(events()))) == expected


def test_bad_events_are_rejected_with_reasons() -> None:
    bad = events()
    del bad[4]["PID"]  # e5, a Prednisone without patient
    bad[7]["T"] = "soon"  # e8
    bad[6]["T"] = 2  # e7 comes before e6 (9 Jul)
    bad.insert(0, {"id": "x", "T": 1, "PID": 1})  # no type
    q = kleene.compile(Q1, **CHEMO)
    result = q.run_detailed(bad)
    reasons = {r.id: r.reason for r in result.rejected}
    assert reasons["e5"] == "missing attribute 'PID' for event type 'P'"
    assert "neither a number nor a datetime" in reasons["e8"]
    assert reasons["e7"].startswith("late event")
    assert reasons["x"] == "missing event type"
    # without e5, e7 and e8, patient 2 has no match; patient 1's three remain
    assert {m.ids()["c"] for m in result.matches} == {("e1",)}
    with pytest.warns(RejectedEventsWarning, match="4 event"):
        q.run(bad)


def test_values_of_one_kind_per_group() -> None:
    # p's V values are compared with each other: the first P fixes their kind
    bad = events()
    bad[7]["V"] = "98"
    result = kleene.compile(Q1, **CHEMO).run_detailed(bad)
    assert [(r.id, r.reason) for r in result.rejected] == [
        ("e8", "attribute 'V' of 'P' is a string ('98'), expected a number")
    ]


def test_options_are_checked() -> None:
    with pytest.raises(QueryError, match="earliest-maximal"):
        kleene.compile(Q1, output="first")
    with pytest.raises(QueryError, match="'strategy' is not an option of a"):
        kleene.compile(Q1, strategy="skip_till_any_match")
    with pytest.raises(QueryError, match="unknown algorithm"):
        kleene.compile(Q1, algorithm="nfa")
    with pytest.raises(QueryError, match="unknown pruning 'fq'"):
        kleene.compile(Q1, preprocessing="fq")
    with pytest.raises(QueryError, match="unknown time unit"):
        kleene.compile(Q1, time_unit="days")
    assert kleene.compile(Q1, output="earliest_maximal").output == "earliest-maximal"
    # the OUTPUT clause, unless the option says otherwise
    assert kleene.compile(Q1 + " OUTPUT MAXIMAL").output == "maximal"
    assert kleene.compile(Q1 + " OUTPUT MAXIMAL", output="all").output == "all"


def test_max_matches() -> None:
    q = kleene.compile(Q1, max_matches=10, **CHEMO)
    with pytest.raises(MatchLimitError):
        q.run(events())
    assert len(kleene.compile(Q1, max_matches=11, **CHEMO).run(events())) == 11


def test_the_matcher_reports_a_window_once_it_is_complete() -> None:
    m = kleene.compile(Q1, output="earliest-maximal", **CHEMO).matcher()
    pushed = events()
    # W1 holds e1 .. e12 (Example 6): e12 on 18 Jul is 15 days after e1
    assert m.push(pushed[:12]) == []
    (first,) = m.push(pushed[12])  # e13 on 19 Jul closes W1 (16 > 15 days)
    assert m.push(pushed[13]) == []  # e14 closes the windows of e2, e3, e4: no match
    assert first.ids() == {"c": ("e1",), "p": ("e3", "e9"), "b": ("e11",)}
    # no event before 25 Jul will come: the windows of events before 10 Jul close, e5's
    # among them; e7's (10 Jul) stays open
    (from_e5,) = m.advance_to(25)
    assert from_e5.ids() == {"c": ("e7",), "p": ("e5", "e8"), "b": ("e12",)}
    (from_e7,) = m.advance_to(26)
    assert from_e7.ids() == {"c": ("e7",), "p": ("e8",), "b": ("e12",)}
    # an event before the time advanced to is late
    assert m.push({"id": "late", "L": "B", "PID": 2, "V": 1, "T": 25}) == []
    assert [r.reason for r in m.take_rejected()] == [
        "late event: time 25 is before the stream's current time 26"
    ]
    with pytest.raises(TypeError, match="number"):
        m.advance_to(dt.datetime(2011, 7, 30))
    assert m.flush() == []


def test_snapshots_resume_where_they_were_taken() -> None:
    q = kleene.compile(Q1, **CHEMO)
    whole = ids(q.run(events()))
    for cut in range(len(events()) + 1):
        m = q.matcher()
        found = m.push(events()[:cut])
        resumed = q.matcher(state=m.snapshot())
        found += resumed.push(events()[cut:]) + resumed.flush()
        assert ids(found) == whole


def test_snapshots_are_checked() -> None:
    q = kleene.compile(Q1, **CHEMO)
    m = q.matcher()
    m.push(events()[:5])
    state = m.snapshot()
    with pytest.raises(SnapshotError, match="another query"):
        kleene.compile(Q1, output="maximal", **CHEMO).matcher(state=state)
    with pytest.raises(SnapshotError):
        q.matcher(state=state[:-3])
    with pytest.raises(SnapshotError):
        q.matcher(state=b"not a snapshot")


def test_explain_names_the_engine_and_constraints() -> None:
    text = kleene.compile(Q1).explain()
    assert "algorithm: automaton" in text
    assert "B1 = {c, p+}" in text and "B2 = {b}" in text
    assert "prev: prev(p.V) < p.V" in text
    assert "relationship: c.PID = p.PID" in text


@settings(max_examples=60, deadline=None)
@given(ses_queries(), ses_rows(), st.sampled_from(OUTPUTS), st.integers(0, 8))
def test_random_runs_and_resumed_matchers_equal_the_oracle(
    text: str, events: list[dict], output: str, cut: int
) -> None:
    q = kleene.compile(text, output=output)
    expected = sorted(m.key() for m in evaluate(text, events, output=output))
    assert sorted(tuple(sorted(m.positions.items())) for m in q.run(events)) == expected
    m = q.matcher()
    found = m.push(events[:cut])
    resumed = q.matcher(state=m.snapshot())
    found += resumed.push(events[cut:]) + resumed.flush()
    assert sorted(tuple(sorted(m.positions.items())) for m in found) == expected


def test_malformed_states_are_refused_on_load() -> None:
    from kleene.runtime import snapshot

    q = kleene.compile(Q1, preprocessing="none", **CHEMO)  # the plain windows' state
    m = q.matcher()
    m.push(events()[:3])
    tree = snapshot.loads(zlib_body(m.snapshot()))
    assert [p for p, _ in tree["buffer"]] == [0, 1, 2]
    for broken in (
        {**tree, "buffer": [tree["buffer"][1], tree["buffer"][0]]},  # out of order
        {**tree, "buffer": [[7, tree["buffer"][0][1]]]},  # beyond the stream's position
        {**tree, "buffer": [[0, {"type": "C"}]]},  # no time
        {**tree, "stream": (("weekday", None, True), *tree["stream"][1:])},
        {**tree, "stream": (*tree["stream"][:2], (-1, 0, 0), tree["stream"][3])},
        {k: v for k, v in tree.items() if k != "stream"},
    ):
        with pytest.raises(SnapshotError, match="malformed"):
            q.matcher(state=snapshot.seal(snapshot.EVENTSET, q.fingerprint, broken))
    resumed = q.matcher(state=snapshot.seal(snapshot.EVENTSET, q.fingerprint, tree))
    assert ids(resumed.push(events()[3:]) + resumed.flush()) == oracle_ids()


def zlib_body(data: bytes) -> bytes:
    """The JSON body of snapshot bytes (header: 18 bytes, kind 1, fingerprint 32)."""
    import zlib

    return zlib.decompress(data[18 + 1 + 32 :])
