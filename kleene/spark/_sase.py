"""SASE+ queries on Spark (SIGMOD 2008; collapsed output, SIGMOD 2014 section 5.2).

* **Grouping.** Before any shuffle every event gets its position and the latest
  admitted time before it (``kleene__seen``: the worker rejects late events exactly as
  :meth:`kleene.Matcher.push` does); for a Parquet scan as read, the events the query
  provably ignores are dropped in the scan (:mod:`kleene.spark._pushdown`). The events
  are split by the query's key when a matcher per key value finds the same matches as
  one matcher over everything (:func:`kleene.spark._query.splits_by_key`), and/or by
  time slices overlapping by W (:mod:`kleene.spark._slicing`: needs a WITHIN window and
  an output other than non-overlap). A group is fed in (time, input position) order.
* **Rows.** Match rows (:mod:`kleene.spark._schema`), or collapsed rows
  (:mod:`kleene.spark._collapsed`) whose matches :meth:`MatchResult.expand` gives.
  Collapsed results follow the grouping rules unchanged: they exist only for patterns
  without negation, and a collapsed result is one main run of postponed evaluation,
  which begins at its first event, takes only events of its partition and ends within
  W of its start, exactly like a match.
* **Streams** run behind a watermark; a key's matcher is forgotten once the watermark
  is past its latest event + W (not for non-overlap output, whose next match depends on
  the last one kept).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

from kleene.spark._collapsed import ExpandedSchema, build_collapsed_schema
from kleene.spark._kind import ONE_GROUP, Batch, Grouping, SparkKind, SparkOptions
from kleene.spark._prepare import (
    POS,
    key_columns,
    keyed,
    time_scale,
    with_key,
    with_numeric_time,
    with_positions,
    with_seen,
)
from kleene.spark._pushdown import pushed_preparation
from kleene.spark._query import QuerySpec, key_routing
from kleene.spark._rows import Rows
from kleene.spark._schema import EventColumns, Partition, build_match_schema
from kleene.spark._slicing import SLICE, cut
from kleene.vocabulary import OutputFormat


class SaseSpark(SparkKind):
    """The Spark part of SASE+ queries (:class:`kleene.Query`)."""

    spark_options = frozenset({"partition_by", "slice", "method", "pushdown"})
    arrival_order = False

    def options_of(self, query: Any) -> dict[str, Any]:
        fields = query.fields
        return {
            "strategy": query.strategy.value,
            "output": query.output.value,
            "time_field": fields.time_field,
            "type_field": fields.type_field,
            "id_field": fields.id_field,
            "allowed_lateness": query.config.allowed_lateness,
            "max_runs": query.config.max_runs,
            "time_unit": query.config.time_unit,
            "match_windows": query.plan.match_windows,
        }

    def layout(self, q: Any, schema: T.StructType, columns: EventColumns) -> Rows:
        if q.output is OutputFormat.COLLAPSED:
            return build_collapsed_schema(q.plan, schema, columns, partition(q, schema))
        return build_match_schema(q.plan, schema, columns, partition(q, schema))

    def expansion(self, q: Any, schema: T.StructType, columns: EventColumns) -> Rows | None:
        if q.output is not OutputFormat.COLLAPSED:
            return None
        ms = build_match_schema(q.plan, schema, columns, partition(q, schema))
        return ExpandedSchema(*(getattr(ms, f) for f in ms.__dataclass_fields__))

    def group(self, batch: Batch) -> Grouping:
        df, q, spec, options = batch.df, batch.query, batch.spec, batch.options
        columns = spec.columns
        if columns.time_field in df.columns:  # a window's unit needs a known time unit
            q.window_size(datetime=time_scale(df, columns.time_field) != 1.0)
        prepared = pushed_preparation(df, spec) if options.pushdown else None
        if prepared is None:
            prepared = with_seen(with_positions(df, columns), columns, q.plan.required)
        routing = key_routing(q, options.partition_by)
        groups: list[str] = []
        if routing is not None:
            prepared = with_key(prepared, routing, columns)
            groups = key_columns(routing.width)
        prepared, cuts, note = _slices(df, prepared, q, columns, options, batch.spark, bool(groups))
        order = (columns.time_field, POS) if columns.time_field in df.columns else (POS,)
        return Grouping(
            prepared,
            (*groups, *([SLICE] if cuts else [])),
            order,
            keyed=routing is not None,
            cuts=tuple(cuts),
            key=routing.names if routing else (),
            note=note,
            lateness=q.config.allowed_lateness,
            added_id=columns.id_field not in df.columns,
        )

    def stream_groups(
        self, events: DataFrame, q: Any, spec: QuerySpec, partition_by: Any
    ) -> tuple[DataFrame, list[str]]:
        return keyed(events, key_routing(q, partition_by), spec.columns, ONE_GROUP)

    def reach(self, q: Any, datetime_time: bool) -> tuple[float | None, bool]:
        window = q.window
        return (None if window is None else window * 1e6), q.output is not OutputFormat.NON_OVERLAP


def partition(q: Any, schema: T.StructType) -> Partition:
    """The attributes of a match's ``partition`` and their types: a key attribute read
    from columns of one type keeps it, one read from columns of several types is text."""
    key = q.plan.partition
    width = q.plan.partition_width
    if key is None or not width:
        return ()
    by_name = {f.name: f.dataType for f in schema.fields}
    out = []
    for k, name in enumerate(q.partition_attributes[:width]):
        types = {by_name[a] for a in key.attrs[k].values() if a in by_name}
        out.append((name, types.pop() if len(types) == 1 else T.StringType()))
    return tuple(out)


def slice_blocker(q: Any) -> str | None:
    """Why the query cannot be split by time, or None when it can."""
    if q.window is None:
        return "the query has no WITHIN window, so a match may span any stretch of time"
    if q.output is OutputFormat.NON_OVERLAP:
        return (
            "the non-overlap output picks matches in one sequential pass per partition, "
            "so whether a match is kept depends on every earlier match"
        )
    return None


def _slices(
    df: DataFrame,
    prepared: DataFrame,
    q: Any,
    columns: EventColumns,
    options: SparkOptions,
    spark: SparkSession,
    keyed: bool,
) -> tuple[DataFrame, list[float], str]:
    """Each partition's time line cut into slices overlapping by W, when asked and the
    query allows it."""
    if options.slice is None:
        return prepared, [], ""
    blocker = slice_blocker(q)
    if blocker is not None:
        return prepared, [], f"not sliced: {blocker}"
    if columns.time_field not in df.columns:
        return prepared, [], "not sliced: the input has no time column"
    window = q.window_size(datetime=time_scale(df, columns.time_field) != 1.0)
    assert window is not None
    return cut(with_numeric_time(prepared, columns), options.slice, window, spark, keyed)


SASE = SaseSpark()
