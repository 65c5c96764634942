"""A push-based matcher over interval events: ``IntervalQuery.matcher()``.

Events are admitted batch by batch (:mod:`kleene.imprecise.admission`) and handed to the
chosen framework (:mod:`kleene.imprecise.choice`), which returns each result once it is
final (t_emit has passed its upper bound plus the window, VLDB 2010, section 3.3). With
U_max declared the framework runs as events come; without it U_max is measured over the
whole input, so the admitted events are held until :meth:`IntervalMatcher.flush`.

:meth:`IntervalMatcher.snapshot` saves the whole state as versioned plain data
(:mod:`kleene.imprecise.state`); ``IntervalQuery.matcher(state=...)`` resumes from it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kleene.compiler.plan import Plan
from kleene.events import EventFields
from kleene.imprecise import state as saved
from kleene.imprecise.admission import Admission, measured_u_max
from kleene.imprecise.choice import choose, framework
from kleene.imprecise.collapse import Threshold
from kleene.imprecise.events import EventFramework
from kleene.imprecise.framework import PointFramework
from kleene.imprecise.kleene_dp import KleeneFramework
from kleene.imprecise.model import IntervalEvent, IntervalFields
from kleene.imprecise.result import ImpreciseMatch, result_order
from kleene.match import RejectedEvent
from kleene.runtime import snapshot


class IntervalMatcher:
    """Evaluates one interval query over a stream pushed to it in arrival order."""

    def __init__(
        self,
        plan: Plan,
        fields: EventFields,
        interval: IntervalFields,
        engine: str,
        window: float | None,
        keep: Threshold,
        on_matches: Callable[[list[ImpreciseMatch]], object] | None = None,
        fingerprint: bytes = b"",
        state: bytes | None = None,
        method: str = "auto",
    ) -> None:
        self.plan = plan
        self.interval = interval
        self.fingerprint = fingerprint
        self.engine = engine
        self.method = method
        self.window = window
        self.keep = keep
        self.admission = Admission(plan, fields, interval)
        self.on_matches = on_matches
        self.held: list[IntervalEvent] = []  # U_max not declared: admitted, until flush
        self.evaluator: PointFramework | EventFramework | KleeneFramework | None = None
        self.chosen: str | None = None  # the framework's engine and method
        self.u_max: int | None = None  # the U_max it runs with
        if state is not None:
            data = snapshot.unseal(state, snapshot.INTERVAL, fingerprint)
            with snapshot.loading():
                saved.restore(self, data)
        elif interval.u_max is not None:
            self.start(interval.u_max)

    def start(self, u_max: int) -> None:
        """Build the framework once U_max is known (declared, or measured at flush)."""
        chosen = choose(self.plan, self.engine, u_max, self.method)
        self.evaluator = framework(self.plan, chosen, self.window, u_max, self.keep)
        self.chosen = f"{chosen.engine}/{chosen.method}"
        self.u_max = u_max

    def snapshot(self) -> bytes:
        """The matcher's whole state in kleene's snapshot format (versioned plain data,
        :mod:`kleene.imprecise.state`); ``IntervalQuery.matcher(state=...)`` of the same
        query and options resumes from it."""
        return snapshot.seal(snapshot.INTERVAL, self.fingerprint, saved.to_data(self))

    def push(self, events: Any) -> list[ImpreciseMatch]:
        """Feed events in arrival order; return the results that became final (none
        when an ``on_matches`` callback takes them)."""
        admitted = self.admission.admit(events)
        if self.evaluator is None:
            self.held.extend(admitted)
            return []
        return self._report(self.evaluator.push(admitted, self.admission.bound()))

    def heartbeat(self, t: int) -> list[ImpreciseMatch]:
        """Punctuation (VLDB 2010, Appendix C.3): no event with a lower bound before
        ``t`` will come (later ones that do are rejected). With U_max declared, sorted
        buffers release, runs are pruned and results become final up to ``t`` instead
        of now.lower - U_max; returns the results that became final."""
        self.admission.heartbeat(t)
        if self.evaluator is None:
            return []
        return self._report(self.evaluator.push([], self.admission.bound()))

    def flush(self) -> list[ImpreciseMatch]:
        """The end of the stream: every result still pending."""
        if self.evaluator is None:
            self.start(measured_u_max(self.held))
            assert self.evaluator is not None
            held, self.held = self.held, []
            found = self.evaluator.push(held, self.admission.now_lower)
            return self._report(found + self.evaluator.flush())
        return self._report(self.evaluator.flush())

    def take_rejected(self) -> list[RejectedEvent]:
        """The rejected events since the last call, each with its reason."""
        rejected, self.admission.rejected = self.admission.rejected, []
        return rejected

    def _report(self, found: list[ImpreciseMatch]) -> list[ImpreciseMatch]:
        found.sort(key=result_order)
        if self.on_matches is None:
            return found
        if found:
            self.on_matches(found)
        return []
