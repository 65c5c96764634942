"""TPStream queries on Spark (EDBT 2018, Figure 2 per partition): situations are
derived and matched per PARTITION BY key. :func:`kleene.spark.match` and
:func:`kleene.spark.match_stream` hand TPStream queries here.

:func:`match_temporal` (also reached through :func:`kleene.spark.match` with a TPStream
query) numbers the events in input order (:func:`kleene.spark._prepare.with_positions`),
groups them by the query's PARTITION BY attributes (one group without PARTITION BY, or
when the input lacks one of them: every event is then rejected for it, as locally),
and runs one :class:`~kleene.tpstream.runtime.TemporalMatcher` per group in
``applyInArrow`` (:mod:`kleene.spark._tpstream_worker`) over the group's events in
input order. A TPStream matcher's state per key does not depend on other keys (only the
stream's time kind and attribute kinds are shared, and a Spark column has one type), so
the result equals ``TemporalQuery.run_detailed`` over the input: the same matches with
their detection times and the same rejected events, positions and reasons.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming import StreamingQuery

from kleene.errors import EventError, QueryError
from kleene.kinds import is_tpstream
from kleene.match import RejectedEvent
from kleene.spark._prepare import with_positions
from kleene.spark._schema import EventColumns
from kleene.spark._session import use_this_python
from kleene.spark._tpstream_schema import TemporalSchema, decoded, split, temporal_schema
from kleene.spark._tpstream_worker import compiled, run_group
from kleene.tpstream.model import TemporalMatch
from kleene.tpstream.query import TemporalQuery

_ALL = "kleene__all"
# kleene.spark.match's options about SASE+ partitioning, slicing and scanning
_SASE_ONLY = ("partition_by", "slice", "method", "pushdown")
_ID = "kleene__id"


@dataclass(frozen=True)
class _Layout:
    note: str = ""


class _Rows:
    """Typed ``matches`` and ``rejected`` of the combined layout ``rows``."""

    rows: DataFrame
    schema: TemporalSchema

    @property
    def matches(self) -> DataFrame:
        return split(self.rows, self.schema)[0]

    @property
    def rejected(self) -> DataFrame:
        return split(self.rows, self.schema)[1]


@dataclass
class TemporalMatchResult(_Rows):
    """The rows of a TPStream run: ``matches`` and ``rejected`` are typed DataFrames
    (:mod:`kleene.spark._tpstream_schema` lists their columns); ``rows`` has both in
    one combined layout, which :meth:`collect` reads."""

    rows: DataFrame
    schema: TemporalSchema
    input_schema: T.StructType

    @property
    def layout(self) -> _Layout:
        """One group per PARTITION BY key, nothing to note (as ``MatchResult.layout``)."""
        return _Layout()

    def collect(self) -> tuple[list[TemporalMatch], list[RejectedEvent]]:
        """The matches and the rejected events as the local engine's objects, in its
        order (matches by the arrival of the event that reported them); written with
        :class:`kleene.io.MatchSink` they make the local engine's files."""
        return decoded(self.rows.toArrow().to_pylist(), self.schema, self.input_schema)

    def persist(self) -> TemporalMatchResult:
        self.rows = self.rows.persist()
        return self

    def unpersist(self) -> TemporalMatchResult:
        self.rows.unpersist()
        return self


def match_temporal(
    df: DataFrame,
    query: str | TemporalQuery,
    *,
    time_field: str | None = None,
    type_field: str | None = None,
    id_field: str | None = None,
    **options: Any,
) -> TemporalMatchResult:
    """Match a TPStream query over the events of ``df``; see the module docstring.
    ``options`` go to :class:`TemporalQuery` when ``query`` is text."""
    query = _compiled(query, time_field, type_field, id_field, options)
    use_this_python(df.sparkSession)
    f = query.fields
    columns = EventColumns(f.time_field, f.type_field, f.id_field)
    has_id = f.id_field in df.columns
    source = df.withColumn(_ID, F.col(f.id_field)) if has_id else df
    prepared = with_positions(source, columns)
    if has_id:  # the ids as read: a missing one stays missing, as locally
        prepared = prepared.withColumn(f.id_field, F.col(_ID)).drop(_ID)
    else:
        prepared = prepared.drop(f.id_field)
    keys = list(query.partition_attributes)
    if not keys or not set(keys) <= set(df.columns):
        prepared, keys = prepared.withColumn(_ALL, F.lit(0)), [_ALL]
    schema = temporal_schema(query, df.schema, columns)
    combined = schema.combined()
    rows = prepared.groupBy(*keys).applyInArrow(_group_function(query, schema), combined)
    return TemporalMatchResult(rows, schema, df.schema)


F_ = TypeVar("F_", bound=Callable[..., Any])


