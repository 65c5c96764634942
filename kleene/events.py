"""The event model: events in columnar batches.

An event has a type, an id, a timestamp and named attributes. Input may be an iterable
of mappings, a pandas DataFrame, or a pyarrow Table / RecordBatch; whatever its form, a
batch is read into columns (Python lists of the attributes a query needs) once, and the
matcher walks those columns. Timestamps are numbers, or datetimes, which are carried as
integer microseconds since the epoch and turned back into datetimes on output.
"""

from __future__ import annotations

import datetime as dt
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MICROS = 1_000_000


@dataclass(frozen=True)
class EventFields:
    """Where the type, time and id of an event are found."""

    type_field: str = "type"
    time_field: str = "timestamp"
    id_field: str = "id"


def is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def datetime_to_micros(value: dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * MICROS + delta.microseconds


def micros_to_datetime(value: int, tz: dt.tzinfo | None) -> dt.datetime:
    moment = EPOCH + dt.timedelta(microseconds=value)
    return moment.astimezone(tz) if tz is not None else moment.replace(tzinfo=None)


class EventBatch:
    """A batch of events as columns, converted to Python values only where needed.

    ``types``, ``times``, ``time_kinds``, ``ids`` and ``column(attr)`` are per-event
    Python lists (built on first use). ``times`` holds numbers (None where unreadable);
    ``time_kinds`` says per event whether its time was a number or a datetime, or why
    it is unreadable. The vectorized views (``types_array``, ``times_array``,
    ``array``, ``kind``, ``time_kind``) let the matcher check and filter a whole batch
    at once; ``take`` gives the Python values of chosen rows only.
    """

    def __init__(
        self,
        n: int,
        fields: EventFields,
        first: int,
        *,
        table: pa.Table | None = None,
        rows: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        self.n = n
        self.fields = fields
        self.first = first
        self.table = table
        self.rows = rows
        self.tz: dt.tzinfo | None = None
        self.time_kind: str | None = None
        self._cache: dict[str, Any] = {}
        self._read_times()

    def __len__(self) -> int:
        return self.n

    # --- per-event lists ------------------------------------------------------------

    @property
    def types(self) -> list[Any]:
        if "types" not in self._cache:
            self._cache["types"] = self._raw(self.fields.type_field)
        return self._cache["types"]

    @property
    def ids(self) -> list[Any]:
        if "ids" not in self._cache:
            first = self.first
            if self.table is not None:
                raw = self._raw(self.fields.id_field)
                ids = [first + j if v is None else v for j, v in enumerate(raw)]
            else:
                assert self.rows is not None
                ids = [
                    (
                        row.get(self.fields.id_field, first + j)
                        if isinstance(row, Mapping)
                        else first + j
                    )
                    for j, row in enumerate(self.rows)
                ]
            self._cache["ids"] = ids
        return self._cache["ids"]

    def ids_at(self, rows: np.ndarray) -> list[Any]:
        """The ids of the given rows (their input positions where the id is missing)."""
        if "ids" in self._cache or self.table is None:
            ids = self.ids
            return [ids[i] for i in rows.tolist()]
        positions = (rows + self.first).tolist()
        if self.fields.id_field not in self.table.column_names:
            return positions
        column = self.table.column(self.fields.id_field)
        if not column.null_count:
            return column.take(rows).to_pylist()
        raw = column.take(rows).to_pylist()
        return [p if v is None else v for v, p in zip(raw, positions, strict=True)]

    def column(self, attr: str) -> list[Any]:
        key = "col:" + attr
        if key not in self._cache:
            self._cache[key] = self._raw(attr)
        return self._cache[key]

    def record(self, j: int) -> dict[str, Any]:
        """The j-th event as read, for the rejected-events output."""
        if self.table is not None:
            return dict(self.table.slice(j, 1).to_pylist()[0])
        assert self.rows is not None
        row = self.rows[j]
        return dict(row) if isinstance(row, Mapping) else {"value": row}

    def _raw(self, name: str) -> list[Any]:
        if self.table is not None:
            if name in self.table.column_names:
                return self.table.column(name).to_pylist()
            return [None] * self.n
        assert self.rows is not None
        return [row.get(name) if isinstance(row, Mapping) else None for row in self.rows]

    # --- vectorized views ----------------------------------------------------------------

    def types_array(self) -> np.ndarray:
        if "types_array" not in self._cache:
            if self.table is not None and self.fields.type_field in self.table.column_names:
                col = self.table.column(self.fields.type_field)
                arr = col.to_numpy(zero_copy_only=False)
            else:
                arr = np.asarray(self.types, dtype=object)
            self._cache["types_array"] = arr
        return self._cache["types_array"]

    def type_mask(self, types: Iterable[str]) -> np.ndarray:
        """Which events have one of the given types, as a boolean array (read-only:
        it is computed once per batch and set of types)."""
        wanted = sorted(set(types))
        key = "type_mask:" + repr(wanted)
        if key in self._cache:
            return self._cache[key]
        if self.table is not None and self.fields.type_field in self.table.column_names:
            col = self.table.column(self.fields.type_field)
            found = pc.is_in(col, value_set=pa.array(wanted, type=col.type))
            mask = found.to_numpy(zero_copy_only=False) & ~pc.is_null(col).to_numpy(
                zero_copy_only=False
            )
        else:
            mask = np.isin(self.types_array(), wanted)
        mask.flags.writeable = False
        self._cache[key] = mask
        return mask

    def present_types(self) -> set[Any]:
        """The distinct event types of the batch (None when some event has none)."""
        if "present" not in self._cache:
            if self.table is not None and self.fields.type_field in self.table.column_names:
                col = self.table.column(self.fields.type_field)
                found = set(pc.unique(col).to_pylist())
            else:
                found = set(self.types)
            self._cache["present"] = found
        return self._cache["present"]

    def kind(self, attr: str, rows: np.ndarray | None = None) -> str | None:
        """ "number" or "string" when every value of the column (of the rows where the
        boolean mask ``rows`` is set) is one and none is missing; None otherwise (then
        each event is checked on its own)."""
        if rows is not None and not rows.all():
            return self._kind(attr, rows)
        key = "kind:" + attr
        if key not in self._cache:
            self._cache[key] = self._kind(attr, None)
        return self._cache[key]

    def _kind(self, attr: str, rows: np.ndarray | None) -> str | None:
        if self.table is not None:
            if attr not in self.table.column_names:
                return None
            col = self.table.column(attr)
            if rows is not None:
                col = col.filter(pa.array(rows))
            if col.null_count:
                return None
            if pa.types.is_integer(col.type):
                return "number"
            if pa.types.is_floating(col.type):
                return None if pc.any(pc.is_nan(col)).as_py() else "number"
            if pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
                return "string"
            return None
        values = self.column(attr)
        if rows is not None:
            values = [values[i] for i in np.flatnonzero(rows).tolist()]
        return column_kind(values)

    def array(self, attr: str) -> np.ndarray:
        """The column as numpy (numbers as int64/float64, strings as objects)."""
        key = "arr:" + attr
        if key not in self._cache:
            if self.table is not None and attr in self.table.column_names:
                arr = self.table.column(attr).to_numpy(zero_copy_only=False)
            else:
                values = self.column(attr)
                arr = np.asarray(values, dtype=object if self.kind(attr) != "number" else None)
            self._cache[key] = arr
        return self._cache[key]

    def times_array(self) -> np.ndarray:
        if "times_arrow" in self._cache:
            return self._cache["times_arrow"].to_numpy()
        return np.asarray(self.times, dtype=np.float64 if self.time_kind == "number" else np.int64)

    def take(self, attr: str, rows: np.ndarray) -> list[Any]:
        """The Python values of one column at the given rows."""
        if self.table is not None and attr in self.table.column_names:
            return self.table.column(attr).take(rows).to_pylist()
        values = self.column(attr)
        return [values[i] for i in rows.tolist()]

    # --- time ----------------------------------------------------------------------

    def _read_times(self) -> None:
        """Times as numbers (datetimes as epoch microseconds) with a per-event kind;
        ``time_kind`` is the batch's single kind, or None when kinds differ or a time
        is unreadable. A clean arrow time column stays columnar until asked for."""
        name = self.fields.time_field
        if self.table is not None and name in self.table.column_names:
            col = self._arrow_time_column(self.table.column(name))
            if col is not None:
                self._cache["times_arrow"] = col
                return
            times, kinds = self._arrow_times(self.table.column(name))
        elif self.table is not None:
            times, kinds = [None] * self.n, ["missing timestamp"] * self.n
        else:
            assert self.rows is not None
            times, kinds = [], []
            for row in self.rows:
                value = row.get(name) if isinstance(row, Mapping) else None
                internal, kind = read_time(value)
                times.append(internal)
                kinds.append(kind)
                if kind == "datetime" and self.tz is None:
                    self.tz = getattr(value, "tzinfo", None)
        self._cache["times"], self._cache["time_kinds"] = times, kinds
        found = set(kinds)
        single = found.pop() if len(found) == 1 else None
        self.time_kind = single if single in ("number", "datetime") else None

    def _arrow_time_column(self, col: pa.ChunkedArray) -> pa.ChunkedArray | None:
        """The column as numbers when no time is missing, setting ``time_kind``."""
        if col.null_count:
            return None
        if pa.types.is_timestamp(col.type):
            tz_name = col.type.tz
            if tz_name:
                import zoneinfo

                self.tz = dt.UTC if tz_name.upper() == "UTC" else zoneinfo.ZoneInfo(tz_name)
            self.time_kind = "datetime"
            return col.cast(pa.timestamp("us", tz_name)).cast(pa.int64())
        if pa.types.is_integer(col.type) or (
            pa.types.is_floating(col.type) and not pc.any(pc.is_nan(col)).as_py()
        ):
            self.time_kind = "number"
            return col
        return None

    def _arrow_times(self, col: pa.ChunkedArray) -> tuple[list[Any], list[str]]:
        if pa.types.is_timestamp(col.type):
            micros = col.cast(pa.timestamp("us", col.type.tz)).cast(pa.int64()).to_pylist()
            return micros, ["datetime" if v is not None else "missing timestamp" for v in micros]
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
            values = col.to_pylist()
            kinds = ["missing timestamp" if is_missing(v) else "number" for v in values]
            return [None if is_missing(v) else v for v in values], kinds
        read = [read_time(v) for v in col.to_pylist()]
        return [r[0] for r in read], [r[1] for r in read]

    @property
    def times(self) -> list[Any]:
        if "times" not in self._cache:
            self._cache["times"] = self._cache["times_arrow"].to_pylist()
        return self._cache["times"]

    @property
    def time_kinds(self) -> list[str]:
        if "time_kinds" not in self._cache:
            self._cache["time_kinds"] = [self.time_kind] * self.n
        return self._cache["time_kinds"]

    def times_at(self, rows: np.ndarray) -> list[Any]:
        if "times" not in self._cache:
            return self._cache["times_arrow"].take(rows).to_pylist()
        times = self.times
        return [times[i] for i in rows.tolist()]

    def last_time(self) -> Any:
        if "times" not in self._cache:
            return self._cache["times_arrow"][-1].as_py()
        return self.times[-1]


def column_kind(column: list[Any]) -> str | None:
    """ "number" or "string" when every value is one and none is missing, else None."""
    kinds = set(map(type, column))
    if kinds == {str}:
        return "string"
    if kinds and kinds <= {int, float}:
        if float in kinds and np.isnan(np.asarray(column, dtype=float)).any():
            return None
        return "number"
    return None


def read_batch(events: Any, fields: EventFields, first_position: int) -> EventBatch:
    """Read any supported input into an :class:`EventBatch`."""
    if isinstance(events, pa.RecordBatch):
        events = pa.Table.from_batches([events])
    if isinstance(events, pa.Table):
        return EventBatch(events.num_rows, fields, first_position, table=events)
    pd = sys.modules.get("pandas")  # a DataFrame means pandas is imported already
    if pd is not None and isinstance(events, pd.DataFrame):
        try:
            table = pa.Table.from_pandas(events, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            rows = events.to_dict("records")
            return EventBatch(len(rows), fields, first_position, rows=rows)
        return EventBatch(table.num_rows, fields, first_position, table=table)
    if isinstance(events, Mapping):
        events = [events]
    rows = list(events)
    return EventBatch(len(rows), fields, first_position, rows=rows)


def read_time(value: Any) -> tuple[Any, str]:
    if isinstance(value, bool) or is_missing(value):
        return None, "missing timestamp"
    if isinstance(value, int | float):
        return value, "number"
    if isinstance(value, dt.datetime):
        return datetime_to_micros(value), "datetime"
    if hasattr(value, "dtype") and str(getattr(value, "dtype", "")).startswith("datetime64"):
        return int(value.astype("datetime64[us]").astype("int64")), "datetime"
    if hasattr(value, "item") and isinstance(value.item(), int | float):  # numpy scalar
        return value.item(), "number"
    return None, f"timestamp {value!r} is neither a number nor a datetime"
