"""The stateful processor behind :func:`kleene.spark.match_stream`.

Spark calls it per partition key: ``handleInputRows`` with the key's new events of a
micro-batch, ``handleExpiredTimer`` when the key's event-time timer fires. Both run the
same step:

1. Read the key's state: the matcher snapshot (``Matcher.snapshot()`` bytes), the
   *pending* events (received, not yet fed: an Arrow IPC blob) and the largest time fed
   so far.
2. Split the new events: those at or behind the micro-batch's watermark are **late**
   (Spark's own definition, the rows its stateful operators would drop) and become
   rejected events with reason ``late``; the rest join the pending events.
3. Feed the matcher every pending event at or behind the watermark, in stream order
   (time, then id), then ``advance_to(watermark)``: no event at or before it can come
   any more, so runs whose window has passed expire and trailing negations are decided
   (docs/semantics.md, negation). Events ahead of the watermark wait, so events that
   arrive out of order, within the watermark delay, are still matched in time order —
   the engine itself needs its input in time order.
4. Store the new state and register one event-time timer for the next moment the key
   needs attention: its earliest pending event, or the time its last live run can
   expire (largest fed time + W). Timers wake keys that receive no new events. Once the
   watermark is past that time and nothing is pending, the key's state is dropped, so
   state stays bounded by the keys active within the window (``all`` and ``collapsed``
   output).

With ``OUTPUT COLLAPSED`` the matcher returns collapsed results (SIGMOD 2014, section
5.2), encoded as collapsed rows (:mod:`kleene.spark._collapsed`) at their last event.

Matches are therefore emitted once the watermark passes them: latency = watermark delay
(+ W for a trailing negation). Without WITHIN nothing expires and a trailing negation
is never decided in a stream.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pyarrow as pa
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, TimerValues

from kleene.collapsed import Result
from kleene.errors import SnapshotError
from kleene.match import RejectedEvent
from kleene.runtime.matcher import Matcher
from kleene.spark._prepare import INTERNAL_PREFIX
from kleene.spark._query import QuerySpec
from kleene.spark._rows import RowEncoder, RowLayout
from kleene.vocabulary import OutputFormat

MICROS_COLUMN = f"{INTERNAL_PREFIX}us"
STATE_SCHEMA = "snapshot binary, pending binary, horizon long"
LATE = "late"


class MatchProcessor(StatefulProcessor):
    """Per-key kleene matcher kept in Spark state; see the module docstring."""

    def __init__(self, spec: QuerySpec, schema: RowLayout, datetime_time: bool) -> None:
        self.spec = spec
        self.schema = schema
        self.datetime_time = datetime_time

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.state = handle.getValueState("kleene", STATE_SCHEMA)
        self.encoder = RowEncoder(self.schema)
        self.query = self.spec.compile()
        cols = self.spec.columns
        self.time_field, self.id_field = cols.time_field, cols.id_field
        self.window_us, self.forgetful = self._reach()

    def _reach(self) -> tuple[float | None, bool]:
        """The query's window in microseconds (None without one) and whether a key's
        matcher may be dropped once the watermark is past its events' windows."""
        window = self.query.window
        forgetful = self.query.output is not OutputFormat.NON_OVERLAP
        return (None if window is None else window * 1e6), forgetful

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        yield from self._step(micro_batch(rows), timerValues.getCurrentWatermarkInMs())

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[pd.DataFrame]:
        yield from self._step(None, timerValues.getCurrentWatermarkInMs())

    def close(self) -> None:
        pass

    # --- the step -------------------------------------------------------------------

    def _step(self, new: pd.DataFrame | None, watermark_ms: int) -> Iterator[pd.DataFrame]:
        snapshot, pending, horizon = self._load()
        wm_us = watermark_ms * 1000 if watermark_ms > 0 else None
        rejected: list[RejectedEvent] = []
        if new is not None:
            new = self._normalize(new)
            if wm_us is not None:
                late = new[MICROS_COLUMN].notna() & (new[MICROS_COLUMN] <= wm_us)
                rejected += [self._late(r) for r in new[late].to_dict("records")]
                new = new[~late]
            pending = new if pending is None else pd.concat([pending, new], ignore_index=True)

        ready = None
        if pending is not None and len(pending):
            times = pending[MICROS_COLUMN]
            due = times.isna() if wm_us is None else (times.isna() | (times <= wm_us))
            if due.any():
                ready = pending[due].sort_values(
                    [MICROS_COLUMN, self.id_field], kind="stable", na_position="first"
                )
                pending = pending[~due]

        found: list[Result] = []
        if ready is not None or (snapshot is not None and wm_us is not None):
            matcher = self._matcher(snapshot)
            if ready is not None:
                found += matcher.push(_events(ready))
                fed = ready[MICROS_COLUMN].max()
                if not pd.isna(fed):
                    horizon = int(fed) if horizon is None else max(horizon, int(fed))
            if wm_us is not None:
                found += matcher.advance_to(self._time_value(wm_us))
            rejected += matcher.take_rejected()
            snapshot = matcher.snapshot()

        if self._settled(pending, horizon, wm_us):
            snapshot, horizon = None, None  # nothing left to decide: forget the key
        self._save(snapshot, pending, horizon)
        self._schedule(pending, horizon, wm_us)
        if found or rejected:
            yield self.encoder.to_pandas(found, rejected)

    def _settled(
        self, pending: pd.DataFrame | None, horizon: int | None, wm_us: int | None
    ) -> bool:
        """Whether the key's matcher can be dropped: no pending events, and the
        watermark is past every fed event's window, so every run has expired and every
        trailing negation is decided. (Non-overlap output keeps its state: which match
        comes next depends on the last one kept.)"""
        return (
            self.forgetful
            and self.window_us is not None
            and (pending is None or not len(pending))
            and horizon is not None
            and wm_us is not None
            and wm_us > horizon + self.window_us
        )

    def _normalize(self, new: pd.DataFrame) -> pd.DataFrame:
        """Rebuild a timestamp time column from the exact microseconds (pandas gives
        naive local times; the engine reads naive times as UTC)."""
        if self.datetime_time:
            new = new.copy()
            new[self.time_field] = pd.to_datetime(new[MICROS_COLUMN], unit="us", utc=True)
        return new

    def _late(self, row: dict[str, Any]) -> RejectedEvent:
        record = {k: v for k, v in row.items() if not k.startswith(INTERNAL_PREFIX)}
        return RejectedEvent(record.get(self.id_field), None, LATE, record)

    def _time_value(self, micros: int) -> Any:
        if self.datetime_time:
            return pd.Timestamp(micros, unit="us", tz="UTC").to_pydatetime()
        return micros / 1e6

    # --- state and timers ---------------------------------------------------------------

    def _matcher(self, snapshot: bytes | None) -> Matcher:
        """The key's matcher, resumed from its snapshot (kleene's snapshot format)."""
        try:
            return self.query.matcher(state=snapshot)
        except SnapshotError as e:
            raise SnapshotError(
                f"the streaming checkpoint holds a state this query cannot resume: {e}. "
                "To start over, give the stream a new checkpoint location"
            ) from None

    def _load(self) -> tuple[bytes | None, pd.DataFrame | None, int | None]:
        if not self.state.exists():
            return None, None, None
        value = self.state.get()
        if value is None:
            return None, None, None
        snapshot, pending_blob, horizon = value
        snapshot = bytes(snapshot) if snapshot is not None else None
        pending = None
        if pending_blob is not None:
            with pa.ipc.open_stream(io.BytesIO(bytes(pending_blob))) as reader:
                pending = reader.read_all().to_pandas()
        return snapshot, pending, horizon

    def _save(
        self, snapshot: bytes | None, pending: pd.DataFrame | None, horizon: int | None
    ) -> None:
        blob = None
        if pending is not None and len(pending):
            table = pa.Table.from_pandas(pending, preserve_index=False)
            sink = io.BytesIO()
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            blob = sink.getvalue()
        if snapshot is None and blob is None:
            self.state.clear()
            return
        self.state.update((snapshot, blob, horizon))

    def _schedule(
        self, pending: pd.DataFrame | None, horizon: int | None, wm_us: int | None
    ) -> None:
        for expiry in list(self.handle.listTimers()):
            self.handle.deleteTimer(expiry)
        wakes: list[float] = []
        if pending is not None and len(pending):
            earliest = pending[MICROS_COLUMN].min()
            if not pd.isna(earliest):
                wakes.append(float(earliest))
        if horizon is not None and self.window_us is not None:
            wakes.append(horizon + self.window_us)
        floor_us = wm_us if wm_us is not None else 0
        wakes = [w for w in wakes if w > floor_us]
        if wakes:
            self.handle.registerTimer(math.ceil(min(wakes) / 1000) + 1)


def micro_batch(rows: Iterator[pd.DataFrame]) -> pd.DataFrame | None:
    """A key's rows of one micro-batch (the frames Spark hands a stateful processor) as
    one frame; None when there are none."""
    frames = [f for f in rows if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else None


def without_internal(frame: pd.DataFrame) -> pd.DataFrame:
    """The events without kleene's internal columns (``kleene__...``)."""
    return frame.drop(columns=[c for c in frame.columns if str(c).startswith(INTERNAL_PREFIX)])


def _events(frame: pd.DataFrame) -> pa.Table:
    return pa.Table.from_pandas(without_internal(frame), preserve_index=False)
