"""Stream matching, for every kind of query: :func:`match_stream` and
:func:`run_stream_to_parquet`.

Events are grouped by the kind's key (:meth:`kleene.spark._kind.SparkKind.stream_groups`:
a SASE+ query's partition key, one group when it cannot be split by key; an event-set
pattern's partitioning attributes; TPStream's PARTITION BY) and handed to
``transformWithStateInPandas`` with the one processor of every kind
(:class:`kleene.spark._processor.KindProcessor`); the RocksDB state store keeps one
matcher snapshot per key. A kind's stream runs behind a watermark (event-time mode:
timers wake keys when the watermark passes their pending events or their reach) or
takes each micro-batch as it comes (interval events, TPStream).
:mod:`kleene.spark._processor` describes the step.

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

Behind a watermark, event times must be numbers (seconds) or timestamps after the epoch
(Spark's watermark starts at 0), and every event needs an id: in a stream there is no
input position to fall back on, and equal timestamps are ordered by id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.streaming import StreamingQuery

from kleene.errors import EventError, QueryError
from kleene.spark._kind import article, query_spec, resolve
from kleene.spark._prepare import INTERNAL_PREFIX
from kleene.spark._processor import MICROS_COLUMN, KindProcessor, StreamSettings
from kleene.spark._query import QuerySpec
from kleene.spark._rows import (
    KIND,
    MATCH_KIND,
    REASON,
    RECORD,
    REJECTED_ID,
    Rows,
    combined_schema,
    split_output,
)
from kleene.spark._schema import EventColumns
from kleene.spark._session import ROCKSDB_PROVIDER, active_session
from kleene.spark.sources import read_event_stream

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
    schema: Rows  # the kind's match rows (collapsed rows for OUTPUT COLLAPSED)
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


def match_stream(
    events: DataFrame,
    query: Any,
    *,
    checkpoint: str,
    watermark: str = "0 seconds",
    time_field: str | None = None,
    type_field: str | None = None,
    id_field: str | None = None,
    partition_by: Sequence[str] | str | None = None,
    **compile_options: Any,
) -> StreamMatchResult:
    """Match ``query`` (text or compiled, of any kind with a Spark part) over a
    streaming DataFrame of events.

    Behind a watermark (SASE+ queries, event-set patterns), ``watermark`` is Spark's
    delay threshold (``"10 seconds"``): events may arrive that much out of time order
    and are still matched in order; events behind the watermark are rejected as
    ``late``. Matches appear once the watermark passes their last event (and their
    window, for a trailing negation; an event-set pattern's match window). The kinds
    whose matchers judge their own events' order (interval events, with a declared
    ``u_max``; TPStream, whose matches leave at their detection time) take no
    watermark. ``partition_by`` overrides the inferred key (SASE+ and interval
    queries). ``checkpoint`` is where the started query keeps its progress and state.
    """
    spark = active_session(events.sparkSession)
    if spark.conf.get("spark.sql.streaming.stateStore.providerClass", None) != ROCKSDB_PROVIDER:
        spark.conf.set("spark.sql.streaming.stateStore.providerClass", ROCKSDB_PROVIDER)
    kind, part = resolve(query, compile_options)
    if partition_by is not None and "partition_by" not in part.spark_options:
        raise QueryError(
            f"partition_by does not apply to {article(kind.title)}: it is split by its own key "
            "(`kleene explain` names it)"
        )
    if watermark != "0 seconds" and not part.watermark:
        raise QueryError(
            f"a watermark does not apply to {article(kind.title)}: its matcher judges the order "
            "of its events itself, and its matches leave as soon as they are known"
        )
    fields = {"time_field": time_field, "type_field": type_field, "id_field": id_field}
    spec, q = query_spec(kind, part, query, fields, compile_options)
    columns = spec.columns
    if part.watermark:
        timed, datetime_time = _timed(events, columns, watermark)
    else:
        timed, datetime_time = _as_they_come(events, columns)
    part.check_stream(q, events, columns)
    grouped, group_cols = part.stream_groups(timed, q, spec, partition_by)
    rows = part.layout(q, events.schema, columns)
    window_us, forgetful = part.reach(q, datetime_time) if part.watermark else (None, False)
    time_column = MICROS_COLUMN if datetime_time else columns.time_field
    settings = StreamSettings(
        part.watermark,
        datetime_time,
        window_us,
        forgetful,
        tuple(part.stream_order(q, columns, time_column)),
    )
    output = grouped.groupBy(*group_cols).transformWithStateInPandas(
        statefulProcessor=KindProcessor(spec, rows, settings),
        outputStructType=combined_schema(rows),
        outputMode="Append",
        timeMode="EventTime" if part.watermark else "None",
    )
    matches, rejected = split_output(output, rows)
    return StreamMatchResult(output, matches, rejected, checkpoint, rows, spec)


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


def _as_they_come(events: DataFrame, columns: EventColumns) -> tuple[DataFrame, bool]:
    """The events, with timestamps also as exact microseconds (pandas would give naive
    local times: the processor rebuilds them, UTC), and whether the times are
    timestamps."""
    if columns.time_field not in events.columns:
        return events, False
    time_type = events.schema[columns.time_field].dataType
    if not isinstance(time_type, T.TimestampType | T.TimestampNTZType):
        return events, False
    micros = F.unix_micros(F.col(columns.time_field).cast("timestamp"))
    return events.withColumn(MICROS_COLUMN, micros), True


def run_stream_to_parquet(
    input_dir: str | Path,
    query: Any,
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

    def __init__(self, matches_path: str, rejected_path: str, schema: Rows) -> None:
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
