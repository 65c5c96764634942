"""The code that runs inside Spark's Python workers for interval events
(:mod:`kleene.spark.intervals`).

* :class:`IntervalAdmission`: the admission pass, one worker over the whole input in
  arrival order (:class:`kleene.imprecise.admission.Admission`, the local engine's own
  checks); it writes one row per rejected event and, last, the measured U_max.
* :class:`IntervalGroupMatcher`: the batch pipeline's group matcher
  (:class:`kleene.spark._worker.GroupMatcher`) with an interval matcher per (key, slice)
  group, fed in arrival order, keeping the results whose time range starts in its slice.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from kleene.imprecise import IntervalQuery
from kleene.imprecise.admission import Admission
from kleene.imprecise.matcher import IntervalMatcher
from kleene.imprecise.result import ImpreciseMatch
from kleene.io.jsonl import dumps
from kleene.io.schema import match_id, plain, record_json, utc
from kleene.match import RejectedEvent
from kleene.spark._prepare import INTERNAL_PREFIX, POS
from kleene.spark._query import QuerySpec
from kleene.spark._rows import RowEncoder, arrow_array
from kleene.spark._schema import MatchSchema
from kleene.spark._slicing import home_slice
from kleene.spark._worker import GroupMatcher

ID_JSON = "kleene__id_json"  # the rejected event's id as JSON: its exact value and type
U_MAX = "kleene__u_max"
CONFIDENCE = "confidence"


def compiled(spec: QuerySpec) -> IntervalQuery:
    """The spec's interval query (compiled once per process)."""
    q: Any = spec.compile()
    assert isinstance(q, IntervalQuery)
    return q


def admission_schema(id_type: T.DataType) -> T.StructType:
    """The admission pass's rows: a rejected event (``POS`` its arrival position), or
    the last row (``POS`` -1) with the U_max measured over the admitted events."""
    return T.StructType(
        [
            T.StructField(POS, T.LongType()),
            T.StructField("id", id_type),
            T.StructField("position", T.LongType()),
            T.StructField("reason", T.StringType()),
            T.StructField("record", T.StringType()),
            T.StructField(ID_JSON, T.StringType()),
            T.StructField(U_MAX, T.LongType()),
        ]
    )


def without_internal(table: pa.Table) -> pa.Table:
    return table.drop_columns([c for c in table.column_names if c.startswith(INTERNAL_PREFIX)])


@dataclass(frozen=True)
class IntervalAdmission:
    """The admission pass over every event, sorted by arrival position in one task."""

    spec: QuerySpec
    schema: T.StructType  # admission_schema(...)
    added_id: bool = False  # the id column was added from positions (not in the input)

    def map_batches(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        q = compiled(self.spec)
        admission = Admission(q.plan, q.fields, q.interval)
        arrow = to_arrow_schema(self.schema, timezone="UTC")
        u_max = 0
        for batch in batches:
            if batch.num_rows:
                admitted = admission.admit(without_internal(pa.Table.from_batches([batch])))
                u_max = max([u_max, *(e.upper - e.lower for e in admitted)])
                rows = [self._row(r) for r in admission.rejected]
                admission.rejected = []
                if rows:
                    yield _batch(rows, arrow)
        yield _batch([{POS: -1, U_MAX: u_max}], arrow)

    def _row(self, r: RejectedEvent) -> dict[str, Any]:
        record = dict(r.record)
        if self.added_id:
            record.pop(self.spec.columns.id_field, None)
        return {
            POS: r.position,
            "id": plain(r.id),
            "position": r.position,
            "reason": r.reason,
            "record": record_json(record),
            ID_JSON: dumps(utc(plain(r.id))),
        }


def _batch(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.RecordBatch:
    arrays = [arrow_array([row.get(f.name) for row in rows], f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


@dataclass(frozen=True)
class IntervalSchema(MatchSchema):
    """Match rows of interval results: those of :class:`MatchSchema` (``start``/``end``
    the result's time range, ``partition`` empty) with ``confidence`` after ``end``."""

    @property
    def return_columns(self) -> tuple[str, ...]:
        return tuple(f"return:{c}" if c == CONFIDENCE else c for c in super().return_columns)

    def struct(self) -> T.StructType:
        fields = list(super().struct().fields)
        at = [f.name for f in fields].index("end") + 1
        fields.insert(at, T.StructField(CONFIDENCE, T.DoubleType()))
        return T.StructType(fields)


def interval_row(schema: MatchSchema, m: ImpreciseMatch) -> dict[str, Any]:
    """The flat row of one interval result (:mod:`kleene.io.schema`'s match row)."""
    ids = m.ids()
    values = m.values()
    row: dict[str, Any] = {
        "match_id": match_id(ids),
        "partition": [],
        "start": m.start,
        "end": m.end,
        CONFIDENCE: float(m.confidence),
    }
    for var in schema.variables:
        row[var] = [plain(i) for i in ids.get(var, ())]
    for name, column in zip(schema.return_names, schema.return_columns, strict=True):
        row[column] = plain(values.get(name))
    return row


class IntervalRowEncoder(RowEncoder):
    def _row(self, m: Any) -> dict[str, Any]:
        assert isinstance(self.ms, MatchSchema)
        return interval_row(self.ms, m)


@dataclass(frozen=True)
class IntervalGroupMatcher(GroupMatcher):
    """An interval matcher per (key, slice) group; ``spec`` declares the U_max the
    admission pass measured, so every group runs the framework the local engine
    chooses (kleene.imprecise.choice)."""

    def _encoder(self) -> RowEncoder:
        return IntervalRowEncoder(self.schema)

    def _start(self, key: tuple[Any, ...]) -> Any:
        q = compiled(self.spec)
        return _IntervalRun(q.matcher(), self.cuts, key[-1] if self.cuts else None)


@dataclass
class _IntervalRun:
    """One group's matcher, keeping the results it owns: those whose time range starts
    in its slice (kleene.spark.intervals explains why each is found exactly once)."""

    matcher: IntervalMatcher
    cuts: Sequence[float]
    slice_index: int | None

    def push(self, table: pa.Table) -> tuple[list[Any], list[RejectedEvent]]:
        return self._owned(self.matcher.push(without_internal(table)))

    def finish(self) -> tuple[list[Any], list[RejectedEvent]]:
        return self._owned(self.matcher.flush())

    def _owned(self, found: list[ImpreciseMatch]) -> tuple[list[Any], list[RejectedEvent]]:
        # the admission pass rejected every event a group matcher could reject
        assert not self.matcher.take_rejected()
        if self.slice_index is not None:
            found = [m for m in found if home_slice(m.start, self.cuts) == self.slice_index]
        return list(found), []
