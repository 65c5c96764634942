"""Admission of a TPStream query's input events: each one is admitted or rejected with
its reason, never dropped.

The FROM clause names the stream: an event whose type is another one is not part of it
(and is passed over, as a SASE+ query passes over types it does not name); an event
without a type belongs to it. Checked, in order: what makes a record an event at all
(kleene.events), a readable timestamp of the stream's one kind (numbers or datetimes),
every attribute the query reads present, usable (a number, a string, a boolean or a
datetime) and of the kind first seen for that attribute, and a timestamp later than the
previous event's of its partition (section 4.1: timestamps are unique and in order) and
not before the stream's time (the clock of the shared
:class:`~kleene.runtime.stream_time.StreamTime`: the latest time given to
:meth:`~kleene.tpstream.runtime.TemporalMatcher.advance_to`; an event does not move
it, as each partition keeps its own order). Events take their arrival numbers as
their positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from kleene.events import EventBatch, EventFields, read_batch, value_kind
from kleene.runtime.ingest import attribute_problem
from kleene.runtime.stream_time import StreamTime
from kleene.tpstream.plan import TemporalPlan


@dataclass(frozen=True)
class Admitted:
    """An admitted event: its input position, partition key, time (internal: datetimes
    as epoch microseconds), the values of the plan's attributes, in order, and its id
    (its position where it has none)."""

    position: int
    key: tuple[Any, ...]
    time: Any
    values: tuple[Any, ...]
    id: Any = None


@dataclass(frozen=True)
class AdmittedColumns:
    """The admitted events of a clean columnar batch, per partition: ``parts`` maps
    each partition key to the batch rows of its admitted events, in arrival order;
    ``times`` holds every row's time (internal), ``first`` the batch's first
    position."""

    batch: EventBatch
    times: np.ndarray
    first: int
    parts: dict[tuple[Any, ...], np.ndarray]


# A columnar batch is admitted column-wise only while its partitions are few enough
# (and it is long enough) for a numpy pass per partition to beat a Python step per
# event.
MIN_ROWS_PER_PARTITION = 16


class Admission:
    """Admits the events of one stream, batch by batch, in arrival order."""

    def __init__(self, plan: TemporalPlan, fields: EventFields) -> None:
        self.plan = plan
        self.fields = fields
        reads = dict.fromkeys([*plan.attributes, *plan.partition])
        self.reads = tuple(a for a in reads if a != "timestamp")  # the time is checked apart
        self.kinds: dict[str, str] = {}
        self.last: dict[tuple[Any, ...], Any] = {}
        # the time kind, the stream's time (no event before it is admitted), arrivals
        # (the events' positions) and rejected events
        self.time = StreamTime()
        # events per partition a batch needs to be admitted column-wise
        self.min_rows = MIN_ROWS_PER_PARTITION

    def admit_columns(self, events: Any) -> AdmittedColumns | list[Admitted]:
        """The admitted events of a clean arrow batch as columns per partition, the
        admitted events of any other input one by one (as :meth:`admit`)."""
        time = self.time
        batch = read_batch(events, self.fields, time.arrived)
        if batch.table is None or not self._clean(batch):
            return self._rows(batch)
        keys = self._keys(batch)
        if keys is None:
            return self._whole(batch)
        time.learn(batch.time_kind, batch.tz)
        for attr in self.reads:
            self.kinds.setdefault(attr, _column_kind(batch, attr))  # type: ignore[arg-type]
        times = batch.times_array()
        parts: dict[tuple[Any, ...], np.ndarray] = {}
        late: list[tuple[int, Any]] = []
        floor = time.clock
        for key, rows in keys.items():
            fresh, before = _in_order(times[rows], self.last.get(key))
            if floor is not None:
                fresh &= times[rows] >= floor
            if not fresh.all():
                late += zip(rows[~fresh].tolist(), before[~fresh].tolist(), strict=True)
                rows = rows[fresh]
            if len(rows):
                parts[key] = rows
                self.last[key] = times[rows[-1]].item()
        first = time.arrived
        for j, before_j in sorted(late):
            reason = self._late(times[j].item(), before_j)
            time.reject(batch.ids[j], first + j, reason, batch.record(j))
        time.arrived += len(batch)
        return AdmittedColumns(batch, times, first, parts)

    def _keys(self, batch: EventBatch) -> dict[tuple[Any, ...], np.ndarray] | None:
        """The batch rows of each partition key, in arrival order; None when there are
        too many partitions for column-wise admission."""
        n = len(batch)
        if not self.plan.partition:
            return {(): np.arange(n)} if n >= self.min_rows else None
        keys = list(zip(*(batch.column(a) for a in self.plan.partition), strict=True))
        index: dict[tuple[Any, ...], int] = {}
        codes = np.fromiter((index.setdefault(k, len(index)) for k in keys), np.int64, n)
        if len(index) * self.min_rows > n:
            return None
        order = np.argsort(codes, kind="stable")
        bounds = np.searchsorted(codes[order], np.arange(len(index) + 1))
        return {k: order[bounds[c] : bounds[c + 1]] for k, c in index.items()}

    def admit(self, events: Any) -> list[Admitted]:
        """The admitted events of the stream, in arrival order."""
        return self._rows(read_batch(events, self.fields, self.time.arrived))

    def _rows(self, batch: EventBatch) -> list[Admitted]:
        if self._clean(batch):
            return self._whole(batch)
        out = []
        time = self.time
        for j in range(len(batch)):
            position = time.arrived + j
            reason = self._problem(batch, j)
            if reason is not None:
                rid = position if j in batch.problems else batch.ids[j]
                time.reject(rid, position, reason, batch.record(j))
            elif self._ours(batch, j):
                out.append(self._admitted(batch, j, position))
        time.arrived += len(batch)
        return out

    def _clean(self, batch: EventBatch) -> bool:
        """Whether every event of the batch is of the stream with a time of its kind and
        each attribute read of one known kind, nothing missing (checked column-wise)."""
        if batch.problems or not len(batch) or batch.time_kind not in ("number", "datetime"):
            return False
        if self.time.time_kind not in (None, batch.time_kind):
            return False
        if not batch.present_types() <= {None, self.plan.stream}:
            return False
        for attr in self.reads:
            kind = _column_kind(batch, attr)
            if kind is None or self.kinds.get(attr, kind) != kind:
                return False
        return True

    def _whole(self, batch: EventBatch) -> list[Admitted]:
        """The events of a clean batch: only the order within partitions is left to
        check, event by event."""
        time = self.time
        time.learn(batch.time_kind, batch.tz)
        for attr in self.reads:
            self.kinds.setdefault(attr, _column_kind(batch, attr))  # type: ignore[arg-type]
        n, times, part = len(batch), batch.times, self.plan.partition
        keys = list(zip(*(batch.column(a) for a in part), strict=True)) if part else [()] * n
        columns = [times if a == "timestamp" else batch.column(a) for a in self.plan.attributes]
        rows = list(zip(*columns, strict=True)) if columns else [()] * n
        out = []
        last, floor, ids, first = self.last, time.clock, batch.ids, time.arrived
        for j, (key, values) in enumerate(zip(keys, rows, strict=True)):
            t = times[j]
            before = last.get(key)
            if (before is not None and t <= before) or (floor is not None and t < floor):
                time.reject(ids[j], first + j, self._late(t, before), batch.record(j))
                continue
            last[key] = t
            out.append(Admitted(first + j, key, t, values, ids[j]))
        time.arrived += len(batch)
        return out

    def _ours(self, batch: EventBatch, j: int) -> bool:
        etype = batch.types[j]
        return etype is None or etype == self.plan.stream

    def _problem(self, batch: EventBatch, j: int) -> str | None:
        if j in batch.problems:
            return batch.problems[j] or "not an event"
        if not self._ours(batch, j):
            return None
        problem = self.time.problem(batch.time_kinds[j])
        if problem is not None:
            return problem
        stream = self.plan.stream
        for attr in self.reads:
            value = batch.column(attr)[j]
            unusable = attribute_problem(stream, attr, value)
            if unusable is not None:
                return unusable
            found = value_kind(value)
            expected = self.kinds.get(attr, found)
            if found != expected:
                return (
                    f"attribute {attr!r} of {stream!r} is a {found} ({value!r}), "
                    f"expected a {expected}"
                )
        return self._order(batch, j)

    def _order(self, batch: EventBatch, j: int) -> str | None:
        time = batch.times[j]
        key = tuple(batch.column(a)[j] for a in self.plan.partition)
        last = self.last.get(key)
        floor = self.time.clock
        if (last is None or time > last) and (floor is None or time >= floor):
            return None
        return self._late(time, last)

    def _late(self, time: Any, last: Any) -> str:
        """Why an event at ``time`` cannot follow its partition's last, at ``last``
        (None: it has none), or the stream's time."""
        late = self.time.late(time)
        if late is not None:
            return late
        if time < last:
            return self.time.late_reason(time, last) + " (of its partition)"
        return (
            f"duplicate time {self.time.time_out(time)!r} in its partition: TPStream needs "
            "strictly increasing timestamps within a partition"
        )

    def _admitted(self, batch: EventBatch, j: int, position: int) -> Admitted:
        time = batch.times[j]
        self.time.learn(batch.time_kinds[j], batch.tz)
        for attr in self.reads:
            self.kinds.setdefault(attr, value_kind(batch.column(attr)[j]))
        key = tuple(batch.column(a)[j] for a in self.plan.partition)
        self.last[key] = time
        values = tuple(
            time if a == "timestamp" else batch.column(a)[j] for a in self.plan.attributes
        )
        return Admitted(position, key, time, values, batch.ids[j])


def _in_order(times: np.ndarray, last: Any) -> tuple[np.ndarray, np.ndarray]:
    """Which of a partition's times are later than every earlier one (and than
    ``last``, the partition's latest before them, None if none), and that latest
    time before each (meaningless for a first event without ``last``). A late event
    does not raise the maximum, so the running maximum of all earlier times is the
    latest admitted one, as event-by-event admission keeps it."""
    before = np.empty_like(times)
    before[0] = times[0] if last is None else last
    before[1:] = np.maximum.accumulate(times)[:-1]
    if last is not None:
        before = np.maximum(before, last)
    fresh = times > before
    if last is None:
        fresh[0] = True
    return fresh, before


def _column_kind(batch: EventBatch, attr: str) -> str | None:
    """The one kind of a column's values, none missing: "number", "string" or
    "boolean"; None otherwise (its events are then checked one by one)."""
    kind = batch.kind(attr)
    if kind is not None:
        return kind
    table = batch.table
    if table is not None:
        if attr not in table.column_names:
            return None
        column = table.column(attr)
        return "boolean" if pa.types.is_boolean(column.type) and not column.null_count else None
    values = batch.column(attr)
    return "boolean" if values and all(type(v) is bool for v in values) else None
