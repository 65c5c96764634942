"""The one stateful processor behind :func:`kleene.spark.match_stream`, for every kind.

Spark calls it per key: ``handleInputRows`` with the key's new events of a micro-batch,
``handleExpiredTimer`` when the key's event-time timer fires. The key's state is the
matcher's snapshot (``snapshot()``: kleene's versioned snapshot format, resumed by
``query.matcher(state=...)``), the *pending* events (received, not yet fed: an Arrow
IPC blob) and the largest time fed so far. A kind's stream is of one of two sorts
(:attr:`kleene.spark._kind.SparkKind.watermark`):

**Behind a watermark** (SASE+ queries, event-set patterns), both calls run one step:

1. Split the new events: those at or behind the micro-batch's watermark are **late**
   (Spark's own definition, the rows its stateful operators would drop) and become
   rejected events with reason ``late``; the rest join the pending events.
2. Feed the matcher every pending event at or behind the watermark, in stream order
   (time, then id), then ``advance_to(watermark)``: no event at or before it can come
   any more, so runs whose window has passed expire and trailing negations are decided
   (docs/semantics.md, negation). Events ahead of the watermark wait, so events that
   arrive out of order, within the watermark delay, are still matched in time order.
3. Store the new state and register one event-time timer for the next moment the key
   needs attention: its earliest pending event, or the time its last live run can
   expire (largest fed time + the kind's reach, :meth:`SparkKind.reach`). Once the
   watermark is past that time and nothing is pending, the key's state is dropped, so
   state stays bounded by the keys active within the window.

Matches are therefore emitted once the watermark passes them: latency = watermark delay
(+ W for a trailing negation).

**As they come** (queries over interval events, TPStream queries, whose matchers judge
the order of their own events): each micro-batch of a key is pushed at once, sorted as
the kind says (:meth:`SparkKind.stream_order`), and the snapshot stored; no watermark,
no timer.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd
import pyarrow as pa
from pyspark.sql.streaming import StatefulProcessor, StatefulProcessorHandle
from pyspark.sql.streaming.stateful_processor import ExpiredTimerInfo, TimerValues

from kleene.errors import SnapshotError
from kleene.match import RejectedEvent
from kleene.spark._prepare import INTERNAL_PREFIX
from kleene.spark._query import QuerySpec
from kleene.spark._rows import Encoding, Identity, RowEncoder, Rows

MICROS_COLUMN = f"{INTERNAL_PREFIX}us"
STATE_SCHEMA = "snapshot binary, pending binary, horizon long"
LATE = "late"


@dataclass(frozen=True)
class StreamSettings:
    """What the processor needs to know of a kind's stream (:mod:`kleene.spark._kind`)."""

    watermark: bool  # behind a watermark (True) or as they come
    datetime_time: bool  # the time column holds timestamps (rebuilt from kleene__us)
    window_us: float | None = None  # the kind's reach after a key's latest event
    forgetful: bool = False  # a key's state may be dropped once past its reach
    order: tuple[str, ...] = ()  # as they come: the columns a micro-batch is sorted by


class KindProcessor(StatefulProcessor):
    """Per-key matcher of any kind kept in Spark state; see the module docstring."""

    def __init__(self, spec: QuerySpec, rows: Rows, settings: StreamSettings) -> None:
        self.spec = spec
        self.rows = rows
        self.settings = settings

    def init(self, handle: StatefulProcessorHandle) -> None:
        self.handle = handle
        self.state = handle.getValueState("kleene", STATE_SCHEMA)
        self.encoder = RowEncoder(self.rows)
        self.query = self.spec.compile()
        cols = self.spec.columns
        self.time_field, self.id_field = cols.time_field, cols.id_field
        self.datetime_time = self.settings.datetime_time
        self.window_us, self.forgetful = self.settings.window_us, self.settings.forgetful

    def handleInputRows(
        self, key: Any, rows: Iterator[pd.DataFrame], timerValues: TimerValues
    ) -> Iterator[pd.DataFrame]:
        if not self.settings.watermark:
            yield from self._as_they_come(micro_batch(rows))
            return
        yield from self._step(micro_batch(rows), timerValues.getCurrentWatermarkInMs())

    def handleExpiredTimer(
        self, key: Any, timerValues: TimerValues, expiredTimerInfo: ExpiredTimerInfo
    ) -> Iterator[pd.DataFrame]:
        yield from self._step(None, timerValues.getCurrentWatermarkInMs())

    def close(self) -> None:
        pass

    # --- as they come -------------------------------------------------------------------

    def _as_they_come(self, new: pd.DataFrame | None) -> Iterator[pd.DataFrame]:
        if new is None:
            return
        new = self._normalize(new)
        order = [c for c in self.settings.order if c in new.columns]
        with contextlib.suppress(TypeError):  # mixed kinds: the matcher rejects the odd ones
            new = new.sort_values(order, kind="stable", na_position="first")
        snapshot, _, _ = self._load()
        matcher = self._matcher(snapshot)
        found = matcher.push(_events(new))
        rejected = matcher.take_rejected()
        self.state.update((matcher.snapshot(), None, None))
        yield from self._out(found, rejected)

    def _out(self, found: list[Any], rejected: list[RejectedEvent]) -> Iterator[pd.DataFrame]:
        if found or rejected:
            rows = Encoding(self.rows, self.id_field)(found, rejected, Identity())
            yield self.encoder.to_pandas(rows)

    # --- behind a watermark ---------------------------------------------------------------

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

        found: list[Any] = []
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
        yield from self._out(found, rejected)

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
        if self.datetime_time and MICROS_COLUMN in new.columns:
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

    def _matcher(self, snapshot: bytes | None) -> Any:
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
