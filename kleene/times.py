"""Time in kleene: numeric timestamps, datetimes as epoch microseconds, time units.

Datetimes are carried as integer microseconds since the epoch and turned back into
datetimes on output; a numeric time column's unit is given by ``time_unit`` (one of
:data:`TIME_UNITS`), never guessed.
"""

from __future__ import annotations

import datetime as dt

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
MICROS = 1_000_000
# A numeric timestamp must be finite and within the int64 range (nanoseconds since the
# epoch still fit): beyond it no event could ever come after it.
MAX_TIME = 2**63 - 1
# The seconds in one time unit, for ``time_unit`` (numeric time columns).
TIME_UNITS: dict[str, float] = {
    "ns": 1e-9,
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "min": 60.0,
    "h": 3600.0,
    "d": 86400.0,
}


def missing_time_unit(within: str | None) -> str:
    """The message for a window with a unit over numeric timestamps of unknown unit;
    ``within`` is the window as written (``"5 minutes"``)."""
    return (
        f"WITHIN {within or 'with a unit'} has a time unit but the timestamps are plain numbers: "
        "say what one timestamp unit is with time_unit= (--time-unit on the command "
        f"line; one of {', '.join(TIME_UNITS)}), or write the window without a unit, "
        "in timestamp units"
    )


def time_unit_seconds(unit: str) -> float:
    """The seconds in ``unit`` (a key of :data:`TIME_UNITS`); ValueError otherwise."""
    try:
        return TIME_UNITS[unit]
    except KeyError:
        units = ", ".join(TIME_UNITS)
        raise ValueError(f"unknown time unit {unit!r}; expected one of: {units}") from None


def datetime_to_micros(value: dt.datetime) -> int:
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    delta = value - EPOCH
    return (delta.days * 86_400 + delta.seconds) * MICROS + delta.microseconds


def micros_to_datetime(value: int, tz: dt.tzinfo | None) -> dt.datetime:
    moment = EPOCH + dt.timedelta(microseconds=value)
    return moment.astimezone(tz) if tz is not None else moment.replace(tzinfo=None)
