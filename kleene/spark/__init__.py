"""kleene on Apache Spark: batch matching of DataFrames and stateful stream matching.

This is the only package that imports pyspark.

* :func:`match` (:mod:`kleene.spark.batch`; :mod:`kleene.spark.intervals` for events
  with uncertainty intervals) matches a DataFrame: events are split by
  the query's partition key and/or by time slice (:mod:`kleene.spark._slicing`), each
  group is sorted into stream order and fed to one kleene matcher in a Python worker
  (``mapInArrow``). The result equals ``Query.run`` over the input in its order (the
  arrival order: events that arrive late are rejected as the local engine rejects them).
* :func:`match_stream` (:mod:`kleene.spark.streaming`) matches a streaming DataFrame with
  ``transformWithStateInPandas``: one matcher snapshot per key in the RocksDB state
  store, event-time timers driving ``advance_to(watermark)``, late events rejected with
  reason ``late`` (:mod:`kleene.spark._processor`).
* :func:`read_event_file` (:mod:`kleene.spark.sources`) reads an event file as the
  local engine reads it; :func:`read_event_stream` opens a source described by
  an options dict (a folder of Parquet or JSON files, or Kafka).

    >>> import kleene.spark as ks                                   # doctest: +SKIP
    >>> spark = ks.local_session(2)                                 # doctest: +SKIP
    >>> result = ks.match(spark.read.parquet("events"), QUERY)      # doctest: +SKIP
    >>> result.matches.show(); result.rejected.show()               # doctest: +SKIP
"""

from typing import Any

from pyspark.sql import DataFrame

from kleene.spark import batch
from kleene.spark._session import ensure_python_env, local_session, session
from kleene.spark.batch import Layout, MatchResult
from kleene.spark.eventsets import is_ses, match_ses
from kleene.spark.intervals import IntervalMatchResult, is_interval, match_intervals
from kleene.spark.sources import read_event_file, read_event_stream
from kleene.spark.streaming import (
    StreamMatchResult,
    match_stream,
    read_output,
    run_stream_to_parquet,
)

ensure_python_env()  # before any session: Spark's Python workers run this interpreter


def match(df: DataFrame, query: Any, **options: Any) -> MatchResult | IntervalMatchResult:
    """Match a query over the events of a DataFrame: :func:`kleene.spark.batch.match`,
    or for events with uncertainty intervals (an ``IntervalQuery``, or query text with
    ``time="interval"``) :func:`kleene.spark.intervals.match_intervals`, which takes the
    same arguments plus the interval options (``lower_field``, ``upper_field``,
    ``uncertainty``, ``u_max``, ``confidence``) and adds ``confidence`` to the match
    columns and ``position`` to the rejected ones; an event-set pattern
    :func:`kleene.spark.eventsets.match_ses`; a TPStream query (FROM ...) the TPStream
    pipeline (:mod:`kleene.spark.tpstream`, through ``batch.match``)."""
    if is_interval(query, options):
        return match_intervals(df, query, **options)
    if is_ses(query):
        return match_ses(df, query, **options)
    return batch.match(df, query, **options)


__all__ = [
    "IntervalMatchResult",
    "Layout",
    "MatchResult",
    "StreamMatchResult",
    "local_session",
    "match",
    "match_stream",
    "read_event_file",
    "read_event_stream",
    "read_output",
    "run_stream_to_parquet",
    "session",
]
