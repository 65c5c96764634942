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

import math
from typing import Any, NamedTuple

from kleene.compiler.plan import Plan
from kleene.imprecise.budget import UNLIMITED, RunBudget
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


Class = tuple[int, tuple[Any, ...], tuple[Any, ...]]  # (next state, key, state vector)


class PointMatch(NamedTuple):
    events: tuple[IntervalEvent, ...]
    times: tuple[int, ...]
    vector: tuple[Any, ...]
    key: tuple[Any, ...]


class PointMatching:
    """Skip till any match over point events, with the same-id check and, under skip
    till next match, the NELT."""

    def __init__(
        self, steps: Steps, window: float | None, use_nelt: bool, budget: RunBudget = UNLIMITED
    ) -> None:
        self.steps = steps
        self.window = window
        self.use_nelt = use_nelt
        self.budget = budget  # max_runs over the runs, with the point matches held
        self.runs: dict[Class, dict[int, list[Run]]] = {}  # by class, then last event
        self.seen: dict[Any, list[IntervalEvent]] = {}  # arrived events by type
        self.log: list[IntervalEvent] = []  # arrived events, for the NELTs
        self.log_base = 0  # the arrival number of log[0]
        # (id(last event), next state, key, vector) -> [NELT so far, arrivals read, last]
        self.nelts: dict[tuple[Any, ...], list[Any]] = {}

    def arrive(self, event: IntervalEvent) -> None:
        self.seen.setdefault(event.type, []).append(event)
        self.log.append(event)

    def step(self, t: int, points: list[IntervalEvent], held: int = 0) -> list[PointMatch]:
        """Match the point events at instant ``t``; return the point matches completed.
        Runs in the same state with the same key and vector form a class: an edge is
        evaluated once per class and point. ``held``: the point matches waiting to be
        collapsed, counted with the runs against ``max_runs`` after each point (a point
        at most doubles the runs)."""
        live, size = self._live(t)
        done: list[PointMatch] = []
        grown: list[Run] = []
        steps = self.steps
        last = len(steps.states)
        check = self.budget.check if self.budget.limit is not None else None
        for e in points:
            if check is not None:
                check(size + held + len(grown) + len(done))
            point = e.at(t)
            outcomes: dict[Class, tuple[Any, ...] | None] = {}
            for (j, key, vector), runs in live:
                cls = (j, key, vector)
                if cls in outcomes:
                    after = outcomes[cls]
                else:
                    after = outcomes[cls] = steps.take(j, point, key, vector)
                if after is not None:
                    for run in runs:
                        if e not in run.events:  # the same-id check
                            _extend(run, e, t, after, last, grown, done)
            own_key = steps.key(point)
            if own_key is not None:  # a new run begins with e
                begun = steps.take(0, point, own_key, steps.initial)
                if begun is not None:
                    start = Run(0, steps.initial, (), (), own_key)
                    _extend(start, e, t, begun, last, grown, done)
        if check is not None:
            check(size + held + len(grown) + len(done))
        for run in grown:
            by_last = self.runs.setdefault((run.next, run.key, run.vector), {})
            by_last.setdefault(id(run.events[-1]), []).append(run)
        return done

    def _live(self, t: int) -> tuple[list[tuple[Class, list[Run]]], int]:
        """The runs that may take a point at ``t``, by class and last event: those
        within the window (the others are dropped) and, under skip till next match, not
        past their NELT (shared by the runs of a class with the same last event); and
        how many runs are kept, live or not."""
        window = self.window
        live = []
        kept = 0
        for cls, by_last in list(self.runs.items()):
            for last_id, runs in list(by_last.items()):
                if window is not None:
                    runs = [r for r in runs if t - r.times[0] <= window]
                    if not runs:
                        del by_last[last_id]
                        continue
                    by_last[last_id] = runs
                kept += len(runs)
                if not self.use_nelt or t <= self._nelt(runs[0]):
                    live.append((cls, runs))
            if not by_last:
                del self.runs[cls]
        return live, kept

    def _nelt(self, run: Run) -> float:
        """The run's NELT over the events arrived so far (infinite while none sets it),
        kept per (last event, state, key, vector) and extended by the new arrivals only:
        the events that start after the last event ends and pass the next state's edge
        (Appendix B.3)."""
        last, j = run.events[-1], run.next
        entry = self.nelts.setdefault((id(last), j, run.key, run.vector), [math.inf, 0, last])
        start = max(entry[1], self.log_base)
        end = self.log_base + len(self.log)
        if start < end:
            etype = self.steps.states[j].event_type
            take = self.steps.take
            nelt = entry[0]
            for x in self.log[start - self.log_base :]:
                if (
                    x.type == etype
                    and x.lower > last.upper
                    and x.upper < nelt
                    and take(j, x.at(x.lower), run.key, run.vector) is not None
                ):
                    nelt = x.upper
            entry[0], entry[1] = nelt, end
        return float(entry[0])

    def forget(self, before: int) -> None:
        """Drop the arrived events that end before ``before`` (no run or pending
        signature can need them any more), and the NELTs of runs ending that early."""
        for etype, events in self.seen.items():
            if events and events[0].upper < before:
                self.seen[etype] = [e for e in events if e.upper >= before]
        drop = 0  # a prefix only: the NELTs count positions in the log
        while drop < len(self.log) and self.log[drop].upper < before:
            drop += 1
        if drop:
            self.log = self.log[drop:]
            self.log_base += drop
        self.nelts = {k: v for k, v in self.nelts.items() if v[2].upper >= before}

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
