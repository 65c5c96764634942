"""From completions to results: negation checks and the output format.

A completion of the positive pattern is checked against every negation between its
components at once (SIGMOD 2008, section 3.1: negation as a nested query over the
candidate events, :mod:`kleene.runtime.negation`). A trailing negation can only be
decided once the window after the match has passed, so such a match waits, in deadline
order, until an event or a watermark beyond its deadline arrives. Under the non-overlap
format the accepted matches go through :class:`~kleene.runtime.output.NonOverlapState`
before they are reported.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable
from typing import Any, Protocol

from kleene.collapsed import Result
from kleene.compiler.plan import NegatedEvent, Plan
from kleene.events import EVENT_TYPE
from kleene.runtime.clock import StreamClock
from kleene.runtime.core import Core
from kleene.runtime.formatting import Formatter
from kleene.runtime.found import Found, FoundMaker, Pending
from kleene.runtime.limits import run_limit
from kleene.runtime.negation import NegationState, violated
from kleene.runtime.output import NonOverlapState
from kleene.vocabulary import OutputFormat

NEVER = float("inf")


class DecisionState(Protocol):
    """The parts of the matcher's state that deciding reads and writes."""

    core: Any
    negation: NegationState
    non_overlap: NonOverlapState
    pending: list[Pending]
    seq: int


class Decisions:
    """Negation checks, held matches and the output format of one matcher."""

    def __init__(
        self,
        plan: Plan,
        max_runs: int,
        st: DecisionState,
        core: Core,
        clock: StreamClock,
        formatter: Formatter,
    ) -> None:
        self.st = st
        self.core = core
        self.clock = clock
        self.formatter = formatter
        self.max_runs = max_runs
        self.found = FoundMaker(plan)
        self.trailing = [n for n in plan.negations if n.after is None]
        self.inner = [n for n in plan.negations if n.after is not None]
        self.by_type: dict[str, list[NegatedEvent]] = {}
        for n in plan.negations:
            for member in n.members:
                self.by_type.setdefault(member.event_type, []).append(member)
        self.non_overlap = plan.output is OutputFormat.NON_OVERLAP
        self.collapsed = plan.output is OutputFormat.COLLAPSED
        self.direct = not (self.inner or self.trailing or self.non_overlap)

    def observe(self, e: tuple[Any, ...], partition: Any, position: int) -> None:
        """Keep an event of a negated type as a candidate of the negations."""
        for member in self.by_type.get(e[EVENT_TYPE], ()):
            self.st.negation.add(member, partition or (), position, e)

    def complete(self, results: Iterable[Any], t: Any, out: list[Result]) -> None:
        """The completions of an event at time ``t`` (intermediate matches under the
        collapsed format): check them, hold or report them."""
        if self.collapsed:
            collapse = self.formatter.collapse
            out.extend(collapse(c.partition, c.items, t) for c in results)
            return
        if self.direct:
            out.extend(map(self.formatter.match, results))  # nothing to decide first
            return
        st = self.st
        window = self.clock.window()
        touched: set[tuple[Any, ...]] = set()
        for c in results:
            found = self.found(c)
            start = found.first_time
            if any(
                violated(n, st.negation, c.partition, found.bounds, c.vector, window, start, t)
                for n in self.inner
            ):
                continue
            decided = not self.trailing
            if not decided:
                self._hold(found, NEVER if window is None else start + window)
            if self.non_overlap:
                st.non_overlap.offer(c.partition, found.order, found, decided)
                touched.add(c.partition)
            elif decided:
                out.append(self.formatter.match(found))
        for partition in touched:
            released = st.non_overlap.release(partition)
            out.extend(map(self.formatter.match, released))
            if released and not self.trailing:
                # every remaining run of this partition started at or before the released
                # match's end, so none can produce a non-overlapping match any more
                self.core.drop_partition(st.core, partition)

    def _hold(self, found: Found, deadline: Any) -> None:
        st = self.st
        st.seq += 1
        insort(st.pending, Pending(deadline, st.seq, found), key=lambda p: (p.deadline, p.seq))
        if len(st.pending) > self.max_runs:
            raise run_limit(self.max_runs, "matches waiting for a trailing negation")

    def due(self, time: Any) -> bool:
        """Whether a held match's deadline has passed at ``time``."""
        pending = self.st.pending
        return bool(pending) and pending[0].deadline < time

    def decide_pending(self, time: Any, out: list[Result], everything: bool = False) -> None:
        """Decide the held matches whose deadline is before ``time`` (all of them at
        the end of the stream)."""
        st = self.st
        window = self.clock.window()
        while st.pending and (everything or st.pending[0].deadline < time):
            found = st.pending.pop(0).found
            accepted = not any(
                violated(
                    n,
                    st.negation,
                    found.partition,
                    found.bounds,
                    found.vector,
                    window,
                    found.first_time,
                    found.last_time,
                )
                for n in self.trailing
            )
            if self.non_overlap:
                released = st.non_overlap.decide(found.partition, found, accepted)
                out.extend(map(self.formatter.match, released))
            elif accepted:
                out.append(self.formatter.match(found))
