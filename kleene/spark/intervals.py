"""Batch matching of events with uncertainty intervals (VLDB 2010): ``kleene.spark.match``
with an :class:`~kleene.imprecise.IntervalQuery` or ``time="interval"``.

The pipeline reuses the point pipeline's machinery (:mod:`kleene.spark.batch`): input
positions (:mod:`._prepare`), partition keys, time slices (:mod:`._slicing`), the
grouped ``mapInArrow`` run and the combined output layout (:mod:`._rows`). It differs
in two steps:

1. **Admission** runs once over the whole input in arrival order (the input order), in
   one task, with the local engine's own checks (:mod:`kleene.imprecise.admission`):
   they are sequential (the arrival-order assumption of section 2.2 compares each event
   with the largest lower bound admitted before it, and ids must be unique), so a
   matcher that saw only its key or its slice would judge some events differently. The
   rejected events, with their reasons and arrival positions, are the ``rejected``
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
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kleene.errors import QueryError
from kleene.imprecise import ImpreciseMatch, IntervalQuery
from kleene.io.records import match_order, rejected_order
from kleene.io.schema import match_record, rejected_record
from kleene.match import RejectedEvent
from kleene.spark._interval_worker import (
    CONFIDENCE,
    ID_JSON,
    U_MAX,
    IntervalAdmission,
    IntervalGroupMatcher,
    IntervalSchema,
    admission_schema,
    compiled,
)
from kleene.spark._prepare import POS, TIME, key_columns, with_key, with_positions
from kleene.spark._query import QuerySpec, key_routing
from kleene.spark._rows import split_output
from kleene.spark._schema import EventColumns, build_match_schema
from kleene.spark._session import use_this_python
from kleene.spark._slicing import SLICE, boundaries, with_slices
from kleene.spark.batch import Layout, run_groups

_REJECTED = ("id", "position", "reason", "record")


def is_interval(query: Any, options: Mapping[str, Any]) -> bool:
    """Whether :func:`kleene.spark.match` got a query over interval events."""
    return isinstance(query, IntervalQuery) or options.get("time") == "interval"


@dataclass
class IntervalMatchResult:
    """Results and rejected events of an interval query, as Spark DataFrames.

    ``matches`` has ``match_id``, ``partition`` (empty), one id array per variable,
    ``start``/``end`` (the result's time range), ``confidence`` and the RETURN columns;
    ``rejected`` has ``id``, ``position`` (the arrival position), ``reason`` and
    ``record`` (the event's fields as JSON).
    """

    matches: DataFrame
    rejected: DataFrame
    layout: Layout
    query: QuerySpec
    u_max: int  # declared, or measured over the admitted events
    schema: IntervalSchema = field(repr=False)
    verdicts: DataFrame = field(repr=False)  # the admission pass's rows (kept)

    def collect(self) -> tuple[list[ImpreciseMatch], list[RejectedEvent]]:
        """The results and rejected events as the local engine's objects, sorted as
        :mod:`kleene.io.records` documents (written with kleene.io's sinks they make the
        local engine's files)."""
        s = self.schema
        returns = tuple(zip(s.return_names, s.return_columns, strict=True))
        found = [
            ImpreciseMatch(
                variables={v: tuple(row[v] or ()) for v in s.variables},
                positions={},
                start=row["start"],
                end=row["end"],
                confidence=row[CONFIDENCE],
                returned={name: row[column] for name, column in returns},
            )
            for row in self.matches.toArrow().to_pylist()
        ]
        found.sort(key=lambda m: match_order(match_record(m)))
        dropped = [
            RejectedEvent(
                json.loads(row[ID_JSON]), row["position"], row["reason"], json.loads(row["record"])
            )
            for row in self.verdicts.where(F.col(POS) >= 0).toArrow().to_pylist()
        ]
        dropped.sort(key=lambda e: rejected_order(rejected_record(e)))
        return found, dropped

    def persist(self) -> IntervalMatchResult:
        self.matches.persist(StorageLevel.MEMORY_AND_DISK)
        return self

    def unpersist(self) -> IntervalMatchResult:
        self.matches.unpersist()
        self.verdicts.unpersist()
        return self


def resolve_interval_query(
    query: Any,
    fields: Mapping[str, str | None],
    options: Mapping[str, Any],
) -> tuple[QuerySpec, IntervalQuery]:
    """The spec and compiled query: a compiled query's own options, else the defaults,
    overridden by the field names and options given."""
    if isinstance(query, IntervalQuery):
        base: dict[str, Any] = dict(query.options)
        text = query.text
    elif not isinstance(query, str):
        raise QueryError(
            f"{query!r} is not a query over interval events: pass its text with "
            "time='interval', or compile it with kleene.compile(text, time='interval')"
        )
    else:
        base = {"time": "interval", "time_field": "timestamp", "type_field": "type"}
        base["id_field"] = "id"
        text = query
    given = {k: v for k, v in fields.items() if v is not None}
    spec = QuerySpec(text, tuple(sorted({**base, **given, **options}.items())))
    return spec, compiled(spec)


def match_intervals(
    df: DataFrame,
    query: str | IntervalQuery,
    *,
    time_field: str | None = None,
    type_field: str | None = None,
    id_field: str | None = None,
    partition_by: Sequence[str] | str | None = None,
    slice: int | Literal["auto"] | None = None,
    spark: SparkSession | None = None,
    method: str = "map",
    pushdown: bool = True,
    **compile_options: Any,
) -> IntervalMatchResult:
    """:func:`kleene.spark.match` for an interval query (see the module docstring): the
    arguments are those of :func:`kleene.spark.batch.match`, ``compile_options`` those of
    ``kleene.compile(text, time="interval", ...)`` (``lower_field``, ``upper_field``,
    ``uncertainty``, ``u_max``, ``confidence``, ``engine``...). Every event goes through
    admission, so ``pushdown`` drops none; groups run with ``method="map"`` only."""
    if method != "map":
        raise QueryError(f"interval queries run with method='map' on Spark, not {method!r}")
    del pushdown  # admission reads every event
    fields = {"time_field": time_field, "type_field": type_field, "id_field": id_field}
    options = compile_options
    spark = spark if spark is not None else df.sparkSession
    use_this_python(spark)
    spec, q = resolve_interval_query(query, fields, options)
    columns = spec.columns
    added_id = columns.id_field not in df.columns
    prepared = with_positions(df, columns)
    verdicts = _admission(prepared, spec, df, added_id)
    u_max = q.interval.u_max
    if u_max is None:
        measured = verdicts.where(F.col(POS) < 0).agg(F.max(U_MAX)).collect()[0][0]
        u_max = int(measured or 0)
    run_spec = replace(spec, options=tuple(sorted({**dict(spec.options), "u_max": u_max}.items())))
    admitted = prepared.join(verdicts.where(F.col(POS) >= 0).select(POS), POS, "left_anti")

    routing = key_routing(q, partition_by)
    group_cols: list[str] = []
    if routing is not None:
        admitted = with_key(admitted, routing, columns)
        group_cols = key_columns(routing.width)
    admitted, cuts, note = _slices(admitted, q, u_max, slice, spark, routing is not None)
    group_cols += [SLICE] if cuts else []

    schema = interval_schema(q, df, columns)
    worker = IntervalGroupMatcher(run_spec, schema, tuple(group_cols), tuple(cuts))
    combined = run_groups(spark, admitted, worker, routing is not None, cuts, [POS], "map")
    matches, _ = split_output(combined, schema)
    rejected = verdicts.where(F.col(POS) >= 0).select(*_REJECTED)
    layout = Layout(routing.names if routing else (), tuple(cuts), "map", note)
    return IntervalMatchResult(matches, rejected, layout, spec, u_max, schema, verdicts)


def _admission(prepared: DataFrame, spec: QuerySpec, df: DataFrame, added_id: bool) -> DataFrame:
    """The admission pass (step 1): rejected events and the measured U_max, kept."""
    id_type = prepared.schema[spec.columns.id_field].dataType
    schema = admission_schema(id_type)
    worker = IntervalAdmission(spec, schema, added_id)
    ordered = prepared.repartition(1).sortWithinPartitions(POS)
    return ordered.mapInArrow(worker.map_batches, schema).persist(StorageLevel.MEMORY_AND_DISK)


def _lower(q: IntervalQuery, df: DataFrame) -> Column:
    """The lower bound of an admitted event, as a number (slices cut by it)."""
    margins = q.interval.margins
    if margins is None:
        return F.col(q.interval.lower_field).cast("double")
    return F.col(q.fields.time_field).cast("double") - F.lit(float(margins[0]))


def _slices(
    admitted: DataFrame,
    q: IntervalQuery,
    u_max: int,
    slice: int | Literal["auto"] | None,
    spark: SparkSession,
    keyed: bool,
) -> tuple[DataFrame, list[float], str]:
    """Cut the time line by lower bounds when asked and the query has a window; slices
    overlap by W + U_max (module docstring)."""
    if slice is None:
        return admitted, [], ""
    if q.window is None:
        return admitted, [], "not sliced: the query has no WITHIN window"
    if slice == "auto" and keyed:
        return admitted, [], "not sliced: the partition key already spreads the work (auto)"
    margin = q.window + u_max
    timed = admitted.withColumn(TIME, _lower(q, admitted))
    if slice == "auto":
        cuts = boundaries(timed, 2 * spark.sparkContext.defaultParallelism, 4 * margin)
    else:
        cuts = boundaries(timed, int(slice), margin)
    if not cuts:
        return admitted, [], "not sliced: the time span is too short for more than one slice"
    return with_slices(timed, cuts, margin), cuts, ""


def interval_schema(q: IntervalQuery, df: DataFrame, columns: EventColumns) -> IntervalSchema:
    """Match rows with ``start``/``end`` as whole numbers (time is discrete)."""
    base = build_match_schema(q.plan, df.schema, columns)
    return IntervalSchema(
        base.variables, base.return_names, base.id_type, T.LongType(), base.return_types
    )
