"""The one group worker of the batch pipeline: what runs inside Spark's Python workers.

Two entry points share one core: :meth:`GroupWorker.map_batches` for ``mapInArrow``
over partitions sorted by (group, stream order), where each contiguous run of one group
gets its own matcher, and :meth:`GroupWorker.apply_group` for
``groupBy(...).applyInArrow``, where Spark hands over one whole group as a table.

For every kind alike, a group's matcher is ``query.matcher()`` of the kind's compiled
query (:mod:`kleene.runtime.contract`): the group's events are pushed in order (or, for
a ``whole`` grouping, kept and matched at once by ``run`` when the group ends), then it
is flushed; its matches go through the kind's rows (:class:`kleene.spark._rows.Rows`)
and its rejected events, with those the worker rejects itself (events behind
``kleene__seen``: late in the input's arrival order), into the combined layout. A time
slice keeps only the results and rejected events it owns (:mod:`kleene.spark._slicing`).
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

from kleene.events import read_time
from kleene.match import RejectedEvent, late_reason
from kleene.spark._prepare import INTERNAL_PREFIX, POS, SEEN
from kleene.spark._query import QuerySpec
from kleene.spark._rows import Encoding, RowEncoder, Rows
from kleene.spark._slicing import home_slice
from kleene.times import MICROS, datetime_to_micros


@dataclass(frozen=True)
class GroupWorker:
    """Runs one matcher per group; picklable, its query compiled once per process."""

    spec: QuerySpec
    rows: Rows
    group_columns: tuple[str, ...]  # key columns, then the slice column when sliced
    cuts: tuple[float, ...] = ()  # slice boundaries; () when not sliced
    added_id: bool = False  # the id column was added from positions (not in the input)
    whole: bool = False  # match each group at once by its matcher's run() at its end
    lateness: float = 0  # the allowed lateness of the check against kleene__seen
    positions: bool = False  # map the matcher's counts of its events to input positions

    # --- mapInArrow ---------------------------------------------------------------

    def map_batches(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Batches of one partition, sorted by group then stream order -> result rows."""
        encoder = RowEncoder(self.rows)
        current: tuple[Any, ...] | None = None
        run: GroupRun | None = None
        for batch in batches:
            if batch.num_rows == 0:
                continue
            table = pa.Table.from_batches([batch])
            starts = group_starts(table, self.group_columns)
            ends = [*starts[1:], table.num_rows]
            for start, end in zip(starts, ends, strict=True):
                part = table.slice(start, end - start)
                key = tuple(part.column(c)[0].as_py() for c in self.group_columns)
                if run is None or key != current:
                    if run is not None:
                        yield from _nonempty(encoder, run.finish())
                    run = self.start(key)
                    current = key
                yield from _nonempty(encoder, run.push(part))
        if run is not None:
            yield from _nonempty(encoder, run.finish())

    # --- applyInArrow -------------------------------------------------------------

    def apply_group(self, table: pa.Table, order: Sequence[str]) -> pa.Table:
        """All rows of one group (any order) -> result rows."""
        encoder = RowEncoder(self.rows)
        if table.num_rows == 0:
            return pa.Table.from_batches([], schema=encoder.arrow_schema)
        table = table.sort_by([(c, "ascending") for c in order])
        run = self.start(tuple(table.column(c)[0].as_py() for c in self.group_columns))
        out = run.push(table) + run.finish()
        return pa.Table.from_batches([encoder.to_arrow(out)])

    # --- shared -------------------------------------------------------------------

    def start(self, key: tuple[Any, ...]) -> GroupRun:
        """The run of the group of ``key``, with a new matcher."""
        columns = self.spec.columns
        hidden = columns.id_field if self.added_id else None
        return GroupRun(
            self,
            self.spec.compile().matcher(),
            key[-1] if self.cuts else None,
            Encoding(self.rows, columns.id_field, hidden),
            Place(columns.time_field, self.positions),
        )


@dataclass
class Place:
    """Where the events a group's matcher has been fed sit in the input: their input
    positions in feeding order (kept when the kind's matcher counts its events, with the
    first admitted event at each time), and the latest one."""

    time_field: str
    keep: bool
    last: int | None = None
    chunks: list[np.ndarray] = field(default_factory=list)
    offsets: list[int] = field(default_factory=list)
    times: list[list[Any]] = field(default_factory=list)
    fed: int = 0  # events fed so far
    settled: int = 0  # events whose arrival is recorded
    firsts: dict[Any, int] = field(default_factory=dict)

    def add(self, table: pa.Table) -> None:
        """Record the next events fed (with their ``kleene__pos``)."""
        if not table.num_rows:
            return
        positions = table.column(POS)
        self.last = positions[-1].as_py()
        if self.keep:
            self.chunks.append(positions.to_numpy())
            self.offsets.append(self.fed)
            names = table.column_names
            times = table.column(self.time_field).to_pylist() if self.time_field in names else None
            self.times.append(times if times is not None else [None] * table.num_rows)
        self.fed += table.num_rows

    def settle(self, rejected: Sequence[RejectedEvent]) -> None:
        """Record the arrival of every event fed so far that the matcher did not reject."""
        if not self.keep:
            return
        refused = {r.position for r in rejected if r.position is not None}
        for chunk, offset, times in zip(self.chunks, self.offsets, self.times, strict=True):
            if offset + len(chunk) <= self.settled:
                continue
            for j in range(max(0, self.settled - offset), len(chunk)):
                if offset + j not in refused:
                    self.firsts.setdefault(times[j], int(chunk[j]))
        self.settled = self.fed

    def position(self, index: int) -> int:
        if not self.keep:
            return index
        k = int(np.searchsorted(self.offsets, index, side="right")) - 1
        return int(self.chunks[k][index - self.offsets[k]])

    def arrival(self, time: Any) -> int | None:
        return self.firsts.get(time)