def is_temporal(query: object) -> bool:
    """Whether ``query`` is a TPStream query (compiled, or text starting with FROM)."""
    return isinstance(query, TemporalQuery) or (isinstance(query, str) and is_tpstream(query))


def temporal_aware(match: F_) -> F_:
    """``kleene.spark.match`` that hands TPStream queries to :func:`match_temporal`
    (the field options go along; the SASE+ layout options do not apply and are refused:
    a TPStream query is split by its own PARTITION BY)."""

    @functools.wraps(match)
    def dispatch(df: DataFrame, query: Any, **options: Any) -> Any:
        if not is_temporal(query):
            return match(df, query, **options)
        refused = sorted(k for k, v in options.items() if k in _SASE_ONLY and v is not None)
        if refused:
            raise QueryError(
                f"{', '.join(refused)} do(es) not apply to a TPStream query: it is split by "
                "its own PARTITION BY clause; leave these options out"
            )
        options.pop("spark", None)  # the DataFrame's session runs it
        return match_temporal(df, query, **options)

    return cast(F_, dispatch)


def _compiled(
    query: str | TemporalQuery,
    time_field: str | None,
    type_field: str | None,
    id_field: str | None,
    options: dict[str, Any],
) -> TemporalQuery:
    if not isinstance(query, str):
        return query
    fields = {"time_field": time_field, "type_field": type_field, "id_field": id_field}
    given: dict[str, Any] = {k: v for k, v in fields.items() if v is not None}
    return TemporalQuery(query, **given, **options)


def _spec(query: TemporalQuery) -> tuple[str, dict[str, Any]]:
    """The query's text and options: what workers compile (once each), rather than
    shipping the compiled query."""
    f = query.fields
    return query.text, {
        "time_field": f.time_field,
        "type_field": f.type_field,
        "id_field": f.id_field,
        "time_unit": query.time_unit,
        "low_latency": query.low_latency,
        "order": query.order,
        "max_matches": None,  # the driver applies it (kleene run): a worker error loses all
    }


def _group_function(query: TemporalQuery, schema: TemporalSchema) -> Callable[[Any], Any]:
    """The group function; it carries the query's text and options and the layout."""
    spec = _spec(query)
    arrow = to_arrow_schema(schema.combined(), timezone="UTC")

    def apply(table):  # no annotations: Spark infers the UDF kind from them
        return run_group(compiled(*spec), schema, arrow, table, drop=(_ALL,))

    return apply


@dataclass
class TemporalStreamResult(_Rows):
    """The streaming output of :func:`match_temporal_stream`: ``rows`` (the combined
    layout of :class:`TemporalMatchResult`), typed ``matches`` and ``rejected`` (each
    started on its own runs the matchers once more) and the checkpoint location its run
    keeps state in."""

    rows: DataFrame
    checkpoint: str
    schema: TemporalSchema

    def to_parquet(self, path: str, *, available_now: bool = True) -> StreamingQuery:
        """Start the query appending its rows to Parquet files under ``path``."""
        stream = self.rows.writeStream.format("parquet").option("path", path)
        stream = stream.option("checkpointLocation", self.checkpoint).outputMode("append")
        return (stream.trigger(availableNow=True) if available_now else stream).start()


def match_temporal_stream(
    events: DataFrame,
    query: str | TemporalQuery,
    *,
    checkpoint: str,
    time_field: str | None = None,
    type_field: str | None = None,
    id_field: str | None = None,
    **options: Any,
) -> TemporalStreamResult:
    """Match a TPStream query over a streaming DataFrame: output rows (the columns of
    :class:`TemporalMatchResult`), each match in the micro-batch of the event that
    reports it (:mod:`kleene.spark._tpstream_stream`); the matchers' state is carried
    across micro-batches in the state store as versioned snapshots."""
    from kleene.spark._tpstream_stream import MICROS, TemporalProcessor

    query = _compiled(query, time_field, type_field, id_field, options)
    f = query.fields
    if f.time_field not in events.columns:
        raise EventError(f"the stream has no time column {f.time_field!r}")
    dtype = events.schema[f.time_field].dataType
    datetime_time = isinstance(dtype, T.TimestampType | T.TimestampNTZType)
    if datetime_time:
        events = events.withColumn(MICROS, F.unix_micros(F.col(f.time_field).cast("timestamp")))
    keys = list(query.partition_attributes)
    if not keys or not set(keys) <= set(events.columns):
        events, keys = events.withColumn(_ALL, F.lit(0)), [_ALL]
    text, spec = _spec(query)
    schema = temporal_schema(
        query, events.schema, EventColumns(f.time_field, f.type_field, f.id_field)
    )
    rows = events.groupBy(*keys).transformWithStateInPandas(
        statefulProcessor=TemporalProcessor(text, spec, datetime_time, schema),
        outputStructType=schema.combined(),
        outputMode="Append",
        timeMode="None",
    )
    return TemporalStreamResult(rows, checkpoint, schema)
