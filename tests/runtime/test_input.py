"""Input forms, bad events, ordering, snapshots and resource limits."""

import datetime as dt
import warnings
from decimal import Decimal
from typing import Any

import numpy as np
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


# --- every encoding is normalised; bad values are rejected, the rest still match ----

PRICES = "PATTERN SEQ(A a, B b) WHERE skip_till_any_match { [k] and b.v > a.v } WITHIN 10"


def _prices() -> list[dict[str, Any]]:
    return stream("a1@1", "b1@2", "a2@3", "b2@4", k=["x", "x", "y", "y"], v=[1, 2, 5, 3])


def test_category_dictionary_and_string_view_columns_match_like_plain_ones() -> None:
    events = _prices()
    q = kleene.compile(PRICES)
    want = id_sets(q.run(events))
    assert want == {match(a="a1", b="b1")}
    frame = pd.DataFrame(events).astype({"type": "category", "k": "category"})
    assert id_sets(q.run(frame)) == want
    table = pa.Table.from_pylist(events)
    for encode in (
        lambda c: c.dictionary_encode(),
        lambda c: c.cast(pa.string_view()),
        lambda c: c.cast(pa.large_string()),
    ):
        recoded = table
        for name in ("type", "k", "id"):
            i = recoded.schema.get_field_index(name)
            recoded = recoded.set_column(i, name, encode(recoded.column(name)))
        assert id_sets(q.run(recoded)) == want


def test_numpy_scalars_decimals_and_big_integers_are_numbers() -> None:
    # arithmetic makes the query demand numbers
    q = kleene.compile(PRICES.replace("b.v > a.v", "b.v > a.v + 0"))
    numpy_events = [
        {**e, "v": np.int64(e["v"]), "timestamp": np.float64(e["timestamp"])} for e in _prices()
    ]
    assert id_sets(q.run_detailed(numpy_events).matches) == {match(a="a1", b="b1")}
    big = [{**e, "v": 2**70 + e["v"]} for e in _prices()]
    result = q.run_detailed(big)
    assert result.rejected == [] and id_sets(result.matches) == {match(a="a1", b="b1")}
    decimals = [{**e, "v": Decimal(e["v"]) / 2} for e in _prices()]
    result = q.run_detailed(decimals)
    assert result.rejected == [] and id_sets(result.matches) == {match(a="a1", b="b1")}
    frame = pd.DataFrame(decimals)  # an object column of Decimals, read by arrow
    assert id_sets(q.run_detailed(frame).matches) == {match(a="a1", b="b1")}


def test_list_and_mapping_values_are_rejected_not_crashing() -> None:
    events = _prices()
    events[2] = {**events[2], "k": ["y"]}  # a list as partition key
    events[3] = {**events[3], "v": {"x": 1}}
    events.append({"type": "C", "timestamp": 5, "k": ["z"], "v": 0})  # not a pattern type
    result = kleene.compile(PRICES, strategy="partition_contiguity").run_detailed(events)
    assert id_sets(result.matches) == {match(a="a1", b="b1")}
    reasons = {r.id: r.reason for r in result.rejected}
    assert set(reasons) == {"a2", "b2"}
    assert "is a list" in reasons["a2"] and "is a dict" in reasons["b2"]


@pytest.mark.parametrize("bad", [None, float("nan"), np.nan, 5, ["B"]])
def test_an_event_type_that_is_not_text_is_rejected(bad: Any) -> None:
    events = [*_prices(), {"type": bad, "timestamp": 5, "k": "x", "v": 9, "id": "bad"}]
    for form in (events, pd.DataFrame(events)):
        result = kleene.compile(PRICES).run_detailed(form)
        assert [r.id for r in result.rejected] == ["bad"]
        assert "type" in result.rejected[0].reason
        assert id_sets(result.matches) == {match(a="a1", b="b1")}


@pytest.mark.parametrize("bad", [float("inf"), -float("inf"), float("nan"), 2**70, True])
def test_unusable_timestamps_are_rejected_before_they_move_the_clock(bad: Any) -> None:
    events = _prices()
    events.insert(1, {"type": "A", "timestamp": bad, "k": "x", "v": 0, "id": "bad"})
    result = kleene.compile(PRICES).run_detailed(events)
    assert [r.id for r in result.rejected] == ["bad"]
    assert "timestamp" in result.rejected[0].reason
    assert id_sets(result.matches) == {match(a="a1", b="b1")}


