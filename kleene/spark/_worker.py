"""The code that runs inside Spark's Python workers for the batch pipeline.

Two entry points share one core: :meth:`GroupMatcher.map_batches` for ``mapInArrow``
over partitions sorted by (key, slice, time, position), where each contiguous run of
one (key, slice) gets its own matcher, and :meth:`GroupMatcher.apply_group` for
``groupBy(...).applyInArrow``, where Spark hands over one whole group as a table.

With ``OUTPUT COLLAPSED`` the matchers return collapsed results (SIGMOD 2014, section
5.2); a group keeps those it owns and either encodes them as collapsed rows or, with
``expand``, replaces each by the matches :meth:`kleene.CollapsedMatch.expand` gives.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kleene.collapsed import CollapsedMatch, Result
from kleene.events import read_time
from kleene.match import RejectedEvent, late_reason
from kleene.spark._prepare import INTERNAL_PREFIX, POS, SEEN
from kleene.spark._query import QuerySpec
from kleene.spark._rows import RowEncoder, RowLayout
from kleene.spark._slicing import home_slice
from kleene.times import MICROS, datetime_to_micros


@dataclass(frozen=True)
class GroupMatcher:
    """Runs one matcher per (key, slice) group; picklable, compiled lazily per worker."""

    spec: QuerySpec
    schema: RowLayout  # match rows, or collapsed rows for OUTPUT COLLAPSED
    group_columns: tuple[str, ...]  # key columns, then the slice column when sliced
    cuts: tuple[float, ...]  # slice boundaries; () when not sliced
    expand: bool = False  # collapsed results out as the matches they stand for
    added_id: bool = False  # the id column was added from positions (not in the input)
    whole: bool = False  # match each group at once by its matcher's run() at its end

    # --- mapInArrow ---------------------------------------------------------------

    def map_batches(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Batches of one partition, sorted by group then stream order -> result rows."""
        encoder = self._encoder()
        current: tuple[Any, ...] | None = None
        run: _GroupRun | None = None
        for batch in batches:
            if batch.num_rows == 0:
                continue
            table = pa.Table.from_batches([batch])
            starts = _group_starts(table, self.group_columns)
            ends = [*starts[1:], table.num_rows]
            for start, end in zip(starts, ends, strict=True):
                part = table.slice(start, end - start)
                key = tuple(part.column(c)[0].as_py() for c in self.group_columns)
                if run is None or key != current:
                    if run is not None:
                        yield from _nonempty(encoder, *run.finish())
                    run = self._start(key)
                    current = key
                yield from _nonempty(encoder, *run.push(part))
        if run is not None:
            yield from _nonempty(encoder, *run.finish())

    # --- applyInArrow -------------------------------------------------------------

    def apply_group(self, table: pa.Table) -> pa.Table:
        """All rows of one group (any order) -> result rows."""
        encoder = self._encoder()
        if table.num_rows == 0:
            return pa.Table.from_batches([], schema=encoder.arrow_schema)
        time_field = self.spec.columns.time_field
        table = table.sort_by([(time_field, "ascending"), (POS, "ascending")])
        key = tuple(table.column(c)[0].as_py() for c in self.group_columns)
        run = self._start(key)
        found, rejected = run.push(table)
        more, more_rejected = run.finish()
        batch = encoder.to_arrow([*found, *more], [*rejected, *more_rejected])
        return pa.Table.from_batches([batch])

    # --- shared -------------------------------------------------------------------

    def _encoder(self) -> RowEncoder:
        return RowEncoder(self.schema)

    def _start(self, key: tuple[Any, ...]) -> _GroupRun:
        q = self.spec.compile()
        slice_index = key[-1] if self.cuts else None
        time_field = self.spec.columns.time_field
        run = _GroupRun(q.matcher(), self.cuts, slice_index, time_field, self.expand)
        config = getattr(q, "config", None)  # an event-set query allows no lateness
        run.lateness = config.allowed_lateness if config is not None else 0
        run.id_field = self.spec.columns.id_field
        run.hidden_id = run.id_field if self.added_id else None
        run.whole = self.whole
        return run


def _events(table: pa.Table) -> pa.Table:
    internal = [c for c in table.column_names if c.startswith(INTERNAL_PREFIX)]
    return table.drop_columns(internal)


