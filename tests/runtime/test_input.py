"""Input forms, bad events, ordering, snapshots and resource limits."""

import datetime as dt

import pandas as pd
import pyarrow as pa
import pytest

import kleene
from tests.helpers import id_sets, match, stream

PAIR = "PATTERN SEQ(A a, B b) WHERE skip_till_next_match { b.v > a.v } WITHIN 10"


def test_dicts_dataframe_and_arrow_give_the_same_matches():
    events = stream("a1@1", "b1@2", "a2@3", "b2@4", v=[1, 2, 5, 3])
    q = kleene.compile(PAIR)
    expected = {match(a="a1", b="b1")}
    assert id_sets(q.run(events)) == expected
    assert id_sets(q.run(pd.DataFrame(events))) == expected
    assert id_sets(q.run(pa.Table.from_pylist(events))) == expected


def test_ids_default_to_input_positions():
    events = [{"type": "A", "timestamp": 1, "v": 1}, {"type": "B", "timestamp": 2, "v": 2}]
    (m,) = kleene.compile(PAIR).run(events)
    assert m.ids() == {"a": (0,), "b": (1,)}


def test_custom_field_names():
    events = [
        {"kind": "A", "at": 1, "key": "x", "v": 1},
        {"kind": "B", "at": 2, "key": "y", "v": 2},
    ]
    q = kleene.compile(PAIR, type_field="kind", time_field="at", id_field="key")
    assert [m.ids() for m in q.run(events)] == [{"a": ("x",), "b": ("y",)}]


def test_datetime_timestamps_and_window_units():
    t0 = dt.datetime(2026, 1, 1, 12, 0)
    events = [
        {"type": "A", "timestamp": t0, "v": 1},
        {"type": "B", "timestamp": t0 + dt.timedelta(minutes=59), "v": 2},
        {"type": "B", "timestamp": t0 + dt.timedelta(minutes=61), "v": 3},
    ]
    q = kleene.compile("PATTERN SEQ(A a, B b) WHERE skip_till_any_match { } WITHIN 1 hour")
    (m,) = q.run(events)
    assert m.ids() == {"a": (0,), "b": (1,)}
    assert m.start == t0 and m.end == t0 + dt.timedelta(minutes=59)
    assert id_sets(q.run(pd.DataFrame(events))) == {match(a=0, b=1)}


def test_bad_events_are_rejected_with_reasons_and_the_rest_still_match():
    events = [
        {"type": "A", "timestamp": 1, "v": 1, "id": "ok-a"},
        {"type": "A", "timestamp": 2, "id": "no-v"},
        {"type": "B", "timestamp": 3, "v": "high", "id": "string-v"},
        {"type": "B", "timestamp": None, "v": 2, "id": "no-time"},
        {"timestamp": 4, "v": 2, "id": "no-type"},
        {"type": "B", "timestamp": 5, "v": 2, "id": "ok-b"},
        {"type": "B", "timestamp": 4, "v": 9, "id": "late"},
    ]
    result = kleene.compile(PAIR).run_detailed(events)
    assert id_sets(result.matches) == {match(a="ok-a", b="ok-b")}
    reasons = {r.id: r.reason for r in result.rejected}
    assert set(reasons) == {"no-v", "string-v", "no-time", "no-type", "late"}
    assert "missing attribute 'v'" in reasons["no-v"]
    assert "string" in reasons["string-v"] and "number" in reasons["string-v"]
    assert "timestamp" in reasons["no-time"]
    assert "type" in reasons["no-type"]
    assert "late" in reasons["late"]
    assert next(r for r in result.rejected if r.id == "string-v").record["v"] == "high"


def test_kind_is_learned_from_the_first_event_when_the_query_does_not_say():
    # a.k and b.k are compared, so they must share one kind: the first seen (a number)
    q = kleene.compile("PATTERN SEQ(A a, B b) WHERE skip_till_next_match { a.k = b.k }")
    events = [
        {"type": "A", "timestamp": 1, "k": 1},
        {"type": "B", "timestamp": 2, "k": "1"},
        {"type": "A", "timestamp": 3, "k": "x"},
        {"type": "B", "timestamp": 4, "k": 1},
    ]
    result = q.run_detailed(events)
    assert {r.record["timestamp"] for r in result.rejected} == {2, 3}
    assert id_sets(result.matches) == {match(a=0, b=3)}


