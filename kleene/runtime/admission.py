"""Admission: which input events reach the core, at which stream positions.

Every event is validated (:class:`~kleene.runtime.ingest.Validator`), must have a time
of the stream's kind and must not be late (:mod:`kleene.runtime.clock`); an event that
fails is rejected with a reason, never dropped silently. A batch that needs no check
per event (one time kind, in order, not late, every event typed and valid) is admitted
whole: the core may evaluate its columns, or read its events decoded once, with the
prefilter's verdict (match-windows paper, section 4.2). Other batches are admitted
event by event, through the reorder buffer when lateness is allowed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from kleene.compiler.plan import Plan
from kleene.events import EVENT_TIME, EventBatch
from kleene.runtime.clock import StreamClock
from kleene.runtime.config import MatcherConfig
from kleene.runtime.core import Admitted, AdmittedEvent
from kleene.runtime.ingest import Validator
from kleene.runtime.matchwindows import WindowFront
from kleene.runtime.prefilter import Prefilter
from kleene.runtime.routing import Router
from kleene.runtime.state import MatcherState


class Admission:
    """Admits the events of one matcher's stream."""

    def __init__(
        self,
        plan: Plan,
        config: MatcherConfig,
        st: MatcherState,
        clock: StreamClock,
        every_event: bool,
    ) -> None:
        self.st = st
        self.time = st.time
        self.clock = clock
        self.attributes = plan.attributes
        self.type_field = config.fields.type_field
        self.lateness = bool(config.allowed_lateness)
        self.validator = Validator(plan, st.learned_kinds)
        self.prefilter = Prefilter(plan)
        self.front = WindowFront(plan) if plan.match_windows else None
        # the backtrack core's postponed runs may still complete matches before an
        # event that no state accepts, so every event has to reach such a core
        self.every_event = every_event
        router = Router(plan)
        self.types = router.types
        self.skips = router.skips

    def admit(self, batch: EventBatch) -> Admitted:
        """The batch's events for the core (rejecting those that fail)."""
        clean = self.validator.clean_types(batch)
        if not batch.problems and self._whole(batch, clean):
            self.time.learn(batch.time_kind, batch.tz)
            base = self.time.position
            return Admitted(self._rows(batch, clean, base), batch, base)
        return Admitted(self._each(batch, clean))

    def _whole(self, batch: EventBatch, clean: set[str]) -> bool:
        """Whether the batch needs no per-event admission: one time kind, in order and
        not late, every event typed and valid."""
        if self.lateness:
            return False
        if batch.time_kind is None or self.time.time_kind not in (None, batch.time_kind):
            return False
        present = batch.present_types()
        if None in present or not (present & self.types) <= clean:
            return False
        times = batch.times_array()
        horizon = self.clock.horizon()
        return bool(np.all(times[1:] >= times[:-1])) and (horizon is None or times[0] >= horizon)

    def _rows(self, batch: EventBatch, clean: set[str], base: int) -> Iterator[AdmittedEvent]:
        """The events of a whole batch that the automaton must see, decoded once: under
        the skip-till strategies those some state may accept, otherwise every event,
        flagged with whether some state may accept it."""
        if self.every_event:
            mask = np.ones(len(batch), dtype=bool)
        elif self.prefilter.useful:
            window = self.clock.window()
            accepts = self.prefilter.accepts(batch, clean) if self.front is not None else None
            mask = self.prefilter.relevant(batch, clean, window, accepts)
            if self.front is not None and accepts is not None and window is not None:
                fresh = self.time.position == 0  # the plan's match windows
                mask &= self.front.keep(self.prefilter, batch, accepts, window, fresh)
        else:
            mask = batch.type_mask(self.types)
        if self.skips:
            rows = np.flatnonzero(mask)
            useful = None
        else:
            rows, useful = np.arange(len(batch)), mask.tolist()
        types = batch.take(self.type_field, rows)
        times = batch.times_at(rows)
        ids = batch.ids_at(rows)
        columns = [batch.take(a, rows) for a in self.attributes]
        for k, j in enumerate(rows.tolist()):
            e = (types[k], times[k], ids[k], *(col[k] for col in columns))
            yield base + j, e, True if useful is None else useful[j]

    def admitted_whole(self, batch: EventBatch) -> None:
        """A whole batch was evaluated: its events took their stream positions."""
        time = self.time
        time.arrived += len(batch)
        time.position += len(batch)
        time.clock = batch.last_time()

    def _each(self, batch: EventBatch, clean: set[str]) -> Iterator[AdmittedEvent]:
        """Admit the batch event by event: validation, order and lateness."""
        st, time, clock = self.st, self.time, self.clock
        columns = [batch.column(a) for a in self.attributes]
        if self.prefilter.useful and not self.every_event:
            relevant = self.prefilter.relevant(batch, clean).tolist()
        else:
            relevant = [True] * len(batch)
        types, times, kinds, ids = batch.types, batch.times, batch.time_kinds, batch.ids
        for j in range(len(batch)):
            arrival = time.arrived
            time.arrived += 1
            reason = batch.problems.get(j) or time.problem(kinds[j])
            etype = types[j]
            if reason is None and etype in self.types and etype not in clean:
                reason = self.validator.problem(etype, batch, j)
            elif reason is None and etype is None:
                reason = "missing event type"
            if reason is not None:
                time.reject(ids[j], None, reason, batch.record(j))
                continue
            time.learn(kinds[j], batch.tz)
            t = times[j]
            horizon = clock.horizon()
            if horizon is not None and t < horizon:
                time.reject(ids[j], None, clock.late_reason(t, horizon), batch.record(j))
                continue
            e = (etype, t, ids[j], *(col[j] for col in columns))
            if self.lateness:
                st.reorder.push(t, arrival, (e, relevant[j]))
                yield from self.release(st.reorder.max_seen - clock.lateness())
            else:
                yield self._released(e, relevant[j])

    def release(self, upto: Any) -> Iterator[AdmittedEvent]:
        """The held events up to a time (all when None), in time order."""
        for e, useful in self.st.reorder.release(upto):
            yield self._released(e, useful)

    def _released(self, e: tuple[Any, ...], useful: bool) -> AdmittedEvent:
        """An event enters the stream: the next position, and time moves on."""
        time = self.time
        position = time.position
        time.position += 1
        time.clock = e[EVENT_TIME]
        return position, e, useful
