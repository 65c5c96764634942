"""The stateful processor behind TPStream queries in
:func:`kleene.spark.match_stream` (:func:`kleene.spark.tpstream.match_temporal_stream`).

Spark calls it per partition key with the key's events of a micro-batch. The key's
state is one value: the :class:`~kleene.tpstream.runtime.TemporalMatcher` snapshot
(kleene's versioned snapshot format, never pickle). Each call resumes the matcher,
pushes the new events in time order (then id), stores the new snapshot and emits the
matches detected by them: a match leaves in the micro-batch of the event that reports
it, i.e. at its detection time (section 5.3), not when its situations end. There is
nothing to wait for, so no watermark or timer is used: an event that arrives after a
later one of its key was matched (in an earlier micro-batch) is rejected as behind its
partition's latest, with the reason the local engine gives. Rejected events' positions
count the key's events.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pandas as pd
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import TimerValues

from kleene.errors import SnapshotError
from kleene.spark._prepare import INTERNAL_PREFIX
from kleene.spark._processor import micro_batch, without_internal
from kleene.spark._tpstream_schema import TemporalSchema, match_row, rejected_row
from kleene.spark._tpstream_worker import compiled, to_arrow

MICROS = f"{INTERNAL_PREFIX}us"


class TemporalProcessor(StatefulProcessor):
    """One TPStream matcher per key, kept as a snapshot in Spark state."""

    def __init__(
        self, text: str, options: dict[str, Any], datetime_time: bool, schema: TemporalSchema
    ) -> None:
        self.text = text
        self.options = options
        self.datetime_time = datetime_time
        self.schema = schema

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.state = handle.getValueState("kleene_tpstream", "snapshot binary")
        self.query = compiled(self.text, self.options)
        self.arrow = to_arrow_schema(self.schema.combined(), timezone="UTC")

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        events = micro_batch(rows)
        if events is None:
            return
        f = self.query.fields
        if self.datetime_time:  # pandas gives naive local times: rebuild them, UTC
            events[f.time_field] = pd.to_datetime(events[MICROS], unit="us", utc=True)
        order = [c for c in (MICROS if self.datetime_time else f.time_field, f.id_field)]
        events = events.sort_values([c for c in order if c in events], kind="stable")
        events = without_internal(events)
        saved = self.state.get() if self.state.exists() else None
        try:
            matcher = self.query.matcher(state=None if saved is None else bytes(saved[0]))
        except SnapshotError as e:
            raise SnapshotError(
                f"the streaming checkpoint holds a state this query cannot resume: {e}. "
                "To start over, give the stream a new checkpoint location"
            ) from None
        found = matcher.push(events.reset_index(drop=True))
        out = [match_row(self.schema, m, 0, k) for k, m in enumerate(found)]
        own = f.id_field in events.columns
        out += [rejected_row(r, own) for r in matcher.take_rejected()]
        self.state.update((matcher.snapshot(),))
        if out:
            yield to_arrow(out, self.arrow).to_pandas()

    def close(self) -> None:
        pass
