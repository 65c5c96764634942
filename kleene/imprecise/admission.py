"""Admission of interval events (VLDB 2010, section 2.2): every event is checked and
either admitted as an :class:`IntervalEvent` or rejected with its reason, never dropped.

Checked, in order: what makes a record an event at all (kleene.events), the interval
(whole numbers, lower <= upper, at most ``u_max`` long), the probabilities (one per
point, none negative, summing to 1), a unique id, the arrival-order assumption of
section 2.2 (an event seen earlier never lies wholly after a later one: every earlier
``lower`` is at most this event's ``upper``), the promise of a heartbeat (an event
starting before a heartbeat's instant, :meth:`Admission.heartbeat`), then the
attributes the query reads (kleene.runtime.ingest.Validator, the rules of point events).
Times are whole numbers only; the heartbeat is the clock of the shared
:class:`~kleene.runtime.stream_time.StreamTime`, which also counts the arrivals (the
events' positions) and keeps the rejected events.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Real
from typing import Any

from kleene.compiler.plan import Plan
from kleene.errors import EventError
from kleene.events import EventBatch, EventFields, is_missing, read_batch
from kleene.imprecise.model import IntervalEvent, IntervalFields, Probability, uniform
from kleene.runtime.ingest import Validator
from kleene.runtime.stream_time import StreamTime

_SUM_TOLERANCE = 1e-9


class BadEvent(Exception):
    """Why one event is rejected (caught by :class:`Admission`)."""


class Admission:
    """Admits the events of one stream, batch by batch, in arrival order."""

    def __init__(self, plan: Plan, fields: EventFields, interval: IntervalFields) -> None:
        self.plan = plan
        self.fields = fields
        self.interval = interval
        self.validator = Validator(plan, {})
        self.types = frozenset(s.event_type for s in plan.states)
        self.now_lower: int | None = None  # the largest lower bound admitted so far
        self.now_upper: int | None = None
        self.seen_ids: set[Any] = set()
        # numbers only; the clock is the latest heartbeat: no event starts before it
        self.time = StreamTime("number")

    def admit(self, events: Any) -> list[IntervalEvent]:
        """The admitted events of the query's types, in arrival order; the others that
        fail a check go to ``self.rejected``."""
        time = self.time
        batch = read_batch(events, self.fields, time.arrived)
        admitted = []
        for j in range(len(batch)):
            position = time.arrived + j
            try:
                event = self._event(batch, j, position)
            except BadEvent as bad:
                rid = batch.ids[j] if j not in batch.problems else position
                time.reject(rid, position, str(bad), batch.record(j))
                continue
            if event is not None:
                admitted.append(event)
        time.arrived += len(batch)
        return admitted

    def heartbeat(self, t: Any) -> None:
        """Punctuation (VLDB 2010, Appendix C.3, case 2): no event with a lower bound
        before ``t`` will come; a later one that does is rejected. ``t`` is an instant
        as events give their bounds: a whole number (an int, or a float or numpy number
        without a fraction); EventError otherwise."""
        try:
            instant = _instant(t, "the time")
        except BadEvent:
            raise EventError(
                f"advance_to (a heartbeat) takes a whole number instant, as the events' "
                f"bounds are (time is discrete over interval events), not {t!r}"
            ) from None
        self.time.advance(instant)

    def bound(self) -> int | None:
        """``now.lower`` as the frameworks take it (they derive t_emit = now.lower -
        U_max, the earliest start of an unseen event): the largest lower bound admitted,
        raised to τ + U_max by a heartbeat τ when U_max is declared, so that t_emit is
        at least τ."""
        floor = self.time.clock
        if floor is None or self.interval.u_max is None:
            return self.now_lower
        raised = floor + self.interval.u_max
        return raised if self.now_lower is None else max(self.now_lower, raised)

    def _event(self, batch: EventBatch, j: int, position: int) -> IntervalEvent | None:
        if j in batch.problems:
            raise BadEvent(batch.problems[j] or "not an event")
        etype = batch.types[j]
        lower, upper = self._interval(batch, j)
        pmf = self._pmf(batch, j, upper - lower + 1)
        eid = batch.ids[j]
        try:
            duplicate = eid in self.seen_ids
        except TypeError:
            raise BadEvent(f"event id {eid!r} is not a number or a string") from None
        if duplicate:
            raise BadEvent(f"duplicate event id {eid!r}: every event needs its own id")
        if self.now_lower is not None and upper < self.now_lower:
            raise BadEvent(
                f"out of order: its interval [{lower}, {upper}] ends before the lower bound "
                f"{self.now_lower} of an earlier event (VLDB 2010, section 2.2: an earlier "
                "event's lower bound is at most a later event's upper bound)"
            )
        floor = self.time.clock
        if floor is not None and lower < floor:
            raise BadEvent(
                f"its interval [{lower}, {upper}] starts before the heartbeat {floor}, "
                "which promised that no later event would"
            )
        relevant = etype in self.types
        if relevant:
            problem = self.validator.problem(etype, batch, j)
            if problem is not None:
                raise BadEvent(problem)
        self.seen_ids.add(eid)
        self.now_lower = lower if self.now_lower is None else max(self.now_lower, lower)
        self.now_upper = upper if self.now_upper is None else max(self.now_upper, upper)
        if not relevant:
            return None
        attrs = tuple(batch.column(a)[j] for a in self.plan.attributes)
        return IntervalEvent((etype, None, eid, *attrs), lower, upper, pmf, position)

    def _interval(self, batch: EventBatch, j: int) -> tuple[int, int]:
        spec = self.interval
        margins = spec.margins
        if margins is None:
            lower = _instant(batch.column(spec.lower_field)[j], spec.lower_field)
            upper = _instant(batch.column(spec.upper_field)[j], spec.upper_field)
        else:
            t = _instant(batch.column(self.fields.time_field)[j], self.fields.time_field)
            lower, upper = t - margins[0], t + margins[1]
        if lower > upper:
            raise BadEvent(f"lower bound {lower} is after upper bound {upper}")
        if spec.u_max is not None and upper - lower > spec.u_max:
            raise BadEvent(
                f"interval [{lower}, {upper}] is longer than u_max = {spec.u_max} "
                f"(upper - lower = {upper - lower})"
            )
        return lower, upper

    def _pmf(self, batch: EventBatch, j: int, n: int) -> tuple[Probability, ...]:
        name = self.interval.pmf_field
        raw = batch.column(name)[j]
        if _absent(raw):
            return uniform(n, self.interval.exact)
        if isinstance(raw, str | bytes) or not hasattr(raw, "__iter__"):
            raise BadEvent(f"{name!r} must be a list of probabilities, not {raw!r}")
        values = list(raw)
        if len(values) != n:
            raise BadEvent(f"{name!r} has {len(values)} probabilities for {n} points")
        for p in values:
            if isinstance(p, bool) or not isinstance(p, Real) or not math.isfinite(p):
                raise BadEvent(f"{name!r} holds {p!r}, which is not a probability")
            if p < 0:
                raise BadEvent(f"{name!r} holds the negative probability {p!r}")
        total = sum(values)
        exact = all(isinstance(p, int | Fraction) for p in values)
        if (total != 1) if exact else abs(total - 1) > _SUM_TOLERANCE:
            raise BadEvent(f"the probabilities in {name!r} sum to {total}, not 1")
        return tuple(values)


def _instant(value: Any, name: str) -> int:
    """A time instant: a whole number (the time domain is discrete, section 2.2)."""
    if is_missing(value):
        raise BadEvent(f"missing {name!r}")
    if isinstance(value, bool) or not isinstance(value, Real):
        raise BadEvent(f"{name!r} is {value!r}, not a whole number (time is discrete)")
    if isinstance(value, float) and not value.is_integer():
        raise BadEvent(f"{name!r} is {value!r}, not a whole number (time is discrete)")
    return int(value)  # type: ignore[call-overload]


def _absent(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def measured_u_max(events: list[IntervalEvent]) -> int:
    """U_max measured over a whole input: the largest ``upper - lower``."""
    return max((e.upper - e.lower for e in events), default=0)
