"""Queries over events with uncertainty intervals on Spark (VLDB 2010): an
:class:`~kleene.imprecise.IntervalQuery`, or query text with ``time="interval"``.

The batch pipeline is the one of every kind (:mod:`kleene.spark.batch`); its grouping
differs from that of point events in two steps:

1. **Admission** runs once over the whole input in arrival order (the input order), in
   one task, with the local engine's own checks (:mod:`kleene.imprecise.admission`):
   they are sequential (the arrival-order assumption of section 2.2 compares each event
   with the largest lower bound admitted before it, and ids must be unique), so a
   matcher that saw only its key or its slice would judge some events differently. The
   rejected events, with their reasons and arrival positions, join the ``rejected``
   output; the largest ``upper - lower`` of the admitted events is U_max unless the
   query declares one. Every group's matcher then runs with that U_max declared, so it
   picks the framework the local engine picks, and a subset of admitted events, kept in
   arrival order, passes its own admission unchanged.
2. **Matching** runs one interval matcher per (key, slice) group, fed in arrival order
   (not time order: the frameworks rely on the arrival order, section 2.2).

**Keys.** A query whose runs are routed by a key (``Plan.key``) relates only events of
one key value: its edges, the NELTs and the events that can spoil a skip till next
match signature (equations (2)-(4)) all pass the same routing, so a matcher per key
value finds exactly that key's results.

**Why slices overlap by W + U_max.** Slices cut the time line at ``c_1 < ... < c_n`` by
the events' lower bounds, and slice k owns the results whose time range starts in
``[c_k, c_{k+1})``. Take a result with start s (the earliest instant of its first event
over the worlds that produce it). In every such world the first event's instant t_1 is
at most its upper bound, itself at most ``s + U_max`` (the interval is at most U_max
long and holds s), and every other instant is within W after t_1. So every instant of
every world producing the result lies in ``[s, s + W + U_max]``, and so does at least
one instant of each event that decides it: its own events, and under skip till next
match the events that could fall between two of them (the NELT and equations 2-4).
Such an event has ``upper >= s`` and ``lower <= s + W + U_max``, hence a lower bound in
``[c_k - U_max, c_{k+1} + W + U_max]``. Feeding slice k every event whose lower bound
lies within W + U_max of its range (the overlap of :func:`._slicing.with_slices`, with
W + U_max for W) covers all of them; W alone, the point events' margin, would miss an
event whose interval begins up to U_max before the cut yet reaches into the slice, or
whose lower bound is up to U_max past the last owned start plus W. Extra events change
nothing (they can neither take part in nor fall between the events of a result the
slice owns), so the owning slice computes each result exactly as the whole stream
does, and its start lies in exactly one slice: no result is lost or duplicated.

**Rows.** Match rows (:mod:`kleene.spark._schema`) with ``start``/``end`` the result's
time range (whole numbers: time is discrete) and its ``confidence`` after ``end``; an
interval result has no partition output.

**Streams** take each micro-batch of a key as it comes (no watermark: late events are
defined by the intervals themselves), pushed sorted by lower bound (then upper bound,
then id), an order that keeps the arrival-order assumption within the batch; across
micro-batches the matcher checks it. U_max must be declared (``u_max=``): it cannot be
measured over an unbounded input, and it decides when results are final (t_emit =
now.lower - U_max passes a result's last upper bound plus W, section 3.3). Rejected
events' positions count the key's events.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from kleene.errors import EventError, QueryError
from kleene.imprecise.admission import Admission
from kleene.imprecise.result import ImpreciseMatch
from kleene.spark._kind import Batch, Grouping, SparkKind, SparkOptions
from kleene.spark._prepare import (
    INTERNAL_PREFIX,
    POS,
    TIME,
    key_columns,
    keyed,
    with_key,
    with_positions,
)
from kleene.spark._query import QuerySpec, key_routing
from kleene.spark._rows import REJECTED, Identity, Placement, arrow_array, placed_rejected
from kleene.spark._schema import EventColumns, MatchSchema, build_match_schema
from kleene.spark._slicing import SLICE, cut

U_MAX = "kleene__u_max"
CONFIDENCE = "confidence"


@dataclass(frozen=True)
class IntervalSchema(MatchSchema):
    """Match rows of interval results: those of :class:`MatchSchema` (``start``/``end``
    the result's time range) with ``confidence`` after ``end``."""

    @property
    def return_columns(self) -> tuple[str, ...]:
        return tuple(f"return:{c}" if c == CONFIDENCE else c for c in super().return_columns)

    def struct(self) -> T.StructType:
        fields = list(super().struct().fields)
        at = [f.name for f in fields].index("end") + 1
        fields.insert(at, T.StructField(CONFIDENCE, T.DoubleType()))
        return T.StructType(fields)

    def row(self, match: Any, at: Placement) -> dict[str, Any]:
        row = super().row(match, at)
        row[CONFIDENCE] = float(match.confidence)
        return row

    def decode(self, row: Mapping[str, Any]) -> ImpreciseMatch:
        return ImpreciseMatch(
            variables={v: tuple(row[v] or ()) for v in self.variables},
            positions={},
            start=row["start"],
            end=row["end"],
            confidence=row[CONFIDENCE],
            returned=self.returned(row),
        )


class IntervalSpark(SparkKind):
    """The Spark part of queries over interval events
    (:class:`kleene.imprecise.IntervalQuery`)."""

    spark_options = frozenset({"partition_by", "slice", "method", "pushdown"})
    watermark = False
    arrival_order = False

    def options_of(self, query: Any) -> dict[str, Any]:
        # the driver applies max_matches (kleene run): a worker error loses all
        return {**query.options, "max_matches": None}

    def layout(self, q: Any, schema: T.StructType, columns: EventColumns) -> IntervalSchema:
        """Match rows with ``start``/``end`` as whole numbers (time is discrete)."""
        base = build_match_schema(q.plan, schema, columns)
        return IntervalSchema(
            base.variables, base.return_names, base.id_type, T.LongType(), base.return_types
        )

    def group(self, batch: Batch) -> Grouping:
        """The admission pass, then one matcher per (key, slice) group in arrival order,
        declaring the U_max measured (or declared); ``pushdown`` drops no event (the
        admission reads every one)."""
        df, q, spec, options = batch.df, batch.query, batch.spec, batch.options
        if options.method != "map":
            raise QueryError(
                f"interval queries run with method='map' on Spark, not {options.method!r}"
            )
        columns = spec.columns
        added_id = columns.id_field not in df.columns
        prepared = with_positions(df, columns)
        verdicts = _admission(prepared, spec, added_id)
        u_max = q.interval.u_max
        if u_max is None:
            measured = verdicts.where(F.col(POS) < 0).agg(F.max(U_MAX)).collect()[0][0]
            u_max = int(measured or 0)
        refused = verdicts.where(F.col(POS) >= 0)
        admitted = prepared.join(refused.select(POS), POS, "left_anti")
        routing = key_routing(q, options.partition_by)
        groups: list[str] = []
        if routing is not None:
            admitted = with_key(admitted, routing, columns)
            groups = key_columns(routing.width)
        admitted, cuts, note = _slices(admitted, q, u_max, options, batch.spark, bool(groups))
        return Grouping(
            admitted,
            (*groups, *([SLICE] if cuts else [])),
            (POS,),
            keyed=routing is not None,
            cuts=tuple(cuts),
            key=routing.names if routing else (),
            note=note,
            spec=spec.with_options(u_max=u_max),
            rejected=refused.select(*[F.col(c).alias(n) for n, c in REJECTED.items()]),
            added_id=added_id,
            facts={"u_max": u_max},
            cached=(verdicts,),
        )

    def check_stream(self, q: Any, events: DataFrame, columns: EventColumns) -> None:
        if q.interval.u_max is None:
            raise QueryError(
                "a stream of interval events needs u_max= (the largest upper - lower): it "
                "cannot be measured over an unbounded input"
            )
        if columns.id_field not in events.columns:
            raise EventError(f"a stream needs an id column ({columns.id_field!r} is missing)")

    def stream_groups(
        self, events: DataFrame, q: Any, spec: QuerySpec, partition_by: Any
    ) -> tuple[DataFrame, list[str]]:
        return keyed(events, key_routing(q, partition_by), spec.columns, "kleene__all")

    def stream_order(self, q: Any, columns: EventColumns, time_column: str) -> list[str]:
        """Lower bound, upper bound, id: an order that keeps the arrival-order
        assumption of section 2.2 within a micro-batch."""
        spec = q.interval
        bounds = [spec.lower_field, spec.upper_field] if spec.margins is None else [time_column]
        return [*bounds, columns.id_field]


def _admission(prepared: DataFrame, spec: QuerySpec, added_id: bool) -> DataFrame:
    """The admission pass (step 1): rejected events and the measured U_max, kept."""
    id_type = prepared.schema[spec.columns.id_field].dataType
    worker = IntervalAdmission(spec, id_type, added_id)
    ordered = prepared.repartition(1).sortWithinPartitions(POS)
    return ordered.mapInArrow(worker.map_batches, worker.schema).persist(
        StorageLevel.MEMORY_AND_DISK
    )


@dataclass(frozen=True)
class IntervalAdmission:
    """The admission pass over every event, sorted by arrival position in one task: one
    row per rejected event (``kleene__pos`` its arrival position), then one (with
    ``kleene__pos`` -1) holding the U_max measured over the admitted events."""

    spec: QuerySpec
    id_type: T.DataType
    added_id: bool = False  # the id column was added from positions (not in the input)

    @property
    def schema(self) -> T.StructType:
        fields = [T.StructField(POS, T.LongType())]
        types = (self.id_type, T.LongType(), T.StringType(), T.StringType())
        fields += [T.StructField(c, t) for c, t in zip(REJECTED.values(), types, strict=True)]
        return T.StructType([*fields, T.StructField(U_MAX, T.LongType())])

    def map_batches(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        q = self.spec.compile()
        admission = Admission(q.plan, q.fields, q.interval)
        arrow = to_arrow_schema(self.schema, timezone="UTC")
        id_field = self.spec.columns.id_field
        hidden = id_field if self.added_id else None
        u_max = 0
        for batch in batches:
            if batch.num_rows:
                table = pa.Table.from_batches([batch])
                events = table.drop_columns(
                    [c for c in table.column_names if c.startswith(INTERNAL_PREFIX)]
                )
                admitted = admission.admit(events)
                u_max = max([u_max, *(e.upper - e.lower for e in admitted)])
                rows = [
                    {POS: r.position, **placed_rejected(r, Identity(), id_field, hidden)}
                    for r in admission.time.take_rejected()
                ]
                if rows:
                    yield _batch(rows, arrow)
        yield _batch([{POS: -1, U_MAX: u_max}], arrow)


def _batch(rows: list[dict[str, Any]], schema: pa.Schema) -> pa.RecordBatch:
    arrays = [arrow_array([row.get(f.name) for row in rows], f.type) for f in schema]
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _lower(q: Any) -> Column:
    """The lower bound of an admitted event, as a number (slices cut by it)."""
    margins = q.interval.margins
    if margins is None:
        return F.col(q.interval.lower_field).cast("double")
    return F.col(q.fields.time_field).cast("double") - F.lit(float(margins[0]))


def _slices(
    admitted: DataFrame,
    q: Any,
    u_max: int,
    options: SparkOptions,
    spark: SparkSession,
    keyed: bool,
) -> tuple[DataFrame, list[float], str]:
    """Cut the time line by lower bounds when asked and the query has a window; slices
    overlap by W + U_max (module docstring)."""
    if options.slice is None:
        return admitted, [], ""
    if q.window is None:
        return admitted, [], "not sliced: the query has no WITHIN window"
    timed = admitted.withColumn(TIME, _lower(q))
    return cut(timed, options.slice, q.window + u_max, spark, keyed)


INTERVALS = IntervalSpark()
