"""A push-based matcher over interval events: ``IntervalQuery.matcher()``, on the one
matcher contract of every kind (:class:`kleene.runtime.contract.StreamMatcher`).

Events are admitted batch by batch (:mod:`kleene.imprecise.admission`) and handed to the
chosen framework (:mod:`kleene.imprecise.choice`), which returns each result once it is
final (t_emit has passed its upper bound plus the window, VLDB 2010, section 3.3). With
U_max declared the framework runs as events come; without it U_max is measured over the
whole input, so the admitted events are held until :meth:`IntervalMatcher.flush`.
:meth:`IntervalMatcher.advance_to` is the punctuation of Appendix C.3 (a heartbeat).

Limits (:mod:`kleene.runtime.limits`): the frameworks give their results lazily and a
:class:`~kleene.runtime.output.Reporter` counts them against ``max_matches`` as they
come, so the evaluation stops at the limit (:class:`~kleene.errors.MatchLimitError`,
after the results before it are handed out); ``max_runs`` bounds each framework's
partial state (:mod:`kleene.imprecise.budget`, :class:`~kleene.errors.RunLimitError`).
Results come in the order they become final; a whole run
(:meth:`kleene.imprecise.query.IntervalQuery.run`) sorts them by their last event's
arrival. A matcher that raised a limit error stopped inside a call: resume from a
snapshot taken before it rather than pushing on.

:meth:`IntervalMatcher.snapshot` saves the whole state as versioned plain data
(:mod:`kleene.imprecise.state`); ``IntervalQuery.matcher(state=...)`` resumes from it.
"""

from __future__ import annotations

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
from kleene.imprecise.result import ImpreciseMatch
from kleene.match import RejectedEvent
from kleene.runtime import snapshot
from kleene.runtime.contract import OnMatches, StreamMatcher
from kleene.runtime.limits import DEFAULT_MAX_MATCHES, DEFAULT_MAX_RUNS
from kleene.runtime.output import Reporter


class IntervalMatcher(StreamMatcher[ImpreciseMatch]):
    """Evaluates one interval query over a stream pushed to it in arrival order."""

    def __init__(
        self,
        plan: Plan,
        fields: EventFields,
        interval: IntervalFields,
        engine: str,
        window: float | None,
        keep: Threshold,
        *,
        fingerprint: bytes = b"",
        state: bytes | None = None,
        on_matches: OnMatches | None = None,
        method: str = "auto",
        max_matches: int | None = DEFAULT_MAX_MATCHES,
        max_runs: int | None = DEFAULT_MAX_RUNS,
    ) -> None:
        self.plan = plan
        self.interval = interval
        self.fingerprint = fingerprint
        self.engine = engine
        self.method = method
        self.window = window
        self.keep = keep
        self.max_runs = max_runs
        self.reporter: Reporter[ImpreciseMatch] = Reporter(max_matches, on_matches)
        self.admission = Admission(plan, fields, interval)
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
        self.evaluator = framework(self.plan, chosen, self.window, u_max, self.keep, self.max_runs)
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
        out = self.reporter.call()
        admitted = self.admission.admit(events)
        if self.evaluator is None:
            self.held.extend(admitted)
        else:
            out.extend(self.evaluator.results(admitted, self.admission.bound()))
        return out.finish()

    def advance_to(self, time: Any) -> list[ImpreciseMatch]:
        """Punctuation (VLDB 2010, Appendix C.3): no event with a lower bound before
        ``time`` will come (later ones that do are rejected). ``time`` is an instant as
        the events' bounds give them: a whole number (EventError otherwise). With U_max
        declared, sorted buffers release, runs are pruned and results become final up
        to ``time`` instead of now.lower - U_max; returns the results that became
        final."""
        out = self.reporter.call()
        self.admission.heartbeat(time)
        if self.evaluator is not None:
            out.extend(self.evaluator.results([], self.admission.bound()))
        return out.finish()

    def heartbeat(self, t: Any) -> list[ImpreciseMatch]:
        """:meth:`advance_to` by the name of VLDB 2010, Appendix C.3."""
        return self.advance_to(t)

    def flush(self) -> list[ImpreciseMatch]:
        """The end of the stream: every result still pending."""
        out = self.reporter.call()
        if self.evaluator is None:
            self.start(measured_u_max(self.held))
            assert self.evaluator is not None
            held, self.held = self.held, []
            out.extend(self.evaluator.results(held, self.admission.now_lower))
        out.extend(self.evaluator.final_results())
        return out.finish()

    def take_rejected(self) -> list[RejectedEvent]:
        """The rejected events since the last call, each with its reason."""
        return self.admission.time.take_rejected()

    @property
    def rejected_count(self) -> int:
        """Events rejected since the stream began (kept across snapshots)."""
        return self.admission.time.rejected_count

    @property
    def reported(self) -> int:
        """Results reported since this matcher was created or resumed."""
        return self.reporter.reported
