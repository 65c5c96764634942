"""The stream's time: its kind, the window in its units, lateness and the horizon.

The first admitted event fixes whether times are numbers or datetimes (held as
microseconds since the epoch, with the first event's zone for output). Events must
arrive in time order; with ``allowed_lateness`` an event may trail the latest time seen
by that much (the reorder buffer, :mod:`kleene.runtime.ingest`, puts it in place).
"""

from __future__ import annotations

from typing import Any, Protocol

from kleene.compiler.plan import Plan
from kleene.events import read_time
from kleene.match import late_reason
from kleene.runtime.config import MatcherConfig
from kleene.runtime.ingest import ReorderBuffer, window_size
from kleene.times import MICROS, micros_to_datetime


class TimeState(Protocol):
    """The parts of the matcher's state that time is made of."""

    time_kind: str | None
    tz: Any
    clock: Any  # time of the last released event (or watermark)
    reorder: ReorderBuffer


class StreamClock:
    """Time conversions and lateness of one matcher's stream."""

    def __init__(self, plan: Plan, config: MatcherConfig, st: TimeState) -> None:
        self.plan = plan
        self.allowed_lateness = config.allowed_lateness
        self.time_unit = config.time_unit
        self.st = st
        self.window_kind: str | None = None
        self.window_of_kind = window_size(plan, None, None)

    def window(self) -> float | None:
        """The WITHIN size in the stream's time units: a window with a unit is in
        seconds, converted for datetimes (microseconds) and for numeric times by the
        configured ``time_unit``; a window without a unit is in timestamp units
        (seconds for datetimes)."""
        kind = self.st.time_kind
        if kind != self.window_kind:  # computed once per time kind
            self.window_of_kind = window_size(self.plan, kind, self.time_unit)
            self.window_kind = kind
        return self.window_of_kind

    def learn(self, kind: str | None, tz: Any) -> None:
        """The stream's time kind and zone, from its first admitted event."""
        st = self.st
        if st.time_kind is None:
            st.time_kind, st.tz = kind, tz

    def problem(self, kind: str) -> str | None:
        """Why an event with a time of this kind cannot be admitted, or None."""
        if kind not in ("number", "datetime"):
            return kind
        if self.st.time_kind is not None and kind != self.st.time_kind:
            return f"timestamp is a {kind} but the stream's timestamps are {self.st.time_kind}s"
        return None

    def lateness(self) -> float:
        """The allowed lateness in the stream's time units."""
        return self.allowed_lateness * (MICROS if self.st.time_kind == "datetime" else 1)

    def horizon(self) -> Any:
        """Events before this time are late."""
        st = self.st
        seen = st.reorder.max_seen
        if seen is None or not self.allowed_lateness:
            return st.clock
        behind = seen - self.lateness()
        return behind if st.clock is None else max(st.clock, behind)

    def late_reason(self, t: Any, horizon: Any) -> str:
        seen, lateness = self.st.reorder.max_seen, self.allowed_lateness
        if lateness and seen is not None and horizon == seen - self.lateness():
            return late_reason(self.time_out(t), self.time_out(seen), lateness)
        return late_reason(self.time_out(t), self.time_out(horizon))

    def time_in(self, value: Any) -> Any:
        """A user's time (a watermark) in the stream's units."""
        internal, _kind = read_time(value)
        if internal is None:
            raise TypeError(f"cannot use {value!r} as a time")
        return internal

    def time_out(self, value: Any) -> Any:
        """A stream time as the user sees it."""
        if self.st.time_kind == "datetime":
            return micros_to_datetime(value, self.st.tz)
        return value