@dataclass
class _GroupRun:
    """One matcher over one group's events, keeping only the results the group owns
    (a collapsed result is owned, like a match, by the slice of its start time)."""

    matcher: Any
    cuts: Sequence[float]
    slice_index: int | None
    time_field: str
    expand: bool = False
    lateness: float = 0
    id_field: str = "id"
    hidden_id: str | None = None  # an id column the input did not have
    whole: bool = False  # keep the rows, matched by ``matcher.run`` in ``finish``
    pending: list[pa.Table] = field(default_factory=list)

    def push(self, table: pa.Table) -> tuple[list[Result], list[RejectedEvent]]:
        """Push a slice of the group's rows in stream order (with the internal columns);
        ``whole``: keep them for ``finish`` (late rows are rejected at once either way)."""
        late, events = self._late(table)
        if self.whole:
            self.pending.append(events)
            return self._expanded(*self._owned([], self._shown(late)))
        found = self.matcher.push(events)
        rejected = [*late, *self.matcher.take_rejected()]
        return self._expanded(*self._owned(found, self._shown(rejected)))

    def finish(self) -> tuple[list[Result], list[RejectedEvent]]:
        events, self.pending = self.pending, []
        # whole: the matches of pushing every row kept, then flushing
        found = self.matcher.run(pa.concat_tables(events)) if events else self.matcher.flush()
        return self._expanded(*self._owned(found, self._shown(self.matcher.take_rejected())))

    def _late(self, table: pa.Table) -> tuple[list[RejectedEvent], pa.Table]:
        """The events the local engine rejects as late (the rule of
        :meth:`kleene.Matcher.push`, with the stream's latest time so far read from
        ``kleene__seen``), and the table without them and without internal columns."""
        if SEEN not in table.column_names or table.column(SEEN).null_count == len(table):
            return [], _events(table)
        events = _events(table)
        times = events.column(self.time_field)
        seen = table.column(SEEN)
        late: list[RejectedEvent] = []
        keep = np.ones(len(table), dtype=bool)
        for j in np.flatnonzero(self._late_mask(times, seen)).tolist():
            keep[j] = False
            record = events.slice(j, 1).to_pylist()[0]
            reason = late_reason(times[j].as_py(), seen[j].as_py(), self.lateness)
            late.append(RejectedEvent(record.get(self.id_field), None, reason, record))
        if keep.all():
            return [], events
        return late, events.filter(pa.array(keep))

    def _late_mask(self, times: pa.ChunkedArray, seen: pa.ChunkedArray) -> np.ndarray:
        """Which events are late: time < latest time so far (minus the allowed lateness),
        compared as :meth:`kleene.Matcher.push` compares (datetimes as microseconds)."""
        kind = times.type
        if pa.types.is_timestamp(kind):
            as_micros = pa.timestamp("us", tz=kind.tz)
            times = times.cast(as_micros, safe=False).cast(pa.int64())
            seen = seen.cast(as_micros, safe=False).cast(pa.int64())
            scale = MICROS
        elif pa.types.is_integer(kind) or pa.types.is_floating(kind):
            scale = 1
        else:
            return np.array([self._late_one(t, s) for t, s in zip(times, seen, strict=True)])
        horizon = seen
        if self.lateness:
            horizon = pc.subtract(seen.cast(pa.float64()), self.lateness * scale)
        late = pc.fill_null(pc.less(times, horizon), False)
        return np.asarray(late.to_numpy(zero_copy_only=False), dtype=bool)

    def _late_one(self, time: pa.Scalar, latest: pa.Scalar) -> bool:
        if not latest.is_valid:
            return False
        t, kind = read_time(time.as_py())
        horizon, _ = read_time(latest.as_py())
        if t is None or horizon is None:
            return False
        if self.lateness:
            horizon = horizon - self.lateness * (MICROS if kind == "datetime" else 1)
        return bool(t < horizon)

    def _shown(self, rejected: list[RejectedEvent]) -> list[RejectedEvent]:
        """Rejected events with their fields as the input had them."""
        hidden = self.hidden_id
        if hidden is None:
            return rejected
        return [
            RejectedEvent(
                r.id, r.position, r.reason, {k: v for k, v in r.record.items() if k != hidden}
            )
            for r in rejected
        ]

    def _expanded(
        self, found: list[Result], rejected: list[RejectedEvent]
    ) -> tuple[list[Result], list[RejectedEvent]]:
        if not self.expand:
            return found, rejected
        out: list[Result] = []
        for r in found:
            out.extend(r.expand() if isinstance(r, CollapsedMatch) else (r,))
        return out, rejected

    def _owned(
        self, found: list[Result], rejected: list[RejectedEvent]
    ) -> tuple[list[Result], list[RejectedEvent]]:
        if self.slice_index is None:
            return found, rejected
        k = self.slice_index
        found = [m for m in found if home_slice(time_number(m.start), self.cuts) == k]
        rejected = [
            r
            for r in rejected
            if home_slice(time_number(r.record.get(self.time_field)), self.cuts) == k
        ]
        return found, rejected


def time_number(value: Any) -> float | None:
    """A time as the number slicing uses: microseconds for datetimes, else the value."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, dt.datetime):
        return float(datetime_to_micros(value))
    if isinstance(value, int | float | np.integer | np.floating):
        number = float(value)
        return None if math.isnan(number) else number
    return None


def _nonempty(
    encoder: RowEncoder, found: list[Result], rejected: list[RejectedEvent]
) -> Iterator[pa.RecordBatch]:
    if found or rejected:
        yield encoder.to_arrow(found, rejected)


def _group_starts(table: pa.Table, columns: Sequence[str]) -> list[int]:
    """Row indices where a new group begins (rows are sorted by the group columns)."""
    n = table.num_rows
    if not columns or n <= 1:
        return [0]
    change = np.zeros(n - 1, dtype=bool)
    for name in columns:
        col = table.column(name)
        a, b = col.slice(1), col.slice(0, n - 1)
        differ = pc.fill_null(pc.not_equal(a, b), False)
        null_flip = pc.not_equal(pc.is_null(a), pc.is_null(b))
        change |= pc.or_(differ, null_flip).to_numpy()
    return [0, *(np.flatnonzero(change) + 1).tolist()]
