"""Event-set (SES) patterns on :func:`kleene.spark.match_stream`.

As in batch (:mod:`kleene.spark.eventsets`), match windows are computed per partition
key: the pattern's partitioning attributes X of Definition 6 (match-window paper,
section 4.4), or one group without any. All events of a match agree on X, so a matcher
fed with one key's events finds exactly that key's matches. Per key, the state store
keeps one :class:`~kleene.eventsets.matcher.SesMatcher` snapshot (kleene's versioned
snapshot format) beside the pending events, and :class:`SesProcessor` runs the step of
:mod:`kleene.spark._processor` on it:

* events behind the watermark are rejected as ``late``; the others wait until the
  watermark passes them and are then pushed in time order (then id), so events out of
  order by less than the watermark delay are matched as if in order;
* the matcher is then advanced to the watermark: no earlier event can come, so every
  match window whose end (first event + τ) the watermark has passed is complete, and
  algorithm A runs on it (lazily, after the query's pre-processing). A match therefore
  leaves in the micro-batch whose watermark closes its window;
* an event-time timer wakes a key that receives nothing more once the watermark passes
  its last event + τ, which closes all its windows; the key's state is then dropped.

The result over a finite stream whose last event is more than τ after the others (so
that every window closes) equals ``SesQuery.run`` over the events in time order, except
that lateness is judged against the watermark (Spark's rule) rather than the latest
event.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from kleene.errors import QueryError
from kleene.eventsets.query import SesQuery
from kleene.spark._processor import MatchProcessor
from kleene.spark._query import QuerySpec
from kleene.spark._rows import combined_schema
from kleene.spark._schema import MatchSchema
from kleene.spark.eventsets import grouped, ses_schema


def ses_stream(
    timed: DataFrame,
    spec: QuerySpec,
    input_schema: T.StructType,
    datetime_time: bool,
    partition_by: Sequence[str] | str | None,
) -> tuple[DataFrame, MatchSchema]:
    """The combined output (:mod:`kleene.spark._rows`) and the match-row layout of an
    SES query over ``timed``, the stream with its watermark and microsecond times
    (:func:`kleene.spark.streaming.match_stream`)."""
    if partition_by is not None:
        raise QueryError(
            "partition_by does not apply to an event-set pattern: it is split by its "
            "partitioning attributes (Definition 6; `kleene explain` names them)"
        )
    q = cast(SesQuery, spec.compile())
    q.pattern_for(datetime_time)  # EventError now for a WITHIN unit without time_unit
    keyed, groups = grouped(timed, q, input_schema.fieldNames())
    schema = ses_schema(q, input_schema, spec.columns)
    output = keyed.groupBy(*groups).transformWithStateInPandas(
        statefulProcessor=SesProcessor(spec, schema, datetime_time),
        outputStructType=combined_schema(schema),
        outputMode="Append",
        timeMode="EventTime",
    )
    return output, schema


class SesProcessor(MatchProcessor):
    """Per-key SES matcher kept in Spark state; see the module docstring."""

    def _reach(self) -> tuple[float | None, bool]:
        """τ in microseconds (numeric times count as seconds in the stream's clock,
        as the watermark reads them); a key is forgotten once all its windows closed."""
        query = cast(SesQuery, self.query)
        window = float(query.pattern_for(self.datetime_time).window)
        return (window if self.datetime_time else window * 1e6), True
