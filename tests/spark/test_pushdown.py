"""Single-event filters pushed into Spark's Parquet scan change no result.

A selective query over a Parquet file shows its property comparisons among the file
scan's ``PushedFilters``; ``kleene run --engine spark`` (push-down on) and ``--engine
local`` write the same match and rejected files on an awkward input: null types, times
and attributes, events of types outside the pattern, a negated type, a property that
divides by zero. When the input is not in time order (some events are late), the
pipeline falls back to reading everything, and the files are still equal.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import DataFrame, SparkSession

from kleene import spark as kspark
from kleene.cli import EXIT_OK
from kleene.io import write_table
from kleene.io.records import match_order, rejected_order
from kleene.spark import _pushdown
from tests.spark.test_local_vs_spark_files import run, sorted_lines

pytestmark = pytest.mark.spark

QUERY = """
PATTERN SEQ(A a, ~(D d), B b)
WHERE skip_till_any_match AND [k] AND a.price > 80 AND b.price / b.qty > 20
      AND b.name != 'x'
WITHIN 200
RETURN a.price, b.price
"""


def awkward_events(n: int, seed: int, late_type: str | None) -> pa.Table:
    """Events in time order but, with ``late_type``, a few late ones of that type;
    some cells are null."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    for j in range(n):
        t = 10 * j
        kind = rng.choice(["A", "A", "B", "B", "C", "C", "C", "D"])
        row = {
            "id": j,
            "type": kind,
            "timestamp": t,
            "price": rng.randrange(0, 101),
            "qty": rng.choice([0.0, 1.0, 2.5, 3.0]),  # b.price / b.qty: division by zero
            "name": rng.choice(["x", "y", "z"]),
            "k": rng.choice(["p", "q"]),
        }
        if late_type and j % 50 == 25:  # late: 25 time units behind the event before it
            row.update(type=late_type, timestamp=t - 35, price=99)
        for cell in ("type", "timestamp", "price", "qty", "k"):
            if rng.random() < 0.02:
                row[cell] = None
        rows.append(row)
    return pa.Table.from_pylist(rows)


def _plan(spark: SparkSession, df: DataFrame) -> str:
    """The physical plan, its scans' filters written out in full."""
    key = "spark.sql.maxMetadataStringLength"
    before = spark.conf.get(key)
    spark.conf.set(key, "100000")
    try:
        return str(df._jdf.queryExecution().executedPlan().toString())
    finally:
        spark.conf.set(key, before)


def test_selective_query_filters_in_the_parquet_scan(spark: SparkSession, tmp_path: Path) -> None:
    source = tmp_path / "events.parquet"
    write_table(awkward_events(400, 1, None), source)
    frame = spark.read.parquet(str(source))
    plan = _plan(spark, kspark.match(frame, QUERY).combined)
    scans = " ".join(re.findall(r"PushedFilters: (\[.*?\]), ReadSchema", plan))
    # types outside the pattern (C) and A events with a.price <= 80 go in the scan
    assert "In(type, [A,B,D])" in scans
    assert "Or(Or(IsNull(k),IsNull(price)),GreaterThan(price,80))" in scans
    # b's properties (a NaN check on a double, a division) in the Filter above the scan
    assert "/ CASE WHEN (qty#" in plan and "/ CASE WHEN" not in scans
    plain = _plan(spark, kspark.match(frame, QUERY, pushdown=False).combined)
    assert "PushedFilters: []" in plain


@pytest.mark.parametrize("late_type,active", [(None, True), ("C", False)])
def test_engines_write_the_same_files_with_pushdown(
    spark: SparkSession,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    late_type: str | None,
    active: bool,
) -> None:
    source = tmp_path / "events.parquet"
    write_table(awkward_events(500, 2, late_type), source)
    query = tmp_path / "query.sase"
    query.write_text(QUERY)
    prepared: list[DataFrame | None] = []
    real = _pushdown.prepared_with_pushdown

    def recording(*args: Any, **kwargs: Any) -> DataFrame | None:
        prepared.append(real(*args, **kwargs))
        return prepared[-1]

    monkeypatch.setattr(_pushdown, "prepared_with_pushdown", recording)
    written = {}
    for engine in ("local", "spark"):
        output = tmp_path / f"{engine}.jsonl"
        assert run(query, source, output, engine, 0.0) == EXIT_OK
        rejected = tmp_path / f"{engine}.jsonl.rejected.jsonl"
        written[engine] = (
            sorted_lines(output, match_order),
            sorted_lines(rejected, rejected_order),
        )
    assert len(prepared) == 1 and (prepared[0] is not None) == active
    matches, rejected = written["local"]
    assert matches
    assert any("late event" in line for line in rejected) == (late_type is not None)
    assert any("missing attribute" in line for line in rejected)
    assert written["spark"] == written["local"]
