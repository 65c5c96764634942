"""The file layer under the command: formats, readers, writers and sinks."""

from __future__ import annotations

import datetime as dt
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kleene.errors import EventError
from kleene.io import (
    Format,
    FormatError,
    MatchSink,
    RejectedSink,
    default_rejected_path,
    infer_format,
    read_events,
    read_table,
    write_table,
)
from kleene.io.jsonl import to_jsonable
from kleene.match import Match, RejectedEvent


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.csv", Format.CSV),
        ("a.CSV", Format.CSV),
        ("a.csv.gz", Format.CSV),
        ("a.jsonl", Format.JSONL),
        ("a.ndjson", Format.JSONL),
        ("a.json", Format.JSONL),
        ("dir.v2/a.parquet", Format.PARQUET),
        ("a.pq", Format.PARQUET),
    ],
)
def test_format_from_extension(name: str, expected: Format) -> None:
    assert infer_format(name) is expected


def test_explicit_format_wins_and_unknown_ones_are_refused() -> None:
    assert infer_format("a.txt", "parquet") is Format.PARQUET
    assert infer_format("a.csv", Format.JSONL) is Format.JSONL
    with pytest.raises(FormatError):
        infer_format("a.txt")
    with pytest.raises(FormatError):
        infer_format("a.csv", "xml")


MIXED = pa.table(
    {
        "i": pa.array([1, None, -3], pa.int64()),
        "f": pa.array([1.0, 2.5, None], pa.float64()),
        "s": pa.array(["plain", None, "ünïcode"], pa.string()),
        "b": pa.array([True, None, False]),
    }
)


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet", "csv.gz", "jsonl.gz"])
def test_round_trip(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / f"t.{fmt}"
    write_table(MIXED, path)
    back = read_table(path)
    assert back.column_names == MIXED.column_names
    assert back.to_pylist() == MIXED.to_pylist()


def test_jsonl_escapes_text_and_keeps_floats_floats(tmp_path: Path) -> None:
    table = pa.table({"s": ['quote " and \\ back', "new\nline", "tab\t"], "f": [1.0, 1e20, -0.5]})
    path = tmp_path / "t.jsonl"
    write_table(table, path)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows == table.to_pylist()
    assert all(isinstance(r["f"], float) for r in rows)


def test_jsonl_writes_timestamps_as_iso_text(tmp_path: Path) -> None:
    when = dt.datetime(2024, 5, 1, 12, 30)
    path = tmp_path / "t.jsonl"
    write_table(pa.table({"t": [when]}), path)
    assert json.loads(path.read_text()) == {"t": "2024-05-01T12:30:00"}
    assert read_table(path).column("t").to_pylist() == [when]


def test_jsonl_with_mixed_kinds_reads_as_objects(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        '{"t": "2024-01-01T00:00:00", "price": 5}\n'
        '{"t": "2024-01-01T00:00:01", "price": "five", "extra": true}\n'
    )
    events = read_events(path)
    assert isinstance(events, pd.DataFrame)
    assert events["price"].tolist() == [5, "five"]
    assert pd.api.types.is_datetime64_any_dtype(events["t"])
    assert events["extra"].tolist()[1] is True
    with pytest.raises(EventError):
        read_table(path)


def test_reader_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_events(tmp_path / "none.csv")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": 1}\n[1, 2]\n')
    with pytest.raises(EventError, match="line 2"):
        read_events(bad)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert read_table(empty).num_rows == 0


def test_to_jsonable() -> None:
    value = {
        "np": np.int64(3),
        "nan": float("nan"),
        "inf": np.float64("inf"),
        "tuple": (1, 2),
        "date": dt.date(2024, 1, 2),
        "ts": pd.Timestamp("2024-01-02T03:04:05"),
        "nat": pd.NaT,
        "bytes": b"\xff",
    }
    out = to_jsonable(value)
    assert out == {
        "np": 3,
        "nan": None,
        "inf": None,
        "tuple": [1, 2],
        "date": "2024-01-02",
        "ts": "2024-01-02T03:04:05",
        "nat": None,
        "bytes": "ff",
    }
    json.dumps(out, allow_nan=False)
    assert not math.isnan(to_jsonable(1.5))


def _match(ids_a: tuple[int, ...], b: int, returned: dict[str, object]) -> Match:
    return Match(
        variables={"a": ids_a, "b": (b,)},
        positions={"a": ids_a, "b": (b,)},
        start=ids_a[0],
        end=b,
        partition=(7, "x"),
        returned=returned,
    )


def test_match_sinks(tmp_path: Path) -> None:
    matches = [_match((1, 2), 3, {"n": 2, "end": "clash"}), _match((4,), 6, {"n": 1, "end": "c"})]
    with MatchSink(tmp_path / "m.jsonl") as sink:
        assert sink.add(matches) == 2
    lines = [json.loads(x) for x in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert lines[0] == {
        "ids": {"a": [1, 2], "b": [3]},
        "start": 1,
        "end": 3,
        "partition": [7, "x"],
        "n": 2,
        "return:end": "clash",
    }
    with MatchSink(tmp_path / "m.parquet", partition_names=("sym", "k")) as sink:
        sink.add(matches)
    rows = pq.read_table(tmp_path / "m.parquet").to_pylist()
    assert rows[1]["ids"] == {"a": [4], "b": [6]}
    assert rows[1]["partition"] == {"sym": 7, "k": "x"}
    assert [r["n"] for r in rows] == [2, 1]


def test_empty_parquet_match_file_has_typed_columns(tmp_path: Path) -> None:
    path = tmp_path / "none.parquet"
    with MatchSink(path, variables=("a", "b"), partition_names=("symbol",)):
        pass
    table = pq.read_table(path)
    assert table.num_rows == 0
    assert table.schema.field("ids").type == pa.struct(
        [("a", pa.list_(pa.int64())), ("b", pa.list_(pa.int64()))]
    )


def test_rejected_sinks(tmp_path: Path) -> None:
    events = [
        RejectedEvent(3, 2, "missing attribute price", {"id": 3, "price": None}),
        RejectedEvent(9, None, "late event", {"id": 9, "price": 1}),
    ]
    with RejectedSink(tmp_path / "r.jsonl") as sink:
        sink.add(events)
    lines = [json.loads(x) for x in (tmp_path / "r.jsonl").read_text().splitlines()]
    assert lines[0] == {
        "id": 3,
        "position": 2,
        "reason": "missing attribute price",
        "record": {"id": 3, "price": None},
    }
    with RejectedSink(tmp_path / "r.parquet") as sink:
        sink.add(events)
    rows = pq.read_table(tmp_path / "r.parquet").to_pylist()
    assert [(r["id"], r["position"], r["reason"]) for r in rows] == [
        (3, 2, "missing attribute price"),
        (9, None, "late event"),
    ]
    with pytest.raises(FormatError):
        RejectedSink(tmp_path / "r.csv")


def test_default_rejected_path() -> None:
    assert default_rejected_path("out/m.parquet") == Path("out/m.parquet.rejected.jsonl")
