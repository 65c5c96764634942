"""A finite batch of events as the column-wise pre-processing reads it: from Python
dict rows or from an Arrow table (match-windows paper, section 4: the events come from
a relation).

:mod:`kleene.eventsets.batch` and :class:`~kleene.eventsets.filtering.PropertyBits` read
each needed column once (the properties' attributes, the times, the partitioning
attributes); a table hands them its columns as they are, without building a Python
object per event. Dict rows are built only for the events algorithm A sees
(:meth:`Source.rows`), or for every event where the columnar path gives up
(:meth:`Source.all_rows`). A missing column reads as nulls, as a missing key of a dict
row does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping, Sequence
from operator import itemgetter
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from kleene.compiler.columnar import Raw
from kleene.eventsets.compile import TIME
from kleene.eventsets.partitioning import key_of, partition_key

Event = Mapping[str, Any]


class NotColumnar(Exception):
    """The batch's times are not plain numbers (or the window bounds would round):
    the caller reads it event by event."""


class Source(Protocol):
    """A batch of ``n`` events read column by column."""

    n: int

    def column(self, key: str) -> Raw:
        """The values of attribute ``key`` (None or a null where an event lacks it)."""

    def times(self) -> np.ndarray:
        """The times as an array (NotColumnar unless one kind of plain numbers)."""

    def time_at(self, j: int) -> Any:
        """Event ``j``'s time as the user gave it."""

    def codes(self, key: str) -> tuple[np.ndarray, pa.Array] | None:
        """A string column without nulls (plain or dictionary-encoded) as codes into its
        distinct values (so a condition on it alone is evaluated once per distinct
        value), or None."""

    def keys(self, kept: Sequence[int], attributes: tuple[str, ...]) -> Iterator[Any]:
        """Per kept event, its partition key (None if it fails the equalities)."""

    def rows(self, indices: Sequence[int]) -> list[Event]:
        """The events at ``indices`` as dict rows."""

    def all_rows(self) -> Sequence[Event]:
        """Every event as a dict row."""


class RowSource:
    """A batch of dict rows."""

    def __init__(self, rows: Sequence[Event]) -> None:
        self._rows = rows
        self.n = len(rows)

    def column(self, key: str) -> Raw:
        return [e.get(key) for e in self._rows]

    def times(self) -> np.ndarray:
        try:
            return np.asarray(list(map(itemgetter(TIME), self._rows)))
        except (TypeError, ValueError):
            raise NotColumnar from None

    def time_at(self, j: int) -> Any:
        return self._rows[j][TIME]

    def codes(self, key: str) -> tuple[np.ndarray, pa.Array] | None:
        return None  # factorizing Python values costs more than it saves

    def keys(self, kept: Sequence[int], attributes: tuple[str, ...]) -> Iterator[Any]:
        rows = self._rows
        return (partition_key(rows[i], attributes) for i in kept)

    def rows(self, indices: Sequence[int]) -> list[Event]:
        return [self._rows[i] for i in indices]

    def all_rows(self) -> Sequence[Event]:
        return self._rows


class TableSource:
    """A batch held in an Arrow table, one column per attribute."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table
        self.n = table.num_rows
        self._names = set(table.column_names)
        self._rows: list[dict[str, Any]] | None = None
        self._codes: dict[str, tuple[np.ndarray, pa.Array] | None] = {}

    def column(self, key: str) -> Raw:
        if key not in self._names:
            return [None] * self.n
        return self.table.column(key)

    def times(self) -> np.ndarray:
        if TIME not in self._names:
            raise NotColumnar  # the row path reports the missing time
        column = self.table.column(TIME)
        kind = column.type
        if column.null_count or not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
            raise NotColumnar
        return np.asarray(column.to_numpy())

    def time_at(self, j: int) -> Any:
        return self.table.column(TIME)[j].as_py()

    def codes(self, key: str) -> tuple[np.ndarray, pa.Array] | None:
        if key not in self._codes:
            self._codes[key] = self._encode(key)
        return self._codes[key]

    def _encode(self, key: str) -> tuple[np.ndarray, pa.Array] | None:
        if key not in self._names:
            return None
        column = self.table.column(key)
        kind = column.type
        if column.null_count:
            return None
        if pa.types.is_dictionary(kind):
            return _dictionary_codes(column)
        if not _is_string(kind):
            return None
        array = column.combine_chunks()
        if _one_value(array, pa.types.is_large_string(kind)):  # as a type column often is
            return np.zeros(len(array), dtype=np.intp), array.slice(0, 1)
        encoded = array.dictionary_encode()
        return np.asarray(encoded.indices.to_numpy()), encoded.dictionary

    def keys(self, kept: Sequence[int], attributes: tuple[str, ...]) -> Iterator[Any]:
        values = [
            self.table.column(a).to_pylist() if a in self._names else [None] * self.n
            for a in attributes
        ]
        for i in kept:
            yield key_of(tuple(v[i] for v in values))

    def rows(self, indices: Sequence[int]) -> list[Event]:
        if self._rows is not None:
            return [self._rows[i] for i in indices]
        return self.table.take(pa.array(indices, type=pa.int64())).to_pylist()

    def all_rows(self) -> Sequence[Event]:
        if self._rows is None:
            self._rows = self.table.to_pylist()
        return self._rows


def _is_string(kind: pa.DataType) -> bool:
    return pa.types.is_string(kind) or pa.types.is_large_string(kind)


def _dictionary_codes(column: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array] | None:
    """A dictionary-encoded string column without nulls as its indices into its
    dictionary (one for all chunks); None if the dictionary holds other values or
    nulls, or more values than the column has events (as a short slice of a long
    column may: its properties are then evaluated over the events)."""
    if not _is_string(column.type.value_type):
        return None
    array = column.unify_dictionaries().combine_chunks()
    dictionary = array.dictionary
    if dictionary.null_count or len(dictionary) > len(array):
        return None
    return np.asarray(array.indices.to_numpy()), dictionary


def _one_value(array: pa.Array, large: bool) -> bool:
    """Whether a string array without nulls holds one value only, told by its bytes
    (every value as long as the first and byte for byte the same), without hashing
    each value as a dictionary encoding does."""
    n = len(array)
    if not n:
        return False
    _, offsets_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64 if large else np.int32)
    offsets = offsets[array.offset : array.offset + n + 1]
    width = int(offsets[1] - offsets[0])
    if offsets[-1] - offsets[0] != n * width or not (np.diff(offsets) == width).all():
        return False
    if not width:
        return True  # every value empty
    data = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0] : offsets[-1]]
    return bool((data[width:] == data[:-width]).all())  # each value equals the one before


def source_of(events: Any) -> Source:
    """A batch as a source: an Arrow Table or RecordBatch and a pandas DataFrame are read
    by column (a DataFrame arrow cannot hold as one kind per column by its records),
    anything else as a sequence of dict rows."""
    if isinstance(events, pa.RecordBatch):
        events = pa.Table.from_batches([events])
    if isinstance(events, pa.Table):
        return TableSource(events)
    pd = sys.modules.get("pandas")  # a DataFrame means pandas is imported already
    if pd is not None and isinstance(events, pd.DataFrame):
        try:
            return TableSource(pa.Table.from_pandas(events, preserve_index=False))
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            return RowSource(events.to_dict("records"))
    return RowSource(events if isinstance(events, Sequence) else list(events))
