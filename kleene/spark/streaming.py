"""Stream matching: :func:`match_stream` and :func:`run_stream_to_parquet`.

Events are grouped by the query's partition key (one group when the query cannot be
split by key, see :mod:`kleene.spark._query`) and handed to
``transformWithStateInPandas`` with a :class:`~kleene.spark._processor.MatchProcessor`
in event-time mode; the RocksDB state store keeps one matcher snapshot per key, and
event-time timers wake keys when the watermark passes their pending events or their
runs' windows. :mod:`kleene.spark._processor` describes the step.

**Late events are never dropped silently.** Spark's stateful operators drop the rows at
or behind the watermark before user code sees them when the operator's input carries
the watermarked column. So the watermark is defined on a private copy of the event time
(``kleene__wts``), which is then turned into a plain number (``kleene__us``,
microseconds) before the stateful operator: the query still has a watermark (timers
fire, the processor reads it) but no row is filtered, and the processor itself rejects
late rows with reason ``late``.

**Exactly once.** The processor's state is versioned with each micro-batch by the state
store and restored from the checkpoint; a replayed micro-batch recomputes the same rows.
The Parquet sink writes each micro-batch into its own folder ``batch_id=<n>`` with
overwrite, so a batch replayed after a crash replaces its first attempt: no match is
lost or written twice.

With ``OUTPUT COLLAPSED`` (SIGMOD 2014, section 5.2) ``matches`` holds one collapsed
row per intermediate match (:mod:`kleene.spark._collapsed`), emitted once the watermark
passes its last event; keys split the stream as for the ``all`` output.

Event times must be numbers (seconds) or timestamps after the epoch (Spark's watermark
starts at 0), and every event needs an id: in a stream there is no input position to
fall back on, and equal timestamps are ordered by id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, overload

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming import StreamingQuery

import kleene
from kleene.errors import EventError, QueryError
from kleene.eventsets.query import SesQuery
from kleene.imprecise import IntervalQuery
from kleene.kinds import is_tpstream
from kleene.spark._collapsed import build_collapsed_schema
from kleene.spark._interval_stream import interval_stream
from kleene.spark._prepare import INTERNAL_PREFIX, keyed
from kleene.spark._processor import MICROS_COLUMN, MatchProcessor
from kleene.spark._query import QuerySpec, key_routing, resolve_query
from kleene.spark._rows import (
    KIND,
    MATCH_KIND,
    REASON,
    RECORD,
    REJECTED_ID,
    RowLayout,
    combined_schema,
    split_output,
)
from kleene.spark._schema import EventColumns, build_match_schema
from kleene.spark._ses_stream import ses_stream
from kleene.spark._session import ROCKSDB_PROVIDER, active_session
from kleene.spark.eventsets import is_ses, ses_spec
from kleene.spark.intervals import is_interval
from kleene.spark.sources import read_event_stream
from kleene.spark.tpstream import TemporalStreamResult, match_temporal_stream
from kleene.tpstream.query import TemporalQuery
from kleene.vocabulary import OutputFormat

WATERMARK_COLUMN = "kleene__wts"
ALL_KEY = "kleene__all"


@dataclass
class StreamMatchResult:
    """The streaming outputs of :func:`match_stream`.

    ``matches`` and ``rejected`` are streaming DataFrames. Each started on its own runs
    the matchers once more (with its own checkpoint); :meth:`to_parquet` and
    :meth:`to_console` run them once and write both, using ``checkpoint``.
    """

    output: DataFrame  # matches and rejected events in the combined layout
    matches: DataFrame
    rejected: DataFrame
    checkpoint: str
    schema: RowLayout  # match rows, or collapsed rows for OUTPUT COLLAPSED
    query: QuerySpec

    def to_parquet(
        self,
        matches_path: str,
        rejected_path: str,
        *,
        available_now: bool = True,
        processing_time: str | None = None,
    ) -> StreamingQuery:
        """Start the query writing matches and rejected events as Parquet, one folder
        ``batch_id=<n>`` per micro-batch (replays overwrite: exactly once)."""
        writer = _BatchWriter(matches_path, rejected_path, self.schema)
        stream = self.output.writeStream.foreachBatch(writer).option(
            "checkpointLocation", self.checkpoint
        )
        return _trigger(stream, available_now, processing_time).start()

    def to_console(
        self, *, available_now: bool = True, processing_time: str | None = None
    ) -> StreamingQuery:
        """Start the query printing matches and rejected events of each micro-batch."""
        stream = self.output.writeStream.foreachBatch(_print_batch).option(
            "checkpointLocation", self.checkpoint
        )
        return _trigger(stream, available_now, processing_time).start()


@overload
def match_stream(
    events: DataFrame, query: TemporalQuery, *, checkpoint: str, **options: Any
) -> TemporalStreamResult: ...
@overload
def match_stream(
    events: DataFrame, query: str | kleene.Query | SesQuery, *, checkpoint: str, **options: Any
) -> StreamMatchResult: ...


def match_stream(
    events: DataFrame,
    query: str | kleene.Query | IntervalQuery | TemporalQuery | SesQuery,
    *,
    checkpoint: str,
    watermark: str = "0 seconds",
    time_field: str | None = None,
    type_field: str | None = None,
    id_field: str | None = None,
    partition_by: Sequence[str] | str | None = None,
    **compile_options: Any,
) -> StreamMatchResult | TemporalStreamResult:
    """Match ``query`` over a streaming DataFrame of events.

    ``watermark`` is Spark's delay threshold (``"10 seconds"``): events may arrive that
    much out of time order and are still matched in order; events behind the watermark
    are rejected as ``late``. Matches appear once the watermark passes their last event
    (and their window, for a trailing negation). ``checkpoint`` is where the started
    query keeps its progress and state.

    An interval query (an ``IntervalQuery``, or ``time="interval"`` with its options, a
    declared ``u_max`` among them) runs as :mod:`kleene.spark._interval_stream` says. A
    TPStream query goes to :func:`kleene.spark.tpstream.match_temporal_stream` (no
    watermark: its matches leave at their detection time). An event-set pattern is
    matched per key of its partitioning attributes, each match leaving once the
    watermark closes its match window (:mod:`kleene.spark._ses_stream`).
    """
    spark = active_session(events.sparkSession)
    if spark.conf.get("spark.sql.streaming.stateStore.providerClass", None) != ROCKSDB_PROVIDER:
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER)
    fields = {"time_field": time_field, "type_field": type_field, "id_field": id_field}
    other = _other_kind_stream(
        events, query, checkpoint, watermark, fields, partition_by, compile_options
    )
    if other is not None:
        return other
    assert not isinstance(query, IntervalQuery | TemporalQuery)
    if is_ses(query):  # kleene.spark._ses_stream
        spec = ses_spec(query, time_field, type_field, id_field, compile_options)
        timed, datetime_time = _timed(events, spec.columns, watermark)
        output, schema = ses_stream(timed, spec, events.schema, datetime_time, partition_by)
        matches, rejected = split_output(output, schema)
        return StreamMatchResult(output, matches, rejected, checkpoint, schema, spec)
    assert not isinstance(query, SesQuery)
    spec, q = resolve_query(query, time_field, type_field, id_field, compile_options)
    columns = spec.columns
    timed, datetime_time = _timed(events, columns, watermark)
    timed, group_cols = keyed(timed, key_routing(q, partition_by), columns, ALL_KEY)
    layout: RowLayout = build_match_schema(q.plan, events.schema, columns)
    if q.output is OutputFormat.COLLAPSED:
        layout = build_collapsed_schema(q.plan, events.schema, columns)
    processor = MatchProcessor(spec, layout, datetime_time)
    output = timed.groupBy(*group_cols).transformWithStateInPandas(
        statefulProcessor=processor,
        outputStructType=combined_schema(layout),
        outputMode="Append",
        timeMode="EventTime",
    )
    matches, rejected = split_output(output, layout)
    return StreamMatchResult(output, matches, rejected, checkpoint, layout, spec)


def _timed(events: DataFrame, columns: EventColumns, watermark: str) -> tuple[DataFrame, bool]:
    """The events with the watermark on a private copy of their time and that time in
    microseconds (module docstring), and whether the times are timestamps; EventError
    when the id or time column is missing or the times are neither."""
    if columns.id_field not in events.columns:
        raise EventError(
            f"a stream needs an id column ({columns.id_field!r} is missing): "
            "equal timestamps are ordered by id"
        )
    if columns.time_field not in events.columns:
        raise EventError(f"the stream has no time column {columns.time_field!r}")
    time_type = events.schema[columns.time_field].dataType
    datetime_time = isinstance(time_type, T.TimestampType | T.TimestampNTZType)
    if not datetime_time and not isinstance(time_type, T.NumericType):
        raise EventError(
            f"stream times must be numbers or timestamps; {columns.time_field!r} is {time_type}"
        )
    timed = events.withColumn(WATERMARK_COLUMN, _event_time(columns.time_field, time_type))
    timed = timed.withWatermark(WATERMARK_COLUMN, watermark)
    timed = timed.withColumn(MICROS_COLUMN, F.unix_micros(F.col(WATERMARK_COLUMN)))
    return timed.drop(WATERMARK_COLUMN), datetime_time


def _other_kind_stream(
    events: DataFrame,
    query: Any,
    checkpoint: str,
    watermark: str,
    fields: dict[str, str | None],
    partition_by: Sequence[str] | str | None,
    compile_options: dict[str, Any],
) -> StreamMatchResult | TemporalStreamResult | None:
    """The stream of an interval or TPStream query; None for a point query."""
    if is_interval(query, compile_options):  # kleene.spark._interval_stream
        if watermark != "0 seconds":
            raise QueryError(
                "a watermark does not apply to interval events: their arrival order is "
                "checked against their bounds (VLDB 2010, section 2.2)"
            )
        ispec, out, ischema = interval_stream(events, query, fields, partition_by, compile_options)
        matches, rejected = split_output(out, ischema)
        return StreamMatchResult(out, matches, rejected, checkpoint, ischema, ispec)
    if isinstance(query, TemporalQuery) or (isinstance(query, str) and is_tpstream(query)):
        if watermark != "0 seconds" or partition_by is not None:
            raise QueryError(
                "watermark and partition_by do not apply to a TPStream query: it is split "
                "by its own PARTITION BY and its events are matched in time order per key"
            )
        return match_temporal_stream(
            events, query, checkpoint=checkpoint, **fields, **compile_options
        )
    return None


def run_stream_to_parquet(
    input_dir: str | Path,
    query: str | kleene.Query,
    output_dir: str | Path,
    checkpoint: str | Path,
    *,
    fmt: str = "parquet",
    schema: T.StructType | str | None = None,
    watermark: str = "0 seconds",
    spark: SparkSession | None = None,
    source_options: Mapping[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Match the files now in ``input_dir`` (trigger availableNow) and stop.

    Matches go to ``output_dir/matches``, rejected events to ``output_dir/rejected``
    (read them with :func:`read_output` or ``spark.read.parquet``). Calling it again after
    new files arrive continues from ``checkpoint``. Returns a summary of this run:
    micro-batches, input rows and the last batch id.
    """
    spark = active_session(spark)
    source: dict[str, Any] = {"format": fmt, "path": str(input_dir)}
    if schema is not None:
        source["schema"] = schema
    if source_options:
        source["options"] = dict(source_options)
    events = read_event_stream(spark, source)
    result = match_stream(events, query, checkpoint=str(checkpoint), watermark=watermark, **options)
    out = Path(output_dir)
    running = result.to_parquet(str(out / "matches"), str(out / "rejected"))
    running.awaitTermination()
    progress = running.recentProgress
    return {
        "batches": len(progress),
        "input_rows": sum(int(p["numInputRows"]) for p in progress),
        "last_batch_id": progress[-1]["batchId"] if progress else None,
    }


