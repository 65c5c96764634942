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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

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


@dataclass
class EventBatch:
    """A batch of events as columns.

    ``times`` holds numbers (None where unreadable); ``time_kinds`` says per event
    whether its time was a number or a datetime ("number", "datetime" or a reason string
    when unreadable). ``columns`` holds the requested attributes (missing -> None).
    """

    types: list[Any]
    times: list[Any]
    time_kinds: list[str]
    ids: list[Any]
    columns: dict[str, list[Any]]
    tz: dt.tzinfo | None
    _records: Sequence[Mapping[str, Any]] | pa.Table

    def __len__(self) -> int:
        return len(self.types)

    def record(self, j: int) -> dict[str, Any]:
        """The j-th event as read, for the rejected-events output."""
        if isinstance(self._records, pa.Table):
            return dict(self._records.slice(j, 1).to_pylist()[0])
        return dict(self._records[j])


def read_batch(
    events: Any, fields: EventFields, attributes: Iterable[str], first_position: int
) -> EventBatch:
    """Read any supported input into an :class:`EventBatch`."""
    attributes = list(attributes)
    if isinstance(events, pa.RecordBatch):
        events = pa.Table.from_batches([events])
    if isinstance(events, pa.Table):
        return _from_arrow(events, fields, attributes, first_position)
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        pd = None
    if pd is not None and isinstance(events, pd.DataFrame):
        try:
            table = pa.Table.from_pandas(events, preserve_index=False)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return _from_records(events.to_dict("records"), fields, attributes, first_position)
        return _from_arrow(table, fields, attributes, first_position)
    if isinstance(events, Mapping):
        events = [events]
    return _from_records(list(events), fields, attributes, first_position)


def _from_records(
    rows: list[Mapping[str, Any]], fields: EventFields, attributes: list[str], first: int
) -> EventBatch:
    times, kinds, tz = [], [], None
    for row in rows:
        value, kind = read_time(row.get(fields.time_field) if isinstance(row, Mapping) else None)
        times.append(value)
        kinds.append(kind)
        if kind == "datetime" and tz is None:
            tz = getattr(row.get(fields.time_field), "tzinfo", None)
    rows_ok = [row if isinstance(row, Mapping) else {} for row in rows]
    return EventBatch(
        types=[row.get(fields.type_field) for row in rows_ok],
        times=times,
        time_kinds=kinds,
        ids=[row.get(fields.id_field, first + j) for j, row in enumerate(rows_ok)],
        columns={a: [row.get(a) for row in rows_ok] for a in attributes},
        tz=tz,
        _records=rows,
    )


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


def _from_arrow(
    table: pa.Table, fields: EventFields, attributes: list[str], first: int
) -> EventBatch:
    n = table.num_rows
    names = set(table.column_names)
    tz = None
    if fields.time_field in names:
        col = table.column(fields.time_field)
        if pa.types.is_timestamp(col.type):
            tz_name = col.type.tz
            if tz_name:
                import zoneinfo

                tz = dt.UTC if tz_name.upper() == "UTC" else zoneinfo.ZoneInfo(tz_name)
            micros = col.cast(pa.timestamp("us", tz_name)).cast(pa.int64()).to_pylist()
            times = micros
            kinds = ["datetime" if v is not None else "missing timestamp" for v in micros]
        elif pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
            times = col.to_pylist()
            kinds = ["missing timestamp" if is_missing(v) else "number" for v in times]
            times = [None if is_missing(v) else v for v in times]
        else:
            read = [read_time(v) for v in col.to_pylist()]
            times, kinds = [r[0] for r in read], [r[1] for r in read]
    else:
        times, kinds = [None] * n, ["missing timestamp"] * n
    types = (
        table.column(fields.type_field).to_pylist() if fields.type_field in names else [None] * n
    )
    if fields.id_field in names:
        raw_ids = table.column(fields.id_field).to_pylist()
        ids = [first + j if v is None else v for j, v in enumerate(raw_ids)]
    else:
        ids = list(range(first, first + n))
    columns = {a: (table.column(a).to_pylist() if a in names else [None] * n) for a in attributes}
    return EventBatch(types, times, kinds, ids, columns, tz, table)
