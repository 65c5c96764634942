"""Stream matching of events with uncertainty intervals: ``kleene.spark.match_stream``
with an interval query (VLDB 2010).

Events are grouped by the query's partition key (one group without one, as for point
events: :mod:`kleene.spark._query`) and handed to ``transformWithStateInPandas`` with
an :class:`IntervalProcessor`. Per key and micro-batch it resumes the key's
:class:`~kleene.imprecise.matcher.IntervalMatcher` from its snapshot (kleene's
versioned snapshot format, kept in the RocksDB state store), pushes the key's new
events, and saves the snapshot again; a result leaves as soon as it is final.

* **Arrival order.** A shuffle does not keep the order of a key's rows within a
  micro-batch, so they are pushed sorted by lower bound (then upper bound, then id):
  an order that keeps the arrival-order assumption of section 2.2 within the batch.
  Across micro-batches the matcher checks it, and an event whose interval ends before
  a lower bound already seen is rejected with the reason.
* **U_max must be declared** (``u_max=``): it cannot be measured over an unbounded
  input, and it decides when results are final.
* **When results come.** A result is final once t_emit = now.lower - U_max passes its
  last event's upper bound plus W (section 3.3), now.lower being the largest lower
  bound of the key's events: it leaves with the micro-batch of the key that moves
  t_emit past it. Spark's watermark plays no part (late events are defined by the
  intervals themselves), so none may be given.
* Rejected events leave in the rejected output with their reasons (their ``position``
  counts the key's events).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import TimerValues

from kleene.errors import EventError, QueryError, SnapshotError
from kleene.spark._interval_worker import IntervalRowEncoder, IntervalSchema, compiled
from kleene.spark._prepare import keyed
from kleene.spark._processor import micro_batch, without_internal
from kleene.spark._query import QuerySpec, key_routing
from kleene.spark._rows import combined_schema
from kleene.spark.intervals import interval_schema, resolve_interval_query

GROUP = "kleene__all"
STATE_SCHEMA = "snapshot binary"


def interval_stream(
    events: DataFrame,
    query: Any,
    fields: Mapping[str, str | None],
    partition_by: Sequence[str] | str | None,
    options: Mapping[str, Any],
) -> tuple[QuerySpec, DataFrame, IntervalSchema]:
    """The spec, the combined output (:mod:`kleene.spark._rows`) and the match-row
    layout of an interval query over a streaming DataFrame."""
    spec, q = resolve_interval_query(query, fields, options)
    if q.interval.u_max is None:
        raise QueryError(
            "a stream of interval events needs u_max= (the largest upper - lower): it "
            "cannot be measured over an unbounded input"
        )
    columns = spec.columns
    if columns.id_field not in events.columns:
        raise EventError(f"a stream needs an id column ({columns.id_field!r} is missing)")
    grouped, group_cols = keyed(events, key_routing(q, partition_by), columns, GROUP)
    schema = interval_schema(q, events, columns)
    output = grouped.groupBy(*group_cols).transformWithStateInPandas(
        statefulProcessor=IntervalProcessor(spec, schema),
        outputStructType=combined_schema(schema),
        outputMode="Append",
        timeMode="None",
    )
    return spec, output, schema


class IntervalProcessor(StatefulProcessor):
    """Per-key interval matcher kept as a snapshot in Spark state (module docstring)."""

    def __init__(self, spec: QuerySpec, schema: IntervalSchema) -> None:
        self.spec = spec
        self.schema = schema

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.state = handle.getValueState("kleene", STATE_SCHEMA)
        self.encoder = IntervalRowEncoder(self.schema)
        self.query = compiled(self.spec)

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        batch = micro_batch(rows)
        if batch is None:
            return
        new = without_internal(batch)
        saved = self.state.get() if self.state.exists() else None
        try:
            matcher = self.query.matcher(state=bytes(saved[0]) if saved else None)
        except SnapshotError as e:
            raise SnapshotError(
                f"the streaming checkpoint holds a state this query cannot resume: {e}. "
                "To start over, give the stream a new checkpoint location"
            ) from None
        found: list[Any] = matcher.push(
            pa.Table.from_pandas(self._arrival(new), preserve_index=False)
        )
        rejected = matcher.take_rejected()
        self.state.update((matcher.snapshot(),))
        if found or rejected:
            yield self.encoder.to_pandas(found, rejected)

    def _arrival(self, new: pd.DataFrame) -> pd.DataFrame:
        """The key's new events in an order that keeps the arrival-order assumption."""
        q, spec = self.query, self.query.interval
        by = [spec.lower_field, spec.upper_field] if spec.margins is None else [q.fields.time_field]
        by = [c for c in [*by, q.fields.id_field] if c in new.columns]
        try:
            return new.sort_values(by, kind="stable", na_position="first")
        except TypeError:  # values of mixed kinds: admission rejects the odd ones
            return new

    def close(self) -> None:
        pass
