"""The code that runs inside Spark's Python workers for the batch pipeline.

Two entry points share one core: :meth:`GroupMatcher.map_batches` for ``mapInArrow``
over partitions sorted by (key, slice, time, position), where each contiguous run of
one (key, slice) gets its own matcher, and :meth:`GroupMatcher.apply_group` for
``groupBy(...).applyInArrow``, where Spark hands over one whole group as a table.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kleene.events import datetime_to_micros
from kleene.match import Match, RejectedEvent
from kleene.spark._prepare import INTERNAL_PREFIX, POS
from kleene.spark._query import QuerySpec
from kleene.spark._rows import RowEncoder
from kleene.spark._schema import MatchSchema
from kleene.spark._slicing import home_slice


@dataclass(frozen=True)
class GroupMatcher:
    """Runs one matcher per (key, slice) group; picklable, compiled lazily per worker."""

    spec: QuerySpec
    schema: MatchSchema
    group_columns: tuple[str, ...]  # key columns, then the slice column when sliced
    cuts: tuple[float, ...]  # slice boundaries; () when not sliced

    # --- mapInArrow ---------------------------------------------------------------

    def map_batches(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        """Batches of one partition, sorted by group then stream order -> result rows."""
        encoder = RowEncoder(self.schema)
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
                yield from _nonempty(encoder, *run.push(self._events(part)))
        if run is not None:
            yield from _nonempty(encoder, *run.finish())

    # --- applyInArrow -------------------------------------------------------------

    def apply_group(self, table: pa.Table) -> pa.Table:
        """All rows of one group (any order) -> result rows."""
        encoder = RowEncoder(self.schema)
        if table.num_rows == 0:
            return pa.Table.from_batches([], schema=encoder.arrow_schema)
        time_field = self.spec.columns.time_field
        table = table.sort_by([(time_field, "ascending"), (POS, "ascending")])
        key = tuple(table.column(c)[0].as_py() for c in self.group_columns)
        run = self._start(key)
        found, rejected = run.push(self._events(table))
        more, more_rejected = run.finish()
        batch = encoder.to_arrow([*found, *more], [*rejected, *more_rejected])
        return pa.Table.from_batches([batch])

    # --- shared -------------------------------------------------------------------

    def _start(self, key: tuple[Any, ...]) -> _GroupRun:
        q = self.spec.compile()
        slice_index = key[-1] if self.cuts else None
        return _GroupRun(q.matcher(), self.cuts, slice_index, self.spec.columns.time_field)

    @staticmethod
    def _events(table: pa.Table) -> pa.Table:
        internal = [c for c in table.column_names if c.startswith(INTERNAL_PREFIX)]
        return table.drop_columns(internal)


class _GroupRun:
    """One matcher over one group's events, keeping only the matches the group owns."""

    def __init__(
        self, matcher: Any, cuts: Sequence[float], slice_index: int | None, time_field: str
    ) -> None:
        self.matcher = matcher
        self.cuts = cuts
        self.slice_index = slice_index
        self.time_field = time_field

    def push(self, events: pa.Table) -> tuple[list[Match], list[RejectedEvent]]:
        found = self.matcher.push(events)
        return self._owned(found, self.matcher.take_rejected())

    def finish(self) -> tuple[list[Match], list[RejectedEvent]]:
        found = self.matcher.flush()
        return self._owned(found, self.matcher.take_rejected())

    def _owned(
        self, found: list[Match], rejected: list[RejectedEvent]
    ) -> tuple[list[Match], list[RejectedEvent]]:
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
    encoder: RowEncoder, found: list[Match], rejected: list[RejectedEvent]
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
