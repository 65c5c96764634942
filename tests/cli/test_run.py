"""``kleene run`` through the real command: the same matches as the in-process API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

import kleene
from kleene.cli import EXIT_OK, main
from kleene.datagen.stock import generate
from kleene.io import match_record, write_table
from tests.cli.support import (
    EXAMPLES,
    canonical,
    expected_record,
    read_jsonl,
    read_parquet_matches,
)
from tests.cli.support import (
    kleene as run_kleene,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

RISING = EXAMPLES / "stock_rising.sase"
RETURNS = EXAMPLES / "stock_rising_returns.sase"
FORMATS = ("csv", "jsonl", "parquet")


@pytest.fixture(scope="module")
def stream() -> pa.Table:
    return generate(20_000, symbols=2, increase_prob=0.7, seed=5)


@pytest.fixture(scope="module")
def inputs(stream: pa.Table, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("events")
    paths = {}
    for fmt in FORMATS:
        paths[fmt] = folder / f"stock.{fmt}"
        write_table(stream, paths[fmt])
    return paths


def _expected(query_file: Path, events: object, **options: object) -> list[str]:
    query = kleene.compile(query_file.read_text(), **options)
    return canonical(expected_record(m) for m in query.run(events))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("query_file", [RISING, RETURNS], ids=["rising", "returns"])
def test_run_matches_in_process_run(
    fmt: str, query_file: Path, inputs: dict[str, Path], stream: pa.Table, tmp_path: Path
) -> None:
    output = tmp_path / "matches.jsonl"
    done = run_kleene("run", query_file, "--input", inputs[fmt], "--output", output)
    assert done.returncode == 0, done.stderr
    found = read_jsonl(output)
    expected = _expected(query_file, stream)
    assert len(expected) > 0
    assert canonical(found) == expected
    rejected = tmp_path / "matches.jsonl.rejected.jsonl"
    assert rejected.exists() and read_jsonl(rejected) == []
    assert "events read" in done.stdout and "20,000" in done.stdout
    assert f"{len(expected):,}" in done.stdout


def test_parquet_output_holds_the_same_matches(
    inputs: dict[str, Path], stream: pa.Table, tmp_path: Path
) -> None:
    output = tmp_path / "matches.parquet"
    done = run_kleene("run", RETURNS, "-i", inputs["parquet"], "-o", output, "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    table = pq.read_table(output)
    assert table.column_names[:4] == ["ids", "start", "end", "partition"]
    assert "mean_price" in table.column_names
    assert canonical(read_parquet_matches(output)) == _expected(RETURNS, stream)


def test_small_batches_change_nothing(
    inputs: dict[str, Path], stream: pa.Table, tmp_path: Path
) -> None:
    output = tmp_path / "matches.jsonl"
    done = run_kleene(
        "run", RETURNS, "-i", inputs["csv"], "-o", output, "--batch-size", "777", "-q"
    )
    assert done.returncode == 0, done.stderr
    assert canonical(read_jsonl(output)) == _expected(RETURNS, stream)


def test_format_flag_overrides_the_extension(
    inputs: dict[str, Path], stream: pa.Table, tmp_path: Path
) -> None:
    renamed = tmp_path / "events.data"
    renamed.write_bytes(inputs["jsonl"].read_bytes())
    output = tmp_path / "m.jsonl"
    done = run_kleene("run", RISING, "-i", renamed, "--format", "jsonl", "-o", output, "-q")
    assert done.returncode == 0, done.stderr
    assert canonical(read_jsonl(output)) == _expected(RISING, stream)


def test_ids_default_to_input_positions(stream: pa.Table, tmp_path: Path) -> None:
    without_ids = stream.drop_columns(["id"]).slice(0, 8000)
    path = tmp_path / "noid.csv"
    write_table(without_ids, path)
    output = tmp_path / "m.jsonl"
    done = run_kleene("run", RETURNS, "-i", path, "-o", output, "-q", "--batch-size", "1000")
    assert done.returncode == 0, done.stderr
    found = read_jsonl(output)
    assert found and canonical(found) == _expected(RETURNS, without_ids)


def test_strategy_and_non_overlap_flags(
    inputs: dict[str, Path], stream: pa.Table, tmp_path: Path
) -> None:
    output = tmp_path / "m.jsonl"
    done = run_kleene(
        "run",
        RETURNS,
        "-i",
        inputs["parquet"],
        "-o",
        output,
        "-q",
        "--strategy",
        "partition-contiguity",
        "--non-overlap",
    )
    assert done.returncode == 0, done.stderr
    found = canonical(read_jsonl(output))
    expected = _expected(RETURNS, stream, strategy="partition_contiguity", output="non_overlap")
    assert found == expected
    assert found != _expected(RETURNS, stream)


def test_renamed_fields(stream: pa.Table, tmp_path: Path) -> None:
    renamed = stream.slice(0, 5000).rename_columns(
        ["eid", "kind", "ts", "symbol", "price", "volume"]
    )
    path = tmp_path / "renamed.parquet"
    write_table(renamed, path)
    output = tmp_path / "m.jsonl"
    done = run_kleene(
        "run",
        RETURNS,
        "-i",
        path,
        "-o",
        output,
        "-q",
        "--time-field",
        "ts",
        "--type-field",
        "kind",
        "--id-field",
        "eid",
    )
    assert done.returncode == 0, done.stderr
    expected = _expected(RETURNS, renamed, time_field="ts", type_field="kind", id_field="eid")
    assert expected and canonical(read_jsonl(output)) == expected


def test_rejected_events_are_written_with_their_reasons(tmp_path: Path) -> None:
    events = [
        {"id": 1, "type": "Stock", "timestamp": 1, "symbol": 1, "price": 500, "volume": 900},
        {"id": 2, "type": "Stock", "timestamp": 2, "symbol": 1, "price": 501, "volume": 800},
        {"id": 3, "type": "Stock", "timestamp": 3, "symbol": 1, "price": "high", "volume": 70},
        {"id": 4, "type": "Stock", "timestamp": 4, "symbol": 1, "price": 502},
        {"id": 5, "type": "Stock", "timestamp": 5, "symbol": 1, "price": 503, "volume": 100},
    ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    output = tmp_path / "m.jsonl"
    rejected_path = tmp_path / "bad.jsonl"
    done = run_kleene("run", RISING, "-i", path, "-o", output, "--rejected", rejected_path)
    assert done.returncode == 0, done.stderr
    query = kleene.compile(RISING.read_text())
    result = query.run_detailed(events)
    rejected = read_jsonl(rejected_path)
    assert [r["id"] for r in rejected] == [r.id for r in result.rejected] == [3, 4]
    assert [r["reason"] for r in rejected] == [r.reason for r in result.rejected]
    assert all(r["reason"] for r in rejected)
    assert rejected[0]["record"]["price"] == "high"
    matches = result.matches
    assert matches
    assert canonical(read_jsonl(output)) == canonical(expected_record(m) for m in matches)
    assert not (tmp_path / "m.jsonl.rejected.jsonl").exists()


def test_rejected_events_to_parquet(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_text("id,type,timestamp,symbol,price,volume\n1,Stock,1,1,500,\n2,Stock,2,1,501,90\n")
    output = tmp_path / "m.parquet"
    rejected_path = tmp_path / "bad.parquet"
    done = run_kleene("run", RISING, "-i", path, "-o", output, "--rejected", rejected_path, "-q")
    assert done.returncode == 0, done.stderr
    rows = pq.read_table(rejected_path).to_pylist()
    expected = kleene.compile(RISING.read_text()).run_detailed(pa_csv.read_csv(path)).rejected
    assert [(r["id"], r["reason"]) for r in rows] == [(e.id, e.reason) for e in expected]
    assert len(rows) == 1


@pytest.mark.spark
def test_spark_engine_gives_the_local_matches(
    inputs: dict[str, Path], stream: pa.Table, tmp_path: Path
) -> None:
    output = tmp_path / "spark.jsonl"
    done = run_kleene(
        "run",
        RETURNS,
        "-i",
        inputs["parquet"],
        "-o",
        output,
        "--engine",
        "spark",
        "--master",
        "local[2]",
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert "spark (local[2])" in done.stdout
    assert canonical(read_jsonl(output)) == _expected(RETURNS, stream)


COLLAPSED = """
PATTERN SEQ(Stock a, Stock+ b[], Stock c)
WHERE skip_till_any_match(a, b[], c) {
    [symbol] and a.volume < 100 and b[i].price > a.price
    and b[i].volume > b[i-1].volume and c.price < a.price }
WITHIN 6
OUTPUT COLLAPSED
"""


@pytest.mark.spark
def test_spark_engine_writes_the_local_collapsed_results(
    spark: SparkSession, inputs: dict[str, Path], stream: pa.Table, tmp_path: Path
) -> None:
    """In process, on the test session (the command itself on Spark is the test above)."""
    query_file = tmp_path / "collapsed.sase"
    query_file.write_text(COLLAPSED)
    written = {}
    for engine in ("local", "spark"):
        output = tmp_path / f"{engine}.jsonl"
        args = ["--engine", engine] + (["--master", "local[2]"] if engine == "spark" else [])
        assert (
            main(["run", str(query_file), "-i", str(inputs["parquet"]), "-o", str(output), *args])
            == EXIT_OK
        )
        written[engine] = read_jsonl(output)
    results = kleene.compile(COLLAPSED).run_collapsed(stream)
    assert len(results) > 10
    expected = json.loads(json.dumps([match_record(c) for c in results], default=str))
    assert canonical(written["spark"]) == canonical(written["local"]) == canonical(expected)
    assert all(r["collapsed"]["candidates"]["b"] for r in written["spark"])
