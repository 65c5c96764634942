"""The event model: events in columnar batches.

An event has a type, an id, a timestamp and named attributes. Input may be an iterable
of mappings, a pandas DataFrame, or a pyarrow Table / RecordBatch; whatever its form, a
batch is read into columns (Python lists of the attributes a query needs) once, and the
matcher walks those columns. Timestamps are numbers, or datetimes, which are carried as
integer microseconds since the epoch and turned back into datetimes on output.

Every encoding is normalised on the way in (see docs/language.md, "Events"): arrow
dictionary, ``string_view`` and large string columns and pandas ``category`` columns
become plain values, numpy scalars and ``Decimal`` become Python numbers, and missing
markers (None, NaN, ``pd.NA``, ``NaT``) become None. What cannot be an event is found
per event and rejected with its reason (``EventBatch.problems``): an event type that is
not text, a cell a typed reader could not parse (the ``kleene_problem`` column), a
timestamp that is not a finite number within the int64 range or a datetime.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from kleene.times import MAX_TIME, datetime_to_micros

# A column a typed reader adds: per row, why a cell could not be read (null when fine).
PROBLEM_COLUMN = "kleene_problem"

# The event tuple the SASE+ runtimes pass around, ``(type, time, id, *attributes)``
# (admission builds it): where each fixed field is, and where the attributes start, in
# the plan's order (``Plan.attributes``, ``Plan.attr_index``).
EVENT_TYPE, EVENT_TIME, EVENT_ID = 0, 1, 2
FIRST_ATTRIBUTE = 3


@dataclass(frozen=True)
class EventFields:
    """Where the type, time and id of an event are found."""

    type_field: str = "type"
    time_field: str = "timestamp"
    id_field: str = "id"


def value_kind(value: Any) -> str:
    """The kind of a field value, as admission and snapshots name it."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dt.datetime):
        return "datetime"
    return type(value).__name__