@dataclass
class GroupRun:
    """One matcher over one group's events, keeping only the results the group owns
    (a result, like a rejected event, is owned by the slice of its start time)."""

    worker: GroupWorker
    matcher: Any
    slice_index: int | None
    encoding: Encoding
    place: Place
    pending: list[pa.Table] = field(default_factory=list)

    def push(self, table: pa.Table) -> list[dict[str, Any]]:
        """Push a slice of the group's rows in stream order (with the internal columns);
        for a ``whole`` grouping keep them for :meth:`finish` (late rows are rejected at
        once either way). The rows of what became known."""
        late, kept = self._late(table)
        self.place.add(kept)
        events = _events(kept)
        if self.worker.whole:
            self.pending.append(events)
            return self._rows([], late)
        found = self.matcher.push(events)
        rejected = self.matcher.take_rejected()
        self.place.settle(rejected)
        return self._rows(found, [*late, *rejected])

    def finish(self) -> list[dict[str, Any]]:
        events, self.pending = self.pending, []
        # whole: the matches of pushing every row kept, then flushing
        found = self.matcher.run(pa.concat_tables(events)) if events else self.matcher.flush()
        rejected = self.matcher.take_rejected()
        self.place.settle(rejected)
        return self._rows(found, rejected)

    def _rows(self, found: list[Any], rejected: list[RejectedEvent]) -> list[dict[str, Any]]:
        found = self.worker.rows.results(found)
        if self.slice_index is not None:
            found, rejected = self._owned(found, rejected)
        return self.encoding(found, rejected, self.place, self.place.last)

    def _late(self, table: pa.Table) -> tuple[list[RejectedEvent], pa.Table]:
        """The events the local engine rejects as late (the rule of
        :meth:`kleene.Matcher.push`, with the stream's latest time so far read from
        ``kleene__seen``), and the table without them."""
        if SEEN not in table.column_names or table.column(SEEN).null_count == len(table):
            return [], table
        events = _events(table)
        time_field = self.worker.spec.columns.time_field
        id_field = self.worker.spec.columns.id_field
        times = events.column(time_field)
        seen = table.column(SEEN)
        late: list[RejectedEvent] = []
        keep = np.ones(len(table), dtype=bool)
        lateness = self.worker.lateness
        for j in np.flatnonzero(_late_mask(times, seen, lateness)).tolist():
            keep[j] = False
            record = events.slice(j, 1).to_pylist()[0]
            reason = late_reason(times[j].as_py(), seen[j].as_py(), lateness)
            late.append(RejectedEvent(record.get(id_field), None, reason, record))
        if keep.all():
            return [], table
        return late, table.filter(pa.array(keep))

    def _owned(
        self, found: list[Any], rejected: list[RejectedEvent]
    ) -> tuple[list[Any], list[RejectedEvent]]:
        k, cuts = self.slice_index, self.worker.cuts
        time_field = self.worker.spec.columns.time_field
        found = [m for m in found if home_slice(time_number(m.start), cuts) == k]
        rejected = [
            r for r in rejected if home_slice(time_number(r.record.get(time_field)), cuts) == k
        ]
        return found, rejected


def _late_mask(times: pa.ChunkedArray, seen: pa.ChunkedArray, lateness: float) -> np.ndarray:
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
        return np.array([_late_one(t, s, lateness) for t, s in zip(times, seen, strict=True)])
    horizon = seen
    if lateness:
        horizon = pc.subtract(seen.cast(pa.float64()), lateness * scale)
    late = pc.fill_null(pc.less(times, horizon), False)
    return np.asarray(late.to_numpy(zero_copy_only=False), dtype=bool)


def _late_one(time: pa.Scalar, latest: pa.Scalar, lateness: float) -> bool:
    if not latest.is_valid:
        return False
    t, kind = read_time(time.as_py())
    horizon, _ = read_time(latest.as_py())
    if t is None or horizon is None:
        return False
    if lateness:
        horizon = horizon - lateness * (MICROS if kind == "datetime" else 1)
    return bool(t < horizon)


def _events(table: pa.Table) -> pa.Table:
    """The events without kleene's internal columns."""
    internal = [c for c in table.column_names if c.startswith(INTERNAL_PREFIX)]
    return table.drop_columns(internal)


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


def _nonempty(encoder: RowEncoder, rows: list[dict[str, Any]]) -> Iterator[pa.RecordBatch]:
    if rows:
        yield encoder.to_arrow(rows)


def group_starts(table: pa.Table, columns: Sequence[str]) -> list[int]:
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
