"""The output schema of match and rejected files (kleene.io.schema): what each engine
must write, checked on the local engine without Spark."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest

import kleene
from kleene.cli import EXIT_OK, main
from kleene.io import write_table
from kleene.io.jsonl import dumps
from kleene.io.records import match_order, rejected_order
from kleene.io.schema import (
    OutputColumns,
    collapsed_row,
    match_id,
    match_record,
    match_row,
    rejected_row,
    utc,
)

BERLIN = dt.timezone(dt.timedelta(hours=1))


def events(times: list[object], prices: list[int], tz: str | None = None) -> pa.Table:
    n = len(times)
    kind = pa.timestamp("us", tz=tz) if isinstance(times[0], dt.datetime) else pa.int64()
    return pa.table(
        {
            "id": list(range(n)),
            "type": ["S"] * n,
            "timestamp": pa.array(times, kind),
            "sym": [1] * n,
            "price": prices,
        }
    )


PAIR = """
PATTERN SEQ(S a, S b) WHERE skip_till_any_match AND [sym] AND b.price > a.price WITHIN 10
RETURN a.timestamp, b.timestamp - a.timestamp AS took, b.price AS start
"""


def test_datetimes_are_written_as_iso_utc_and_return_times_are_datetimes() -> None:
    base = dt.datetime(2024, 1, 1, 12, 0)
    naive = events([base, base + dt.timedelta(seconds=1)], [1, 2])
    (m,) = kleene.compile(PAIR).run(naive)
    # RETURN of a time gives the time (like start and end), not the engine's microseconds;
    # arithmetic on times stays in microseconds
    assert m.values()["a.timestamp"] == m.start
    assert m.values()["took"] == 1_000_000
    line = json.loads(dumps(match_record(m)))
    assert line["start"] == "2024-01-01T12:00:00+00:00"  # a naive time is taken as UTC
    assert line["a.timestamp"] == line["start"]
    assert line["return:start"] == 2  # named like a fixed key
    assert utc(dt.datetime(2024, 1, 1, 13, 0, tzinfo=BERLIN)) == dt.datetime(
        2024, 1, 1, 12, 0, tzinfo=dt.UTC
    )


COLLAPSED = """
PATTERN SEQ(S a, S+ b[], S c)
WHERE skip_till_any_match(a, b[], c) { [sym] and b[i].price > a.price and c.price < a.price }
WITHIN 10 OUTPUT COLLAPSED
"""


def test_collapsed_records_carry_their_count(tmp_path: Path) -> None:
    source = tmp_path / "e.parquet"
    write_table(events(list(range(1, 6)), [5, 6, 7, 8, 1]), source)
    query = tmp_path / "q.sase"
    query.write_text(COLLAPSED)
    output = tmp_path / "m.jsonl"
    assert main(["run", str(query), "-i", str(source), "-o", str(output), "-q"]) == EXIT_OK
    records = [json.loads(line) for line in output.read_text().splitlines()]
    # a = 5, 6 or 7 (c = 1 is below each); b takes any non-empty subset of the rising
    # events above a: 2**3 - 1, 2**2 - 1 and 2**1 - 1 matches
    assert sorted(r["collapsed"]["count"] for r in records) == [1, 3, 7]
    every = kleene.compile(COLLAPSED.replace("OUTPUT COLLAPSED", ""))
    assert len(every.run(events(list(range(1, 6)), [5, 6, 7, 8, 1]))) == 11


def test_the_documented_sort_orders_by_end_then_start_then_ids() -> None:
    records = [
        {"ids": {"a": [2]}, "start": 2, "end": 5},
        {"ids": {"a": [1]}, "start": 1, "end": 5},
        {"ids": {"a": [0]}, "start": 3, "end": 4},
        {"ids": {"a": [3]}, "start": 1, "end": 5},
    ]
    ordered = sorted(records, key=match_order)
    assert [r["ids"]["a"][0] for r in ordered] == [0, 1, 3, 2]
    rejected = [{"id": 2, "reason": "b"}, {"id": None, "reason": "z"}, {"id": 2, "reason": "a"}]
    assert sorted(rejected, key=rejected_order) == [rejected[1], rejected[2], rejected[0]]


def test_late_events_name_the_latest_time_and_the_allowed_lateness() -> None:
    stream = events([5, 9, 7, 6, 3], [1, 2, 3, 4, 5])
    q = kleene.compile(PAIR, allowed_lateness=2.0)
    rejected = q.run_detailed(stream).rejected
    assert [(r.id, r.reason) for r in rejected] == [
        (
            3,
            "late event: time 6 is more than the allowed lateness (2.0) before the latest "
            "time so far, 9",
        ),
        (
            4,
            "late event: time 3 is more than the allowed lateness (2.0) before the latest "
            "time so far, 9",
        ),
    ]
    in_order = kleene.compile(PAIR).run_detailed(stream).rejected
    assert [(r.id, r.reason) for r in in_order] == [
        (2, "late event: time 7 is before the stream's current time 9"),
        (3, "late event: time 6 is before the stream's current time 9"),
        (4, "late event: time 3 is before the stream's current time 9"),
    ]


def test_flat_rows_and_records_encode_the_same_match() -> None:
    """A match's flat row (Spark) and its record (files) carry the same ids, times and
    RETURN values; a RETURN name that clashes with a column or a variable is prefixed."""
    q = kleene.compile(
        "PATTERN SEQ(S a, S b) WHERE skip_till_any_match AND b.price > a.price WITHIN 10 "
        "RETURN b.price - a.price AS a, a.price AS end, b.price AS rise"
    )
    columns = OutputColumns.of(q.plan)
    assert columns.return_columns == ("return:a", "return:end", "rise")
    (m,) = q.run(events([1, 2], [5, 8]))
    row, record = match_row(columns, m), match_record(m)
    assert {v: row[v] for v in columns.variables} == record["ids"] == {"a": [0], "b": [1]}
    assert (row["start"], row["end"]) == (record["start"], record["end"]) == (1, 2)
    assert (row["return:a"], row["return:end"], row["rise"]) == (3, 5, 8)
    assert (record["a"], record["return:end"], record["rise"]) == (3, 5, 8)
    assert row["match_id"] == match_id({"b": [1], "a": [0]})


def test_a_variable_named_like_an_output_column_is_refused() -> None:
    q = kleene.compile("PATTERN SEQ(S start, S b) RETURN b.price")
    with pytest.raises(kleene.QueryError, match="'start' appears twice"):
        OutputColumns.of(q.plan).check_matches()
    named_like_a_column = kleene.compile("PATTERN SEQ(S exact, S+ b[]) WHERE skip_till_any_match")
    with pytest.raises(kleene.QueryError, match="clashes with a collapsed output column"):
        OutputColumns.of(named_like_a_column.plan).check_collapsed()


def test_collapsed_and_rejected_rows() -> None:
    q = kleene.compile(COLLAPSED)
    columns = OutputColumns.of(q.plan)
    found = q.run_collapsed(events(list(range(1, 6)), [5, 6, 7, 8, 1]))
    rows = [collapsed_row(columns, c) for c in found]
    assert sorted(r["count"] for r in rows) == [1, 3, 7]
    for row, c in zip(rows, found, strict=True):
        assert row["partition"] == ["1"]  # the key [sym] as text
        assert [x["id"] for x in row["b"]] == [i for i, _ in c.candidates["b"]]
        assert row["a"] == c.singles["a"] and row["c"] == c.singles["c"]
    assert len({r["collapsed_id"] for r in rows}) == 3
    bad = kleene.match.RejectedEvent(7, 3, "late", {"t": dt.datetime(2024, 1, 1), "x": 1.5})
    assert rejected_row(bad) == {
        "id": 7,
        "reason": "late",
        "record": '{"t":"2024-01-01T00:00:00+00:00","x":1.5}',
    }
