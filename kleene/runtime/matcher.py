"""The push-based matcher: a facade that wires admission, a core, negation and output.

``push`` feeds events (any supported batch form) and returns the matches that became
final; ``advance_to`` tells the matcher that no event before a time will come (a
watermark); ``flush`` ends the stream. Each job has its own module: admission
(:mod:`.admission`: validation, order, lateness, rejected events), time (the
stream's kind, clock and counters in :mod:`.stream_time`, shared by every kind; the
window and lateness in :mod:`.clock`), the evaluation core (:mod:`.core`, chosen by :mod:`.choice`),
negation checks and the output format (:mod:`.decide`), results (:mod:`.formatting`)
and the match limit and ``on_matches`` chunks (:mod:`.output`). All mutable state lives
in one :class:`~kleene.runtime.state.MatcherState`, which ``snapshot`` saves as
versioned plain data (:mod:`kleene.runtime.snapshot`) and a new matcher of the same
query resumes from.

Memory stays bounded by the window (SIGMOD 2008, section 5.3): expired runs are swept,
the shared buffer is pruned below the oldest live run, and negation candidates older
than the window are dropped. Two limits bound what no window bounds
(:mod:`kleene.runtime.limits`): ``max_runs`` the live state (:class:`RunLimitError`),
``max_matches`` the matches reported (:class:`MatchLimitError`). With an ``on_matches``
callback the matches are handed out in chunks as they are found instead of returned,
so a consumer that writes them needs memory for one chunk only.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import Any

from kleene.collapsed import Result
from kleene.compiler.plan import Plan
from kleene.events import EVENT_TYPE, read_batch
from kleene.match import RejectedEvent
from kleene.runtime import snapshot
from kleene.runtime.admission import Admission
from kleene.runtime.choice import make_core
from kleene.runtime.clock import StreamClock
from kleene.runtime.config import MatcherConfig
from kleene.runtime.contract import StreamMatcher
from kleene.runtime.core import Admitted, Context
from kleene.runtime.decide import Decisions
from kleene.runtime.formatting import Formatter
from kleene.runtime.output import Output, Reporter
from kleene.runtime.state import MatcherState

SWEEP_EVERY = 4096
NEVER = float("inf")


class Matcher(StreamMatcher[Result]):
    """Evaluates one compiled query over a stream pushed to it in time order."""

    def __init__(
        self,
        plan: Plan,
        config: MatcherConfig,
        state: bytes | None = None,
        on_matches: Callable[[list[Result]], object] | None = None,
    ) -> None:
        self.plan = plan
        self.config = config
        # with a callback, matches go to it in chunks as they are found
        self.reporter: Reporter[Result] = Reporter(config.max_matches, on_matches)
        self.engine = make_core(plan, config)
        self.wire(MatcherState(self.engine))
        if state is not None:
            self.restore(snapshot.unseal(state, snapshot.QUERY, self.fingerprint))

    def wire(self, st: MatcherState) -> None:
        """Connect the jobs to one state (a new one on restore)."""
        plan, config = self.plan, self.config
        self.st = st
        self.clock = StreamClock(plan, config, st)
        self.admission = Admission(plan, config, st, self.clock, self.engine.every_event)
        formatter = Formatter(plan, config.max_matches, st.time)
        self.decisions = Decisions(plan, config.max_runs, st, self.engine, self.clock, formatter)

    @cached_property
    def fingerprint(self) -> bytes:
        """What this matcher's state means (see :func:`kleene.runtime.snapshot.fingerprint`)."""
        return snapshot.fingerprint(self.plan, self.config)

    # --- public API ---------------------------------------------------------------

    def push(self, events: Any) -> list[Result]:
        """Feed events in time order; return the matches that became final (none when
        an ``on_matches`` callback takes them)."""
        batch = read_batch(events, self.config.fields, self.st.time.arrived)
        out = self.reporter.call()
        if len(batch):
            admitted = self.admission.admit(batch)
            evaluated = self.drive(admitted, out)
            if admitted.batch is not None:
                self.admission.admitted_whole(batch)
                self.st.since_sweep += len(batch) - evaluated
            self.settle(out)
        return out.finish()

    def advance_to(self, time: Any) -> list[Result]:
        """No event before ``time`` will come: release, decide and prune up to it."""
        out = self.reporter.call()
        internal = self.st.time.time_in(time)
        self.drive(Admitted(self.admission.release(internal)), out)
        self.st.time.advance(internal)
        self.decisions.decide_pending(internal, out)
        self.sweep(internal)
        return out.finish()

    def flush(self) -> list[Result]:
        """End of stream: every held event is processed and every match decided."""
        out = self.reporter.call()
        self.drive(Admitted(self.admission.release(None)), out)
        held = self.engine.flush(self.st.core, self.clock.window())
        self.decisions.complete(held, self.st.time.clock, out)
        self.decisions.decide_pending(NEVER, out, everything=True)
        return out.finish()

    def take_rejected(self) -> list[RejectedEvent]:
        """The rejected events since the last call."""
        return self.st.time.take_rejected()

    @property
    def rejected_count(self) -> int:
        return self.st.time.rejected_count

    @property
    def reported(self) -> int:
        """Matches reported since this matcher was created."""
        return self.reporter.reported

    @property
    def live_runs(self) -> int:
        return self.engine.live_runs(self.st.core)

    def window(self) -> float | None:
        """The WITHIN size in the stream's time units."""
        return self.clock.window()

    def time_out(self, value: Any) -> Any:
        """A stream time as the user sees it."""
        return self.st.time.time_out(value)

    def snapshot(self) -> bytes:
        """The matcher's whole state in the snapshot format (docs/architecture.md);
        ``Query.matcher(state=...)`` of the same query resumes from it."""
        return snapshot.seal(snapshot.QUERY, self.fingerprint, self.st.to_data())

    def restore(self, data: Any) -> None:
        """Take over the state of :meth:`MatcherState.to_data` (SnapshotError when it
        does not fit this matcher's plan)."""
        with snapshot.loading():
            st = MatcherState.from_data(data, self.plan, self.engine)
        self.wire(st)

    # --- driving the core -------------------------------------------------------------

    def drive(self, admitted: Admitted, out: Output[Result]) -> int:
        """Evaluate admitted events with the core, and take each event's results through
        the negation checks to the output; return how many events the core evaluated."""
        st, decisions = self.st, self.decisions
        room = self.reporter.room()
        ctx = Context(self.clock.window, st.time.time_out, room, st.non_overlap.last_end)
        complete, negated = decisions.complete, decisions.by_type
        evaluated = 0
        for t, position, e, partition, results in self.engine.evaluate(st.core, admitted, ctx):
            evaluated += 1
            if st.pending and st.pending[0].deadline < t:
                decisions.decide_pending(t, out)
            if e is None:  # a whole batch evaluated natively: finished matches
                out.extend(results)
                continue
            if results:  # completions (a list, or an iterator where there may be many)
                complete(results, t, out)
            if negated and e[EVENT_TYPE] in negated:
                decisions.observe(e, partition, position)
            st.since_sweep += 1
            if st.since_sweep >= SWEEP_EVERY:
                self.sweep(t)
        return evaluated

    def settle(self, out: Output[Result]) -> None:
        """After a batch: decide what its last time settles, sweep when due."""
        st, clock = self.st, self.st.time.clock
        if clock is not None and st.pending and st.pending[0].deadline < clock:
            self.decisions.decide_pending(clock, out)
        if st.since_sweep >= SWEEP_EVERY and clock is not None:
            self.sweep(clock)

    def sweep(self, now: Any) -> None:
        """Drop expired runs and everything only they could reach (section 5.3)."""
        st = self.st
        st.since_sweep = 0
        window = self.clock.window()
        self.engine.sweep(st.core, now, window)
        if window is not None:
            st.negation.prune(now - window)
