"""Pattern matching over point events (VLDB 2010, section 3, step 2).

Runs follow the compiled SASE+ plan: the begin edge of each state (a generated
function over the event tuple and the state vector, kleene.compiler.codegen) decides
whether a point event extends a run, so predicates are evaluated exactly as for point
events. Whatever the query's strategy, matching runs skip till any match on the points
(every point match of every possible world is a path of runs), with two changes to
``next()``:

* the same-id check: a run never selects a second point of an event it holds;
* times strictly increase (Table 1, t1 < ... < tl): the points of one instant are
  matched against the runs that existed before that instant only.

Under skip till next match a run also stops at its *Next Event's Latest Time* (NELT):
among the events that can match the next component (its edge holds on the run's state
vector) and start after the run's last event ends, the one ending earliest sets the
NELT; no point after it can be next in any world (the dichotomy of Appendix B.2).
Appendix B.3 keeps a tentative NELT that later events may lower, pruning runs and
delaying output when they do. Here the check is made when the candidate point t is
emitted, and the NELT is final by then: an event that sets a NELT below t has
``upper < t``, so ``lower < t < t_emit``, and every event with ``lower < t_emit`` has
arrived (section 3, step 1). So nothing is pruned after the fact and no match waits
for a NELT update.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kleene.compiler.plan import Plan
from kleene.imprecise.model import IntervalEvent


class Steps:
    """The plan's begin edges together with its run routing: a plan whose runs are
    indexed by a key (equalities between variables, kleene.compiler.analysis.choose_key)
    checks those equalities by routing, not in the edges, so an event extends a run only
    when its key values equal those of the run's first event."""

    def __init__(self, plan: Plan) -> None:
        self.states = plan.states
        self.initial = plan.initial_vector
        self.routed = plan.routed
        self.key_index = plan.key_index
        self.common = plan.common_key_index or None

    def key(self, point: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """The event's key (() without routing); None when it can join no run."""
        if not self.routed:
            return ()
        index = self.key_index.get(point[0], self.common)
        return None if index is None else tuple([point[i] for i in index])

    def take(
        self, j: int, point: tuple[Any, ...], key: tuple[Any, ...], vector: tuple[Any, ...]
    ) -> tuple[Any, ...] | None:
        """The state vector after state j selects ``point`` in a run of ``key``, or None
        when it cannot."""
        if self.routed and self.key(point) != key:
            return None
        return self.states[j].edge(point, vector)


class Run(NamedTuple):
    """A partial point match: the index of the next state, the state vector, the
    selected events, the instant of each and the run's key (Steps.key)."""

    next: int
    vector: tuple[Any, ...]
    events: tuple[IntervalEvent, ...]
    times: tuple[int, ...]
    key: tuple[Any, ...]


class PointMatch(NamedTuple):
    events: tuple[IntervalEvent, ...]
    times: tuple[int, ...]
    vector: tuple[Any, ...]
    key: tuple[Any, ...]


class PointMatching:
    """Skip till any match over point events, with the same-id check and, under skip
    till next match, the NELT."""

    def __init__(self, steps: Steps, window: float | None, use_nelt: bool) -> None:
        self.steps = steps
        self.window = window
        self.use_nelt = use_nelt
        self.runs: list[Run] = []
        self.seen: dict[Any, list[IntervalEvent]] = {}  # arrived events by type

    def arrive(self, event: IntervalEvent) -> None:
        self.seen.setdefault(event.type, []).append(event)

    def step(self, t: int, points: list[IntervalEvent]) -> list[PointMatch]:
        """Match the point events at instant ``t``; return the point matches completed."""
        window = self.window
        if window is not None:
            self.runs = [r for r in self.runs if t - r.times[0] <= window]
        done: list[PointMatch] = []
        grown: list[Run] = []
        steps = self.steps
        last = len(steps.states)
        for run in self.runs:
            if self.use_nelt and self._beyond_nelt(run, t):
                continue
            held = {id(e) for e in run.events}
            for e in points:
                if id(e) in held:
                    continue  # the same-id check
                vector = steps.take(run.next, e.at(t), run.key, run.vector)
                if vector is not None:
                    _extend(run, e, t, vector, last, grown, done)
        for e in points:
            point = e.at(t)
            key = steps.key(point)
            if key is None:
                continue
            vector = steps.take(0, point, key, steps.initial)
            if vector is not None:
                _extend(Run(0, steps.initial, (), (), key), e, t, vector, last, grown, done)
        self.runs.extend(grown)
        return done

    def _beyond_nelt(self, run: Run, t: int) -> bool:
        """Whether instant ``t`` lies after the run's NELT (Appendix B.3)."""
        end = run.events[-1].upper
        j = run.next
        take = self.steps.take
        for x in self.seen.get(self.steps.states[j].event_type, ()):
            if (
                x.upper < t
                and x.lower > end
                and take(j, x.at(x.lower), run.key, run.vector) is not None
            ):
                return True
        return False

    def forget(self, before: int) -> None:
        """Drop the arrived events that end before ``before`` (no run or pending
        signature can need them any more)."""
        for etype, events in self.seen.items():
            if events and events[0].upper < before:
                self.seen[etype] = [e for e in events if e.upper >= before]

    def candidates(self, etype: Any) -> list[IntervalEvent]:
        """The arrived events of a type (for the confidence of skip till next match)."""
        return self.seen.get(etype, [])


def _extend(
    run: Run,
    e: IntervalEvent,
    t: int,
    vector: tuple[Any, ...],
    last: int,
    grown: list[Run],
    done: list[PointMatch],
) -> None:
    events = (*run.events, e)
    times = (*run.times, t)
    if run.next + 1 == last:
        done.append(PointMatch(events, times, vector, run.key))
    else:
        grown.append(Run(run.next + 1, vector, events, times, run.key))
