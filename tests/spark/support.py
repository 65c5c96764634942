"""Helpers shared by the Spark tests: match sets in one comparable form."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame

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
