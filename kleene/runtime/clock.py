"""A SASE+ matcher's time: the window in the stream's units, lateness and the horizon.

The stream's time kind, zone and clock are the shared
:class:`~kleene.runtime.stream_time.StreamTime`. Events must arrive in time order; with
``allowed_lateness`` an event may trail the latest time seen by that much (the reorder
buffer, :mod:`kleene.runtime.ingest`, puts it in place).
"""

from __future__ import annotations

from typing import Any, Protocol

from kleene.compiler.plan import Plan
from kleene.runtime.config import MatcherConfig
from kleene.runtime.ingest import ReorderBuffer, window_size
from kleene.runtime.stream_time import StreamTime
from kleene.times import MICROS


class TimeState(Protocol):
    """The parts of the matcher's state that time is made of."""

    time: StreamTime
    reorder: ReorderBuffer


class StreamClock:
    """The window and the lateness of one matcher's stream."""

    def __init__(self, plan: Plan, config: MatcherConfig, st: TimeState) -> None:
        self.plan = plan
        self.allowed_lateness = config.allowed_lateness
        self.time_unit = config.time_unit
        self.time = st.time
        self.reorder = st.reorder
        self.window_kind: str | None = None
        self.window_of_kind = window_size(plan, None, None)

    def window(self) -> float | None:
        """The WITHIN size in the stream's time units: a window with a unit is in
        seconds, converted for datetimes (microseconds) and for numeric times by the
        configured ``time_unit``; a window without a unit is in timestamp units
        (seconds for datetimes)."""
        kind = self.time.time_kind
        if kind != self.window_kind:  # computed once per time kind
            self.window_of_kind = window_size(self.plan, kind, self.time_unit)
            self.window_kind = kind
        return self.window_of_kind

    def lateness(self) -> float:
        """The allowed lateness in the stream's time units."""
        return self.allowed_lateness * (MICROS if self.time.time_kind == "datetime" else 1)

    def horizon(self) -> Any:
        """Events before this time are late."""
        clock, seen = self.time.clock, self.reorder.max_seen
        if seen is None or not self.allowed_lateness:
            return clock
        behind = seen - self.lateness()
        return behind if clock is None else max(clock, behind)

    def late_reason(self, t: Any, horizon: Any) -> str:
        """Why an event at ``t`` before the horizon is late: it trails the latest time
        seen by more than the allowed lateness, or it is before the stream's time."""
        seen, lateness = self.reorder.max_seen, self.allowed_lateness
        if lateness and seen is not None and horizon == seen - self.lateness():
            return self.time.late_reason(t, seen, lateness)
        return self.time.late_reason(t, horizon)
