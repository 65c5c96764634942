"""Helpers shared by the Spark tests: match sets in one comparable form."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark.sql import DataFrame, SparkSession

import kleene

MatchKey = frozenset[tuple[str, tuple[Any, ...]]]


def local_keys(matches: Iterable[kleene.Match]) -> set[MatchKey]:
    """Each match as the set of (variable, ids) pairs."""
    return {frozenset((v, tuple(ids)) for v, ids in m.ids().items()) for m in matches}


def spark_keys(df: DataFrame, variables: Sequence[str]) -> list[MatchKey]:
    """The match rows of a Spark result in the same form (a list: duplicates show)."""
    return [frozenset((v, tuple(row[v])) for v in variables) for row in df.collect()]


def time_sorted(table: pa.Table, time_field: str = "timestamp") -> pa.Table:
    """The table in stream order: by time, ties in input order."""
    order = pa.array(range(table.num_rows), pa.int64())
    tagged = table.append_column("__order", order)
    ordered = tagged.sort_by([(time_field, "ascending"), ("__order", "ascending")])
    return ordered.drop_columns(["__order"])


def with_symbol(table: pa.Table, symbol: int) -> pa.Table:
    return table.filter(pc.equal(table["symbol"], symbol))


def two_file_frame(spark: SparkSession, events: pa.Table, folder: Path) -> DataFrame:
    """``events`` written as two Parquet files and read back: an input of two
    partitions, whose positions need offsets."""
    half = events.num_rows // 2
    pq.write_table(events.slice(0, half), folder / "part-0.parquet")
    pq.write_table(events.slice(half), folder / "part-1.parquet")
    return spark.read.parquet(str(folder))