def read_output(spark: SparkSession, path: str | Path, schema: T.StructType) -> DataFrame:
    """Read a folder written by :meth:`StreamMatchResult.to_parquet`: the rows of every
    micro-batch, with its ``batch_id`` (an empty DataFrame before the first batch)."""
    folder = Path(path)
    if folder.exists() and any(folder.glob("batch_id=*/*.parquet")):
        return spark.read.parquet(str(folder))
    empty = T.StructType([*schema.fields, T.StructField("batch_id", T.IntegerType())])
    return spark.createDataFrame([], empty)


def _event_time(time_field: str, dtype: T.DataType) -> Any:
    c = F.col(time_field)
    if isinstance(dtype, T.TimestampType):
        return c
    if isinstance(dtype, T.TimestampNTZType):
        return c.cast("timestamp")
    return F.timestamp_micros(F.round(c.cast("double") * 1_000_000).cast("long"))


class _BatchWriter:
    """foreachBatch sink: both outputs of a micro-batch into ``batch_id=<n>`` folders."""

    def __init__(self, matches_path: str, rejected_path: str, schema: RowLayout) -> None:
        self.matches_path = matches_path
        self.rejected_path = rejected_path
        self.schema = schema

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        batch = batch.persist()
        try:
            matches, rejected = split_output(batch, self.schema)
            matches.write.mode("overwrite").parquet(f"{self.matches_path}/batch_id={batch_id}")
            rejected.write.mode("overwrite").parquet(f"{self.rejected_path}/batch_id={batch_id}")
        finally:
            batch.unpersist()


def _print_batch(batch: DataFrame, batch_id: int) -> None:
    rows = batch.collect()
    if not rows:
        return
    print(f"--- micro-batch {batch_id}: {len(rows)} rows")
    for row in rows:
        d = row.asDict()
        if d[KIND] == MATCH_KIND:
            print("match   ", {k: v for k, v in d.items() if not k.startswith(INTERNAL_PREFIX)})
        else:
            print("rejected", {"id": d[REJECTED_ID], "reason": d[REASON], "record": d[RECORD]})


def _trigger(stream: Any, available_now: bool, processing_time: str | None) -> Any:
    if processing_time is not None:
        return stream.trigger(processingTime=processing_time)
    if available_now:
        return stream.trigger(availableNow=True)
    return stream