def is_missing(value: Any) -> bool:
    """None, a float or Decimal NaN, numpy NaN / NaT, pandas ``NA`` / ``NaT``."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, str | int):
        return False
    if type(value).__name__ in ("NAType", "NaTType"):
        return True
    if isinstance(value, np.floating):
        return bool(np.isnan(value))
    if isinstance(value, np.datetime64 | np.timedelta64):
        return bool(np.isnat(value))
    if isinstance(value, decimal.Decimal):
        return value.is_nan()
    return False


def normal_value(value: Any) -> Any:
    """An attribute value as a plain Python value: None when missing, numpy scalars and
    ``Decimal`` as int / float / bool / str. Other values (lists, dicts, datetimes) are
    returned as they are; the validator decides whether the query can use them."""
    kind = type(value)
    if kind is int or kind is str or value is None:
        return value
    if kind is float:
        return None if value != value else value  # NaN
    if isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if is_missing(value):
        return None
    if isinstance(value, np.generic) and not isinstance(value, np.datetime64):
        return value.item()
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def type_problem(value: Any) -> str | None:
    """Why ``value`` cannot be an event type (None when it is text)."""
    if isinstance(value, str):
        return None
    if is_missing(value):
        return "missing event type"
    return f"event type {value!r} is not text"


class EventBatch:
    """A batch of events as columns, converted to Python values only where needed.

    ``types``, ``times``, ``time_kinds``, ``ids`` and ``column(attr)`` are per-event
    Python lists (built on first use). ``times`` holds numbers (None where unreadable);
    ``time_kinds`` says per event whether its time was a number or a datetime, or why
    it is unreadable. The vectorized views (``types_array``, ``times_array``,
    ``array``, ``kind``, ``time_kind``) let the matcher check and filter a whole batch
    at once; ``take`` gives the Python values of chosen rows only. ``problems`` maps
    the index of each event that cannot be an event at all to the reason.
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
        self.problems: dict[int, str] = {}
        self._text_types = True
        self._dicts = rows is not None and all(type(row) is dict for row in rows)
        self._find_problems()
        self._read_times()

    def _find_problems(self) -> None:
        name = self.fields.type_field
        if self.table is not None:
            if PROBLEM_COLUMN in self.table.column_names:
                reasons = self.table.column(PROBLEM_COLUMN).to_pylist()
                self.problems = {j: r for j, r in enumerate(reasons) if r is not None}
            if name in self.table.column_names:
                col = self.table.column(name)
                if not pa.types.is_string(col.type):
                    self._text_types = False
                    for j, value in enumerate(col.to_pylist()):
                        self.problems.setdefault(j, type_problem(value) or "")
            return
        assert self.rows is not None
        types: list[Any] = []
        dicts = self._dicts
        for j, row in enumerate(self.rows):
            if not dicts and not isinstance(row, Mapping):
                self.problems[j] = f"an event is a mapping of fields, not a {type(row).__name__}"
                types.append(None)
                continue
            reason = row.get(PROBLEM_COLUMN)
            if reason is not None:
                self.problems[j] = str(reason)
            value = row.get(name)
            if isinstance(value, str):
                types.append(value)
                continue
            if isinstance(value, np.str_):
                types.append(str(value))
                continue
            types.append(None)
            if not is_missing(value):
                self.problems.setdefault(j, type_problem(value) or "")
        self._cache["types"] = types

    def __len__(self) -> int:
        return self.n

    # --- per-event lists ------------------------------------------------------------

    @property
    def types(self) -> list[Any]:
        """Event types: text, or None (missing or not text)."""
        if "types" not in self._cache:
            if self._text_types:
                self._cache["types"] = self._raw(self.fields.type_field)
            else:
                self._cache["types"] = [None] * self.n
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
            record = dict(self.table.slice(j, 1).to_pylist()[0])
        else:
            assert self.rows is not None
            row = self.rows[j]
            record = dict(row) if isinstance(row, Mapping) else {"value": row}
        record.pop(PROBLEM_COLUMN, None)
        return record

    def _raw(self, name: str) -> list[Any]:
        if self.table is not None:
            if name in self.table.column_names:
                return self.table.column(name).to_pylist()
            return [None] * self.n
        assert self.rows is not None
        if self._dicts:
            return [normal_value(row.get(name)) for row in self.rows]
        return [
            normal_value(row.get(name)) if isinstance(row, Mapping) else None for row in self.rows
        ]

    # --- vectorized views ----------------------------------------------------------------

    def types_array(self) -> np.ndarray:
        if "types_array" not in self._cache:
            if self._text_types and self._has_column(self.fields.type_field):
                assert self.table is not None
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
        if self._text_types and self._has_column(self.fields.type_field):
            assert self.table is not None
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
            if self._text_types and self._has_column(self.fields.type_field):
                assert self.table is not None
                col = self.table.column(self.fields.type_field)
                found = set(pc.unique(col).to_pylist())
            else:
                found = set(self.types)
            self._cache["present"] = found
        return self._cache["present"]

    def _has_column(self, name: str) -> bool:
        return self.table is not None and name in self.table.column_names

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
            dicts = self._dicts
            for row in self.rows:
                value = row.get(name) if dicts or isinstance(row, Mapping) else None
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
            return _micros(col)
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
            if len(col) and not _finite_times(col):
                return None
            self.time_kind = "number"
            return col
        return None

    def _arrow_times(self, col: pa.ChunkedArray) -> tuple[list[Any], list[str]]:
        if pa.types.is_timestamp(col.type):
            micros = _micros(col).to_pylist()
            return micros, ["datetime" if v is not None else "missing timestamp" for v in micros]
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


def _micros(col: pa.ChunkedArray) -> pa.ChunkedArray:
    """A timestamp column as int64 microseconds since the epoch (finer units truncated)."""
    return pc.cast(col, pa.timestamp("us", col.type.tz), safe=False).cast(pa.int64())


def _finite_times(col: pa.ChunkedArray) -> bool:
    """Whether every number of the column is a usable time (finite, within MAX_TIME)."""
    if pa.types.is_floating(col.type) and not pc.all(pc.is_finite(col)).as_py():
        return False
    if pa.types.is_signed_integer(col.type) and col.type.bit_width <= 64:
        return True
    low, high = pc.min_max(col).values()
    return bool(float(low.as_py()) >= -MAX_TIME and float(high.as_py()) <= MAX_TIME)


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


