"""Postponed pattern matching under skip till any match (SIGMOD 2014, sections 5.1-5.2).

Under skip till any match the NFA^b clones a run at every event a Kleene array could
take, so the number of runs grows exponentially with the window (section 4). Postponing
keeps one *main run* per choice of single variables' events instead: at a Kleene state
it collects every event that passes the early filters (the conjuncts that hold or fail
alike for every subset of the array: the event's own properties and comparisons with
single variables) into a candidate list, and never clones for it. Value predicates
that depend on which elements are picked (``a[i-1]``, running aggregates, ``a.LEN``,
``a[a.LEN]``) are postponed: when a run completes, :func:`construct` enumerates the
subsequences of its candidates and applies the exact plan edges.

A :class:`Run` is the automaton state, the vector of single variables' values, the time
and position of its first event, its anchors and closed segments (a linked list, newest
first), the open candidate list while it collects a Kleene array (None while it waits
for the array's first element), and whether the array's first element is fixed to its
first candidate.
A run that moves on shares the open list with the run that stays, recording only how
many candidates it saw.

Every match is found exactly once: it is determined by its single variables' events
(which run) and one subsequence of each candidate list (which enumeration path).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from operator import attrgetter
from typing import Any, NamedTuple

from kleene.compiler.consistency import FALSE_VALUE
from kleene.compiler.plan import Plan, State
from kleene.events import EVENT_ID, EVENT_TIME, EVENT_TYPE
from kleene.runtime.core import Completion, EventCore, Intermediate, expire
from kleene.runtime.limits import run_limit
from kleene.runtime.postpone.construct import Anchor, Constructor, Segment
from kleene.runtime.snapshot import (
    Shapes,
    boolean,
    fail,
    fields_of,
    integer,
    mapping,
    number,
    partition_key,
    sequence,
)
from kleene.vocabulary import Strategy


class Candidates(list[tuple[int, tuple[Any, ...], bool]]):
    """The events collected for a Kleene array, each with its SAFE label, and the
    running max/min of the attributes the consistency tests compare against."""

    def __init__(self) -> None:
        super().__init__()
        self.extremes: dict[tuple[str, str], Any] = {}

    def add(self, position: int, e: tuple[Any, ...], safe: bool, keys: Any) -> None:
        self.append((position, e, safe))
        for (func, attr), index in keys:
            value = e[index]
            old = self.extremes.get((func, attr))
            if old is None or (value > old if func == "max" else value < old):
                self.extremes[(func, attr)] = value

    def aggregate(self, func: str, attr: str | None) -> Any:
        return len(self) if func == "count" else self.extremes.get((func, attr or ""))

    @classmethod
    def from_data(cls, data: Any, shapes: Shapes) -> Candidates:
        """A candidate list of :meth:`PostponeState.to_data`, checked."""
        entries, extremes = sequence(data, "a candidate list", tuple, 2)
        c = cls()
        for entry in sequence(entries, "a candidate list"):
            position, e, safe = sequence(entry, "a candidate", tuple, 3)
            integer(position, "a candidate's position", 0)
            shapes.event(e)
            boolean(safe, "a candidate's label")
            c.append(entry)
        for key in mapping(extremes, "a candidate list's extremes"):
            func, attr = sequence(key, "an extreme's key", tuple, 2)
            if func not in ("max", "min") or type(attr) is not str:
                fail("an extreme's key")
        c.extremes = extremes
        return c


class Run(NamedTuple):
    """A main run of postponed matching. Snapshots write it as a plain tuple, its items
    as a list and its candidate list as a reference into a table."""

    state: int
    anchors: tuple[Any, ...]  # the vector A of single variables' values
    start: Any  # the time of its first event
    start_position: int
    items: Any  # anchors and closed segments, a linked list (item, rest), newest first
    candidates: Candidates | None  # the open candidate list of a Kleene array
    fixed: bool  # the array's first element is its first candidate


Items = list[Anchor | Segment]


class PostponeState:
    def __init__(self) -> None:
        self.partitions: dict[tuple[Any, ...], list[Run]] = {}
        self.live_runs = 0
        self.candidates = 0  # events in the open candidate lists of the live runs
        self.constructed = 0  # matches enumerated in result construction
        self.construct_seconds = 0.0  # time spent in result construction
        self.peak_runs = 0

    # --- snapshots (kleene.runtime.snapshot) ------------------------------------------

    def to_data(self) -> Any:
        """Plain data. Candidate lists are shared between runs and grow in place, so
        they are written once, in a table, and referred to by index."""
        table: dict[int, int] = {}
        lists: list[Any] = []

        def ref(c: Candidates | None) -> int | None:
            if c is None:
                return None
            if id(c) not in table:
                table[id(c)] = len(lists)
                lists.append((list(c), c.extremes))
            return table[id(c)]

        def items(linked: Any) -> list[Any]:
            out = []
            while linked is not None:
                item, linked = linked
                if len(item) == 3:  # an anchor
                    out.append(item)
                else:
                    first, cands, seen, last, fixed = item
                    out.append((first, ref(cands), seen, last, fixed))
            return out

        def run(r: Run) -> Any:
            linked, cands = items(r.items), ref(r.candidates)
            return (r.state, r.anchors, r.start, r.start_position, linked, cands, r.fixed)

        partitions = {key: list(map(run, runs)) for key, runs in self.partitions.items()}
        return {
            "partitions": partitions,
            "candidates": lists,
            "counters": (self.live_runs, self.constructed, self.construct_seconds, self.peak_runs),
        }

    @classmethod
    def from_data(cls, data: Any, shapes: Shapes) -> PostponeState:
        parts, lists, counters = fields_of(data, "the runs", "partitions", "candidates", "counters")
        states = shapes.plan.states
        table = [Candidates.from_data(c, shapes) for c in sequence(lists, "candidate lists")]

        def candidates(x: Any) -> Candidates:
            return table[integer(x, "a candidate list", 0, len(table))]

        def item(x: Any) -> Any:
            if type(x) is tuple and len(x) == 3:
                state, position, e = x
                if states[shapes.state(state)].kind != "single":
                    fail("an anchor of a Kleene state")
                integer(position, "an anchor's position", 0)
                return (state, position, shapes.event(e))
            first, ref, seen, last, fixed = sequence(x, "a run item", tuple, 5)
            if states[shapes.state(first)].kind != "first":
                fail("a candidate segment of a state that is no Kleene array's first")
            c = candidates(ref)
            integer(seen, "a segment's length", 0, len(c) + 1)
            return (first, c, seen, boolean(last, "a flag"), boolean(fixed, "a flag"))

        def run(x: Any) -> Run:
            state, anchors, start, start_position, flat, ref, fixed = sequence(x, "a run", tuple, 7)
            kind = states[shapes.state(state)].kind
            if kind == "rest" or (ref is not None and kind != "first"):
                fail("a run in a state it cannot wait in")
            shapes.vector(anchors)
            number(start, "a run's start time")
            integer(start_position, "a run's start position", 0)
            linked: Any = None
            for i in reversed(sequence(flat, "a run's items")):
                linked = (item(i), linked)
            cands = None if ref is None else candidates(ref)
            boolean(fixed, "a flag")
            return Run(state, anchors, start, start_position, linked, cands, fixed)

        st = cls()
        st.partitions = {
            partition_key(k): [run(r) for r in sequence(runs, "a partition's runs")]
            for k, runs in mapping(parts, "the runs").items()
        }
        live, constructed, seconds, peak = sequence(counters, "the run counters", tuple, 4)
        st.live_runs = integer(live, "a run counter", 0)
        st.constructed = integer(constructed, "a run counter", 0)
        st.construct_seconds = float(number(seconds, "a run counter"))
        st.peak_runs = integer(peak, "a run counter", 0)
        if st.live_runs != sum(map(len, st.partitions.values())):
            fail("the live run count does not match the runs")
        st.candidates = st.count_candidates()
        return st

    def count_candidates(self) -> int:
        """Events in the open candidate lists of the live runs (bounded by max_runs)."""
        return sum(
            len(r.candidates)
            for runs in self.partitions.values()
            for r in runs
            if r.candidates is not None
        )


class PostponeCore(EventCore):
    """Finds the positive pattern's matches by postponed predicates (skip till any)."""

    def __init__(
        self, plan: Plan, max_runs: int, *, collapsed: bool = False, early: bool = True
    ) -> None:
        super().__init__(plan)
        assert plan.strategy is Strategy.SKIP_TILL_ANY_MATCH, "see runtime.choice"
        self.collapsed = collapsed  # report intermediate matches instead of enumerating
        # early filters on the fly (section 5.2), or every predicate postponed (5.1)
        self.filter = [s.relaxed if early else _type_check(s.event_type) for s in plan.states]
        self.early = early
        self.plan = plan
        self.states = plan.states
        self.max_runs = max_runs
        self.initial = plan.initial_vector
        self.construct = Constructor(plan.states, plan.initial_vector)
        # per Kleene first state: which running max/min the consistency tests read
        self.extremes = {
            s.index: [
                ((t.func, t.attr), plan.attr_index(t.attr))
                for t in plan.states[s.index + 1].consistency
                if t.func != "count" and t.attr is not None
            ]
            for s in plan.states
            if s.kind == "first"
        }

    def new_state(self) -> PostponeState:
        return PostponeState()

    def live_runs(self, st: PostponeState) -> int:
        return st.live_runs

    def process(
        self,
        st: PostponeState,
        e: tuple[Any, ...],
        position: int,
        partition: tuple[Any, ...],
        window: float | None,
    ) -> Iterator[Completion] | list[Intermediate]:
        t = e[EVENT_TIME]
        runs = st.partitions.get(partition, ())
        survivors: list[Run] = []
        done: list[Items] = []
        for run in runs:
            if window is None or t - run.start <= window:
                self._advance(st, run, e, position, survivors, done)
            elif run.candidates is not None:
                st.candidates -= len(run.candidates)
        first = self.states[0]
        started = self.filter[first.index](e, self.initial)
        if started is not None:
            fresh = Run(0, started, t, position, None, None, True)
            self._begin(st, first, fresh, started, e, position, None, True, survivors, done)
        st.live_runs += len(survivors) - len(runs)
        if st.live_runs > st.peak_runs:
            st.peak_runs = st.live_runs
        if survivors:
            st.partitions[partition] = survivors
        elif runs:
            del st.partitions[partition]
        if st.live_runs > self.max_runs:
            raise run_limit(self.max_runs, "live runs", f"after event {e[EVENT_ID]!r}")
        if st.candidates > self.max_runs:
            # without a window, every run collects every later event of its array
            raise run_limit(
                self.max_runs,
                "candidate events held by the live runs",
                f"after event {e[EVENT_ID]!r}",
            )
        if self.collapsed:
            return [Intermediate(partition, items) for items in done]
        return self._construct(st, done, partition) if done else []

    def _construct(
        self, st: PostponeState, done: list[Items], partition: tuple[Any, ...]
    ) -> Iterator[Completion]:
        """Result construction of the intermediate matches, one match at a time (one
        intermediate match may hold exponentially many)."""
        construct = self.construct
        for items in done:
            began = time.perf_counter()
            for built in construct(items, partition):
                st.constructed += 1
                st.construct_seconds += time.perf_counter() - began
                yield built
                began = time.perf_counter()
            st.construct_seconds += time.perf_counter() - began

    def sweep(self, st: PostponeState, now: Any, window: float | None) -> None:
        if window is not None:
            st.live_runs -= expire(st.partitions, now, window, attrgetter("start"))
            st.candidates = st.count_candidates()

    def flush(self, st: Any, window: float | None) -> list[Completion]:
        return []  # every match is reported at its last event

    def drop_partition(self, st: PostponeState, partition: tuple[Any, ...]) -> None:
        runs = st.partitions.pop(partition, ())
        st.live_runs -= len(runs)
        st.candidates -= sum(len(r.candidates) for r in runs if r.candidates is not None)

    # --- matching -----------------------------------------------------------------

    def _advance(
        self,
        st: PostponeState,
        run: Run,
        e: tuple[Any, ...],
        position: int,
        out: list[Run],
        done: list[Items],
    ) -> None:
        index, anchors, _start, _start_position, items, candidates, fixed = run
        state = self.states[index]
        # every edge checks the event type first: events of other types skip the call
        typed = e[EVENT_TYPE] == state.event_type
        if state.kind == "single" or candidates is None:
            vector = self.filter[index](e, anchors) if typed else None
            # a run waiting for a Kleene array's first element is replaced by the run
            # collecting the array, which covers every later first element as well
            if vector is None or state.kind == "single":
                out.append(run)  # skip till any match: a run may always ignore the event
            if vector is not None:
                self._begin(st, state, run, vector, e, position, items, False, out, done)
            return
        out.append(run)
        seen = len(candidates)
        if not state.last:  # proceed: the array ends and the next variable begins
            nxt = self.states[index + 2]
            vector = self.filter[nxt.index](e, anchors) if e[EVENT_TYPE] == nxt.event_type else None
            if vector is not None:
                closed = ((index, candidates, seen, False, fixed), items)
                self._begin(st, nxt, run, vector, e, position, closed, True, out, done)
        if not typed:  # neither the array's first element nor a later one
            return
        take = self.states[index + 1]
        first_ok = self.filter[index](e, anchors) is not None
        take_ok = self.filter[take.index](e, anchors) is not None
        safe = (
            self.early
            and take_ok
            and not take.inconsistent
            and (fixed or (first_ok and not state.postponed))
        )
        if take_ok and self.early:
            for test in take.consistency:  # SIGMOD 2014, section 5.2: early filters
                held = test.check(e, anchors, candidates.aggregate(test.func, test.attr))
                if test.kind == FALSE_VALUE and not held:
                    take_ok = safe = False  # false for every subset: never a later element
                    break
                if test.kind == FALSE_VALUE or not held:
                    safe = False  # has to be checked again for each subset
        if first_ok or take_ok:
            candidates.add(position, e, safe, self.extremes[index])
            st.candidates += 1
            if state.last:  # the matches that end with this event
                done.append(_items(((index, candidates, seen + 1, True, fixed), items)))

    def _begin(
        self,
        st: PostponeState,
        state: State,
        parent: Run,
        anchors: tuple[Any, ...],
        e: tuple[Any, ...],
        position: int,
        items: Any,
        fixed: bool,
        out: list[Run],
        done: list[Items],
    ) -> None:
        """The event begins ``state``'s variable: a single variable's anchor, or the
        first candidate of a Kleene array. ``fixed``: the array's first element must be
        this event, because the run it comes from begins the array again at every later
        event (a fresh run, or a run that proceeds from a Kleene array); a run that was
        waiting for the array is replaced, so any of its candidates may come first."""
        start, start_position = parent.start, parent.start_position
        if state.kind == "single":
            items = ((state.index, position, e), items)
            if state.last:
                done.append(_items(items))
            else:
                out.append(Run(state.index + 1, anchors, start, start_position, items, None, False))
            return
        candidates = Candidates()
        candidates.add(position, e, self.early and not state.postponed, self.extremes[state.index])
        st.candidates += 1
        if state.last:
            done.append(_items(((state.index, candidates, 1, True, fixed), items)))
        out.append(Run(state.index, anchors, start, start_position, items, candidates, fixed))


def _items(linked: Any) -> Items:
    out = []
    while linked is not None:
        item, linked = linked
        out.append(item)
    out.reverse()
    return out


def _type_check(event_type: str) -> Any:
    """An edge that checks the event type only (every value predicate postponed)."""

    def check(e: tuple[Any, ...], vector: tuple[Any, ...]) -> tuple[Any, ...] | None:
        return vector if e[EVENT_TYPE] == event_type else None

    return check
