"""kleene on Apache Spark: batch matching of DataFrames and stateful stream matching.

This is the only package that imports pyspark. :func:`match` matches a DataFrame
(:mod:`kleene.spark.batch`); :func:`match_stream` matches a streaming DataFrame with
per-key state in Spark's state store (:mod:`kleene.spark.streaming`).
"""

from kleene.spark._session import local_session
from kleene.spark.batch import Layout, MatchResult, match
from kleene.spark.sources import read_event_stream
from kleene.spark.streaming import (
    StreamMatchResult,
    match_stream,
    read_output,
    run_stream_to_parquet,
)

__all__ = [
    "Layout",
    "MatchResult",
    "StreamMatchResult",
    "local_session",
    "match",
    "match_stream",
    "read_event_stream",
    "read_output",
    "run_stream_to_parquet",
]