def test_kind_demanded_by_the_query_text():
    q = kleene.compile("PATTERN SEQ(A a, B b) WHERE skip_till_next_match { b.k > a.k + 1 }")
    events = [
        {"type": "A", "timestamp": 1, "k": "1"},  # arithmetic needs a number
        {"type": "A", "timestamp": 2, "k": 1},
        {"type": "B", "timestamp": 3, "k": 5},
    ]
    result = q.run_detailed(events)
    assert [r.record["timestamp"] for r in result.rejected] == [1]
    assert id_sets(result.matches) == {match(a=1, b=2)}


def test_allowed_lateness_reorders_events():
    events = stream("b1@3", "a1@1", "b2@4", v=[2, 1, 3])
    q = kleene.compile(PAIR, allowed_lateness=5)
    result = q.run_detailed(events)
    assert id_sets(result.matches) == {match(a="a1", b="b1")}
    assert result.rejected == []
    strict = kleene.compile(PAIR).run_detailed(events)
    assert [r.id for r in strict.rejected] == ["a1"]


def test_event_later_than_the_lateness_is_rejected():
    events = stream("a1@1", "b1@20", "a2@2", v=[1, 2, 0])
    result = kleene.compile(PAIR, allowed_lateness=5).run_detailed(events)
    assert [r.id for r in result.rejected] == ["a2"]


def test_snapshot_and_resume_give_the_same_matches():
    events = stream("a1@1", "a2@2", "b1@5", "b2@6", "b3@7", v=[1, 2, 3, 0, 4])
    q = kleene.compile(
        "PATTERN SEQ(A a, B+ b[]) WHERE skip_till_any_match { b[i].v > a.v } WITHIN 10"
    )
    whole = id_sets(q.run(events))
    first = q.matcher()
    got = first.push(events[:3])
    resumed = q.matcher(state=first.snapshot())
    got += resumed.push(events[3:]) + resumed.flush()
    assert id_sets(got) == whole


def test_state_is_pruned_by_the_window_on_a_long_stream():
    q = kleene.compile(
        "PATTERN SEQ(A a, B+ b[]) WHERE skip_till_next_match { [k] and b[i].v >= a.v } WITHIN 20"
    )
    m = q.matcher()
    sizes = []
    for chunk in range(20):
        batch = [
            {"type": "AB"[i % 2], "timestamp": chunk * 1000 + i, "k": i % 7, "v": i % 5}
            for i in range(1000)
        ]
        m.push(batch)
        sizes.append((m.live_runs, len(m.st.core.buffer)))
    # after the first chunks, live runs and buffer size stop growing with the stream
    assert max(s[0] for s in sizes[5:]) <= 2 * max(s[0] for s in sizes[:5]) + 10
    assert max(s[1] for s in sizes[5:]) <= 2 * max(s[1] for s in sizes[:5]) + 10


def test_run_limit_raises_a_clear_error():
    q = kleene.compile(
        "PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match { }", max_runs=1000, engine="nfa"
    )
    with pytest.raises(kleene.RunLimitError, match="max_runs"):
        q.run([{"type": "A", "timestamp": i} for i in range(30)])


def test_postponed_construction_is_capped_too():
    # 2**30 - 1 subsets of the A events end at the B event: max_matches stops them
    q = kleene.compile("PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match { }", max_matches=1000)
    assert q.config.engine == "postpone"
    events = [{"type": "A", "timestamp": i} for i in range(30)] + [{"type": "B", "timestamp": 30}]
    with pytest.raises(kleene.MatchLimitError, match="max_matches=1,000"):
        q.run(events)


def test_option_errors():
    with pytest.raises(kleene.QueryError, match="strategy"):
        kleene.compile(PAIR, strategy="fastest")
    with pytest.raises(ValueError):
        kleene.compile(PAIR, allowed_lateness=-1)
