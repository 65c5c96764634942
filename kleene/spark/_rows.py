"""Turning matcher output (matches and rejected events) into rows Spark can take.

The matcher runs inside a Python worker; what it finds leaves the worker as one Arrow
batch (or pandas frame) per call, in the *combined* layout: a kind column (``match`` or
``rejected``), the result columns, and the rejected-event columns. The result columns
are those of a :class:`~kleene.spark._schema.MatchSchema` (one row per match) or, for
``OUTPUT COLLAPSED``, of a :class:`~kleene.spark._collapsed.CollapsedSchema` (one row
per collapsed result, SIGMOD 2014 section 5.2). One layout lets a single Spark operator
emit both kinds of rows; the caller splits them with two filters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from kleene.collapsed import CollapsedMatch, Result
from kleene.io.schema import REJECTED_COLUMNS, collapsed_row, match_row, rejected_row
from kleene.match import Match, RejectedEvent
from kleene.spark._collapsed import CollapsedSchema
from kleene.spark._schema import MatchSchema

RowLayout = MatchSchema | CollapsedSchema

KIND = "kleene__kind"
REJECTED_ID = "kleene__rejected_id"
REASON = "kleene__reason"
RECORD = "kleene__record"
MATCH_KIND = "match"
REJECTED_KIND = "rejected"
# the rejected-row columns (kleene.io.schema) under their combined-layout names
_REJECTED = dict(zip(REJECTED_COLUMNS, (REJECTED_ID, REASON, RECORD), strict=True))


def combined_schema(ms: RowLayout) -> T.StructType:
    """Match and rejected rows in one schema; every column is nullable."""
    fields = [T.StructField(KIND, T.StringType())]
    fields += [T.StructField(f.name, f.dataType, True) for f in ms.struct().fields]
    fields += [
        T.StructField(REJECTED_ID, ms.id_type),
        T.StructField(REASON, T.StringType()),
        T.StructField(RECORD, T.StringType()),
    ]
    return T.StructType(fields)


def split_output(batch: DataFrame, schema: RowLayout) -> tuple[DataFrame, DataFrame]:
    """The result rows and the rejected rows of the combined layout."""
    matches = batch.where(F.col(KIND) == MATCH_KIND).select(
        *[F.col(f"`{f.name}`") for f in schema.struct().fields]
    )
    rejected = batch.where(F.col(KIND) == REJECTED_KIND).select(
        *[F.col(column).alias(name) for name, column in _REJECTED.items()]
    )
    return matches, rejected


class RowEncoder:
    """Builds combined-layout columns from results (matches, or collapsed results for a
    collapsed layout) and rejected events."""

    def __init__(self, ms: RowLayout) -> None:
        self.ms = ms
        self.spark_schema = combined_schema(ms)
        self.arrow_schema = to_arrow_schema(self.spark_schema, timezone="UTC")
        self.names = [f.name for f in self.spark_schema.fields]

    def columns(
        self, matches: Iterable[Result], rejected: Iterable[RejectedEvent]
    ) -> dict[str, list[Any]]:
        cols: dict[str, list[Any]] = {name: [] for name in self.names}
        for m in matches:
            row = self._row(m)
            row[KIND] = MATCH_KIND
            for name in self.names:
                cols[name].append(row.get(name))
        for r in rejected:
            row = {KIND: REJECTED_KIND}
            row.update((_REJECTED[k], v) for k, v in rejected_row(r).items())
            for name in self.names:
                cols[name].append(row.get(name))
        return cols

    def _row(self, m: Result) -> dict[str, Any]:
        columns = self.ms.columns
        if isinstance(self.ms, CollapsedSchema):
            if not isinstance(m, CollapsedMatch):
                raise TypeError("a collapsed layout takes collapsed results")
            return collapsed_row(columns, m)
        if not isinstance(m, Match):
            raise TypeError("a match layout takes matches; expand collapsed results first")
        return match_row(columns, m)

    def to_arrow(
        self, matches: Iterable[Result], rejected: Iterable[RejectedEvent]
    ) -> pa.RecordBatch:
        cols = self.columns(matches, rejected)
        arrays = [arrow_array(cols[f.name], f.type) for f in self.arrow_schema]
        return pa.RecordBatch.from_arrays(arrays, schema=self.arrow_schema)

    def to_pandas(
        self, matches: Iterable[Result], rejected: Iterable[RejectedEvent]
    ) -> pd.DataFrame:
        batch = self.to_arrow(matches, rejected)
        return batch.to_pandas()


def arrow_array(values: list[Any], arrow_type: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return pa.array([_coerce(v, arrow_type) for v in values], type=arrow_type)


def _coerce(value: Any, arrow_type: pa.DataType) -> Any:
    """A value converted to the Python kind the Arrow type holds (None when impossible)."""
    if value is None:
        return None
    try:
        if pa.types.is_integer(arrow_type):
            as_float = float(value)
            return int(as_float) if as_float.is_integer() else None
        if pa.types.is_floating(arrow_type):
            return float(value)
        if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
            return str(value)
        if pa.types.is_boolean(arrow_type):
            return bool(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return None
