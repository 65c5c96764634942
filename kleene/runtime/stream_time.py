"""The stream's time and arrivals: the one admission state every kind shares.

What every kind's admission learns and counts about its stream lives in one
:class:`StreamTime`: the kind of its times (numbers or datetimes, fixed by the first
admitted event, or by ``advance_to`` before any), the zone datetimes are shown in (the
first admitted event's), the clock (the stream's current time: the latest admitted
time, or a later one given to ``advance_to``; each kind moves it as its order rule
says), the arrivals, the next stream position and the rejected events. Datetimes are
held as UTC epoch microseconds (:mod:`kleene.times`) and shown in the learned zone.
Each kind keeps its own checks (attributes, partitions, interval bounds); this state
only says what time it is, what a time means, and what was rejected.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from kleene.errors import TimeError
from kleene.events import read_time
from kleene.match import RejectedEvent, late_reason
from kleene.runtime.snapshot import fail, integer, mapping, number, sequence, text
from kleene.times import micros_to_datetime

TIME_KINDS = ("number", "datetime")


class StreamTime:
    """One stream's time kind and zone, clock, counters and rejected events."""

    __slots__ = (
        *("arrived", "clock", "position", "rejected", "rejected_count"),
        *("time_kind", "tz", "zoned"),
    )

    def __init__(self, time_kind: str | None = None) -> None:
        self.time_kind = time_kind  # "number", "datetime", or None until learned
        self.tz: dt.tzinfo | None = None  # the zone datetimes are shown in
        self.zoned = False  # whether an admitted event gave the kind and zone
        self.clock: Any = None  # the stream's current time (internal units)
        self.arrived = 0  # input events read so far (their arrival numbers)
        self.position = 0  # the next stream position of an admitted event
        self.rejected: list[RejectedEvent] = []  # not yet taken
        self.rejected_count = 0  # since the stream began

    # --- time kinds -------------------------------------------------------------------

    def learn(self, kind: str | None, tz: Any) -> None:
        """The stream's time kind and zone, from its first admitted event (of the kind
        ``advance_to`` set, if it came first: :meth:`problem` checks it)."""
        if not self.zoned:
            self.time_kind, self.tz, self.zoned = kind, tz, True

    def problem(self, kind: str) -> str | None:
        """Why an event whose time reads as ``kind`` cannot be admitted (``kind`` is
        the reason itself when the time is unreadable), or None."""
        if kind not in TIME_KINDS:
            return kind
        if self.time_kind is not None and kind != self.time_kind:
            return f"timestamp is a {kind} but the stream's timestamps are {self.time_kind}s"
        return None

    def time_in(self, value: Any) -> Any:
        """A user's time (``advance_to``'s) in internal units, of the stream's kind;
        before any event it sets the kind (the first event still gives the zone).
        :class:`~kleene.errors.TimeError` when it is no time or of the other kind."""
        internal, kind = read_time(value)
        if internal is None:
            raise TimeError(f"advance_to takes a number or a datetime: {kind}")
        if self.time_kind is not None and kind != self.time_kind:
            raise TimeError(
                f"advance_to({value!r}): the stream's timestamps are {self.time_kind}s; "
                f"give a {self.time_kind}"
            )
        self.time_kind = kind
        return internal

    def time_out(self, value: Any) -> Any:
        """A stream time as the user sees it (datetimes in the learned zone)."""
        if self.time_kind == "datetime" and value is not None:
            return micros_to_datetime(value, self.tz)
        return value

    # --- the clock --------------------------------------------------------------------

    def advance(self, time: Any) -> None:
        """Time moves on to ``time`` (never back)."""
        if self.clock is None or time > self.clock:
            self.clock = time

    def late(self, time: Any) -> str | None:
        """Why an event at ``time`` is late (before the clock), or None."""
        if self.clock is not None and time < self.clock:
            return self.late_reason(time, self.clock)
        return None

    def late_reason(self, time: Any, current: Any, lateness: float = 0) -> str:
        """:func:`kleene.match.late_reason` of internal times."""
        return late_reason(self.time_out(time), self.time_out(current), lateness)

    # --- rejected events --------------------------------------------------------------

    def reject(self, event_id: Any, position: int | None, reason: str, record: Any) -> None:
        """An event is rejected with its reason (kept until taken, and counted)."""
        self.rejected.append(RejectedEvent(event_id, position, reason, record))
        self.rejected_count += 1

    def take_rejected(self) -> list[RejectedEvent]:
        """The events rejected since the last call, each with its reason."""
        taken, self.rejected = self.rejected, []
        return taken

    # --- snapshots (kleene.runtime.snapshot) --------------------------------------------

    def to_data(self, untaken: bool = True) -> Any:
        """Plain data; ``untaken``: whether the rejected events not yet taken are saved
        (a kind that hands them out per call only keeps their count)."""
        rejected = [(r.id, r.position, r.reason, dict(r.record)) for r in self.rejected]
        counters = (self.arrived, self.position, self.rejected_count)
        kind = (self.time_kind, self.tz, self.zoned)
        return (kind, self.clock, counters, rejected if untaken else [])

    @classmethod
    def from_data(cls, data: Any) -> StreamTime:
        """The state of :meth:`to_data`, checked (SnapshotError when malformed)."""
        kinds, clock, counters, rejected = sequence(data, "the stream time", tuple, 4)
        kind, tz, zoned = sequence(kinds, "the stream's time kind", tuple, 3)
        if kind is not None and kind not in TIME_KINDS:
            fail("the stream's time kind")
        if tz is not None and not isinstance(tz, dt.tzinfo):
            fail("the stream's time zone")
        if type(zoned) is not bool or (zoned and kind is None):
            fail("whether the stream's zone is known")
        st = cls(kind)
        st.tz, st.zoned = tz, zoned
        st.clock = None if clock is None else number(clock, "the stream's clock")
        for c in sequence(counters, "the stream counters", tuple, 3):
            integer(c, "a stream counter", 0)
        st.arrived, st.position, count = counters
        if st.position > st.arrived:
            fail("more stream positions than arrivals")
        for item in sequence(rejected, "the rejected events"):
            event_id, at, reason, record = sequence(item, "a rejected event", tuple, 4)
            if at is not None:
                integer(at, "a rejected event's position", 0)
            reason = text(reason, "a rejection reason")
            st.rejected.append(RejectedEvent(event_id, at, reason, mapping(record, "a record")))
        st.rejected_count = integer(count, "the rejected count", len(st.rejected))
        return st