ACCEPTED_INPUTS = (
    "a pyarrow Table or RecordBatch, a pandas DataFrame, one event as a mapping, or an "
    "iterable of mappings (e.g. a list of dicts)"
)


def read_batch(events: Any, fields: EventFields, first_position: int) -> EventBatch:
    """Read any supported input into an :class:`EventBatch`; TypeError for other input."""
    if isinstance(events, pa.RecordBatch):
        events = pa.Table.from_batches([events])
    if isinstance(events, pa.Table):
        table = normal_table(events)
        return EventBatch(table.num_rows, fields, first_position, table=table)
    pd = sys.modules.get("pandas")  # a DataFrame means pandas is imported already
    if pd is not None and isinstance(events, pd.DataFrame):
        try:
            if not _one_kind_columns(events):
                raise TypeError("mixed value kinds")
            table = normal_table(pa.Table.from_pandas(events, preserve_index=False))
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            rows = events.to_dict("records")
            return EventBatch(len(rows), fields, first_position, rows=rows)
        return EventBatch(table.num_rows, fields, first_position, table=table)
    if isinstance(events, Mapping):
        events = [events]
    rows = list(check_input(events))
    return EventBatch(len(rows), fields, first_position, rows=rows)


# pandas' names for object columns whose values arrow converts without changing them
_ONE_KIND = frozenset(
    {"string", "integer", "floating", "mixed-integer-float", "boolean", "decimal", "empty"}
    | {"datetime", "datetime64", "date", "categorical"}
)


def _one_kind_columns(frame: Any) -> bool:
    """Whether arrow can take every object column of the frame as it is: a column
    mixing kinds (True among numbers, lists among strings) is read as Python values,
    which arrow would silently convert."""
    from pandas.api.types import infer_dtype

    return all(
        infer_dtype(frame.iloc[:, i], skipna=True) in _ONE_KIND
        for i, dtype in enumerate(frame.dtypes)
        if dtype.kind == "O"
    )


def check_input(events: Any) -> Any:
    """``events`` when it is a supported input; TypeError saying what is otherwise."""
    if isinstance(events, str | bytes | bytearray) or not isinstance(events, Iterable):
        raise TypeError(f"events must be {ACCEPTED_INPUTS}; got {type(events).__name__}")
    return events


def normal_table(table: pa.Table) -> pa.Table:
    """The table with every column in a plain encoding: dictionary columns decoded,
    string views and large strings as strings, decimals as float64."""
    columns = []
    changed = False
    for col in table.columns:
        plain = _plain_column(col)
        changed |= plain is not col
        columns.append(plain)
    return pa.Table.from_arrays(columns, names=table.column_names) if changed else table


def _plain_column(col: pa.ChunkedArray) -> pa.ChunkedArray:
    kind = col.type
    if pa.types.is_dictionary(kind):
        return _plain_column(col.cast(kind.value_type))
    if pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return col.cast(pa.string())
    if pa.types.is_decimal(kind):
        return pc.cast(col, pa.float64(), safe=False)
    return col


def read_time(value: Any) -> tuple[Any, str]:
    """(time as a number, kind): kind "number" or "datetime" (the time then in epoch
    microseconds), else the reason the time cannot be used (the time then None)."""
    kind = type(value)
    if kind is int and -MAX_TIME <= value <= MAX_TIME:
        return value, "number"
    if kind is float and -MAX_TIME <= value <= MAX_TIME:  # False for NaN and inf
        return value, "number"
    if is_missing(value):
        return None, "missing timestamp"
    if isinstance(value, bool | np.bool_):
        return None, f"timestamp {value!r} is neither a number nor a datetime"
    if isinstance(value, np.datetime64):
        return int(value.astype("datetime64[us]").astype("int64")), "datetime"
    value = normal_value(value)
    if isinstance(value, int | float):
        if not math.isfinite(value):
            return None, f"timestamp {value!r} is not a finite number"
        if abs(value) > MAX_TIME:
            return None, f"timestamp {value!r} is out of range (beyond +-(2**63 - 1))"
        return value, "number"
    if isinstance(value, dt.datetime):
        return datetime_to_micros(value), "datetime"
    return None, f"timestamp {value!r} is neither a number nor a datetime"
