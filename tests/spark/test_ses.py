"""``kleene run --engine spark`` writes the files of ``--engine local`` for event-set
patterns (match windows per partition key, :mod:`kleene.spark.eventsets`), on awkward
inputs: nulls in the partitioning attribute, missing attribute values, ties in time,
events out of time order (rejected as late), no id column, datetimes, and a pattern
without partitioning attributes (one group)."""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from kleene.cli import EXIT_OK, main
from kleene.io import write_table
from kleene.io.records import match_order, rejected_order

pytestmark = pytest.mark.spark

CHEMO = (
    "PATTERN SEQ({C c, P+ p}, {B b}) WHERE c.PID = p.PID AND p.PID = b.PID "
    "AND prev(p.V) < p.V AND b.V < 50 WITHIN 6"
)
UNPARTITIONED = "PATTERN SEQ({C c, P+ p}, {B b}) WHERE p.V > c.V WITHIN 4 OUTPUT EARLIEST MAXIMAL"


def awkward(n: int, seed: int) -> pa.Table:
    """Events of four types over three patients and a null one; some V missing; times
    with ties (steps of 0) and some moved back by up to 3 (late unless tied)."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    time = 0
    for k in range(n):
        time += rng.choice([0, 1, 1, 2])
        rows.append(
            {
                "id": k,
                "type": rng.choice("CPPBBD"),
                "timestamp": time - (rng.choice([1, 3]) if rng.random() < 0.08 else 0),
                "PID": rng.choice([1, 2, 3, None]),
                "V": None if rng.random() < 0.05 else rng.randint(0, 99),
            }
        )
    return pa.Table.from_pylist(rows)


def datetimes(table: pa.Table) -> pa.Table:
    base = dt.datetime(2011, 7, 1, tzinfo=dt.UTC)
    days = [base + dt.timedelta(days=t) for t in table["timestamp"].to_pylist()]
    at = table.schema.get_field_index("timestamp")
    return table.set_column(at, "timestamp", pa.array(days, pa.timestamp("us", tz="UTC")))


CASES: list[tuple[str, str, Callable[[], pa.Table], str, tuple[str, ...]]] = [
    ("partitioned-csv", CHEMO, lambda: awkward(300, 1), "csv", ()),
    (
        "partitioned-datetimes-no-id",
        CHEMO.replace("WITHIN 6", "WITHIN 6 days"),
        lambda: datetimes(awkward(300, 2)).drop_columns(["id"]),
        "parquet",
        ("--algorithm", "jointree", "--preprocessing", "fp"),
    ),
    ("one-group", UNPARTITIONED, lambda: awkward(200, 3), "parquet", ()),
]


def _lines(path: Path, key: Callable[[dict[str, Any]], Any]) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return sorted(lines, key=lambda line: key(json.loads(line)))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_engines_write_the_same_files(
    spark: SparkSession, case: tuple[Any, ...], tmp_path: Path
) -> None:
    _, text, events, suffix, options = case
    source = tmp_path / f"events.{suffix}"
    write_table(events(), source)
    query = tmp_path / "q.ses"
    query.write_text(text)
    written = {}
    for engine in ("local", "spark"):
        output = tmp_path / f"{engine}.jsonl"
        args = ["run", str(query), "-i", str(source), "-o", str(output), "-q", *options]
        args += ["--engine", engine] + (["--master", "local[1]"] if engine == "spark" else [])
        assert main(args) == EXIT_OK
        rejected = tmp_path / f"{engine}.jsonl.rejected.jsonl"
        written[engine] = (_lines(output, match_order), _lines(rejected, rejected_order))
    matches, rejected = written["local"]
    assert matches  # the case exercises the matcher
    assert any("late event" in line for line in rejected)
    assert written["spark"] == written["local"]


def test_match_takes_a_compiled_query_with_its_fields(spark: SparkSession) -> None:
    """Q1 over the Chemo events (type in L, time in T, days) through kleene.spark.match:
    the query's fields and options carry over; the matches are the local ones."""
    import kleene
    import kleene.spark as ks
    from tests.eventsets.chemo import Q1, events

    q = kleene.compile(Q1, type_field="L", time_field="T", time_unit="d", algorithm="jointree")
    frame = pd.DataFrame(events())  # V as doubles (Figure 1 mixes 88 and 111.5)
    result = ks.match(spark.createDataFrame(frame), q)
    assert result.layout.key == ("PID",)
    found, rejected = result.collect()
    assert rejected == []
    local = q.run(frame)
    assert len(local) == 11
    assert sorted(tuple(m.ids().items()) for m in found) == sorted(
        tuple(m.ids().items()) for m in local
    )
