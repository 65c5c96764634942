"""kleene on Apache Spark: batch matching of DataFrames and stateful stream matching,
for every kind of query through one adapter.

This is the only package that imports pyspark.

* :func:`match` (:mod:`kleene.spark.batch`) matches a DataFrame: events are split by
  the kind's key and/or by time slice (:mod:`kleene.spark._slicing`), each group is
  sorted into stream order and fed to one matcher of the kind in a Python worker
  (``mapInArrow``). The result equals the query's ``run_detailed`` over the input in
  its order (the arrival order: events that arrive late are rejected as the local
  engine rejects them).
* :func:`match_stream` (:mod:`kleene.spark.streaming`) matches a streaming DataFrame with
  ``transformWithStateInPandas``: one matcher snapshot per key in the RocksDB state
  store, event-time timers driving ``advance_to(watermark)``, late events rejected with
  reason ``late`` (:mod:`kleene.spark._processor`).
* :func:`read_event_file` (:mod:`kleene.spark.sources`) reads an event file as the
  local engine reads it; :func:`read_event_stream` opens a source described by
  an options dict (a folder of Parquet or JSON files, or Kafka).

Both find the query's kind in :mod:`kleene.kinds` (from the text's tokens and
``time=``, or the compiled query's class) and run the same pipeline with the kind's
Spark part (:class:`kleene.spark._kind.SparkKind`: its rows, options and grouping).

    >>> import kleene.spark as ks                                   # doctest: +SKIP
    >>> spark = ks.local_session(2)                                 # doctest: +SKIP
    >>> result = ks.match(spark.read.parquet("events"), QUERY)      # doctest: +SKIP
    >>> result.matches.show(); result.rejected.show()               # doctest: +SKIP
"""

from kleene.spark._kind import Grouping, SparkKind, SparkOptions
from kleene.spark._session import ensure_python_env, local_session, session
from kleene.spark.batch import Layout, MatchResult, match
from kleene.spark.sources import read_event_file, read_event_stream
from kleene.spark.streaming import (
    StreamMatchResult,
    match_stream,
    read_output,
    run_stream_to_parquet,
)

ensure_python_env()  # before any session: Spark's Python workers run this interpreter


__all__ = [
    "Grouping",
    "Layout",
    "MatchResult",
    "SparkKind",
    "SparkOptions",
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