def test_unusable_timestamps_in_an_arrow_column_are_rejected() -> None:
    events = _prices()
    table = pa.Table.from_pylist(events)
    times = pa.array([1.0, float("inf"), 3.0, 4.0])
    table = table.set_column(table.schema.get_field_index("timestamp"), "timestamp", times)
    result = kleene.compile(PRICES).run_detailed(table)
    assert [r.id for r in result.rejected] == ["b1"]
    assert "finite" in result.rejected[0].reason
    big = pa.array([1, 2**64 - 1, 3, 4], pa.uint64())
    table = table.set_column(table.schema.get_field_index("timestamp"), "timestamp", big)
    result = kleene.compile(PRICES).run_detailed(table)
    assert [r.id for r in result.rejected] == ["b1"]
    assert "out of range" in result.rejected[0].reason


@pytest.mark.parametrize("bad", [None, "AB", 42, b"AB", 1.5])
def test_run_refuses_input_that_is_not_events(bad: Any) -> None:
    q = kleene.compile(PRICES)
    for call in (q.run, q.run_detailed, kleene.compile_program(PRICES).run):
        with pytest.raises(TypeError, match="iterable of mappings"):
            call(bad)


def test_run_warns_with_the_count_of_rejected_events() -> None:
    events = [*_prices(), {"type": "A", "timestamp": 9, "k": "x"}, {"timestamp": 10}]
    q = kleene.compile(PRICES)
    with pytest.warns(kleene.RejectedEventsWarning, match="^2 events rejected"):
        assert id_sets(q.run(events)) == {match(a="a1", b="b1")}
    with pytest.warns(kleene.RejectedEventsWarning, match="^2 events rejected"):
        kleene.compile_program(PRICES).run(events)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(q.run_detailed(events).rejected) == 2
        q.run(_prices())  # nothing rejected: no warning


def test_a_typed_input_without_a_column_the_query_reads_is_an_error() -> None:
    table = pa.Table.from_pylist(_prices()).drop_columns(["v"])
    q = kleene.compile(PRICES)
    with pytest.raises(kleene.EventError, match="no 'v' column"):
        q.run(table)
    with pytest.raises(kleene.EventError, match="no 'v' column"):
        q.run(table.to_pandas())
    with pytest.raises(kleene.EventError, match="no 'timestamp' column"):
        q.run(pa.Table.from_pylist(_prices()).drop_columns(["timestamp"]))
    frame = pd.DataFrame(_prices()).astype({"type": pd.CategoricalDtype(["A", "C"])})
    with pytest.raises(kleene.EventError, match="without 'B'"):
        q.run(frame)


def test_schema_less_events_lacking_an_attribute_give_one_summary_warning() -> None:
    events = [{k: v for k, v in e.items() if k != "v" or e["type"] == "A"} for e in _prices()]
    q = kleene.compile(PRICES)
    with pytest.warns(kleene.SchemaWarning, match=r"B\.v") as caught:
        result = q.run_detailed(events)
    assert len([w for w in caught if issubclass(w.category, kleene.SchemaWarning)]) == 1
    assert result.matches == [] and len(result.rejected) == 2


# --- time units ------------------------------------------------------------------------

WITHIN_UNIT = "PATTERN SEQ(A a, B b) WHERE skip_till_any_match { } WITHIN 5 seconds"


def test_a_window_with_a_unit_over_numeric_times_needs_the_time_unit() -> None:
    events = stream("a1@0", "b1@4000", "b2@6000")
    with pytest.raises(kleene.EventError, match=r"WITHIN 5 seconds has a time unit.*time_unit"):
        kleene.compile(WITHIN_UNIT).run(events)
    assert id_sets(kleene.compile(WITHIN_UNIT, time_unit="ms").run(events)) == {
        match(a="a1", b="b1")
    }
    both = {match(a="a1", b="b1"), match(a="a1", b="b2")}
    assert id_sets(kleene.compile(WITHIN_UNIT, time_unit="us").run(events)) == both
    assert kleene.compile(WITHIN_UNIT, time_unit="s").run(events) == []
    # a window without a unit is in timestamp units
    bare = "PATTERN SEQ(A a, B b) WHERE skip_till_any_match { } WITHIN 5000"
    assert id_sets(kleene.compile(bare).run(events)) == {match(a="a1", b="b1")}
    with pytest.raises(kleene.QueryError, match="time unit"):
        kleene.compile(WITHIN_UNIT, time_unit="fortnights")


def test_datetime_times_take_the_window_unit_directly() -> None:
    t0 = dt.datetime(2026, 1, 1)
    events = [
        {"type": "A", "timestamp": t0},
        {"type": "B", "timestamp": t0 + dt.timedelta(seconds=4)},
        {"type": "B", "timestamp": t0 + dt.timedelta(seconds=6)},
    ]
    assert id_sets(kleene.compile(WITHIN_UNIT).run(events)) == {match(a=0, b=1)}
