"""NFA^b execution with multiple runs (SIGMOD 2008, section 5.2).

The basic algorithm (5.2.1): a :data:`Run` is its automaton state, its
computation-state vector, the time of its first event (the youngest one for a merged
run), the oldest position it may still read from the buffer, and the buffer entry and
slot of its latest selection (the start of its match's pointer chain, see
:mod:`kleene.runtime.nfa.buffer`).
Runs are indexed by partition (the inferred key) so an event only visits the runs of
its own partition; without a key there is one partition.

For each event every run evaluates the edges of its state: begin (or take), proceed
(peeking at the next state's begin edge, step 6 of section 3.2) and ignore (by strategy,
step 3). A run follows every edge that holds (splitting if several do) and dies if none
does or if the event lies beyond the window (step 5: the window is on every edge).

Merging equivalent runs (5.2.2): two runs in the same state whose computation states
agree on every column that the state and its successors still read (the state's mask)
select the same events from now on, so they continue as one run. The combined run keeps
the youngest start time (so it expires only when all its members have) and the buffer
pointers of every member, so match construction still yields each member's match; a
member whose first event has left the window by then is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kleene.compiler.plan import Plan, State
from kleene.events import EVENT_ID, EVENT_TIME, EVENT_TYPE
from kleene.runtime.core import Completion, EventCore, expire
from kleene.runtime.limits import run_limit
from kleene.runtime.nfa.buffer import Origins, SharedMatchBuffer, check_origins
from kleene.runtime.snapshot import (
    Shapes,
    fail,
    fields_of,
    integer,
    mapping,
    number,
    partition_key,
    sequence,
)
from kleene.vocabulary import Strategy

# A run of the NFA^b (SIGMOD 2008, section 5.2.1), always read by unpacking
#     state, vector, start, start_position, origins = run
# its automaton state, its computation-state vector V, the time of its first event (the
# youngest member's when merged), the oldest buffer position it may still read and the
# buffer entry and slot of its latest selection(s). A plain tuple, not a NamedTuple:
# runs are made at every selection, and building a NamedTuple costs several times as
# much (measured: 5-9% of the matching time of match-heavy queries).
Run = tuple[int, tuple[Any, ...], Any, int, Origins]


def run_start(run: Run) -> Any:
    """The time of a run's first event (which the window is measured from)."""
    _state, _vector, start, _start_position, _origins = run
    return start


def run_start_position(run: Run) -> int:
    """The oldest buffer position a run may still read."""
    _state, _vector, _start, start_position, _origins = run
    return start_position


def check_run(run: Any, shapes: Shapes, buffer: SharedMatchBuffer, seen: set[Any]) -> Run:
    """A loaded run, checked: its state, vector and times, and its buffer pointers."""
    state, vector, start, start_position, origins = sequence(run, "a run", tuple, 5)
    shapes.state(state)
    shapes.vector(vector)
    number(start, "a run's start time")
    integer(start_position, "a run's start position", 0)
    buffer.check_reachable(check_origins(origins, "a run's pointers"), seen)
    return run


class NfaState:
    """All mutable state of the run engine (picklable for snapshots)."""

    def __init__(self, n_states: int) -> None:
        self.partitions: dict[tuple[Any, ...], list[Run]] = {}
        self.buffer = SharedMatchBuffer(n_states)
        self.live_runs = 0
        self.merged = 0  # runs folded into others so far
        self.peak_runs = 0

    # --- snapshots (kleene.runtime.snapshot) ------------------------------------------

    def to_data(self) -> Any:
        return {
            "partitions": self.partitions,
            "buffer": self.buffer.to_data(),
            "counters": (self.live_runs, self.merged, self.peak_runs),
        }

    @classmethod
    def from_data(cls, data: Any, shapes: Shapes) -> NfaState:
        """The state of :meth:`to_data`, checked against the plan (runs of its states,
        vectors of its layout, buffer pointers that lead somewhere)."""
        partitions, buffer, counters = fields_of(
            data, "the runs", "partitions", "buffer", "counters"
        )
        st = cls(shapes.n_states)
        st.buffer = SharedMatchBuffer.from_data(buffer, shapes)
        counts = sequence(counters, "the run counters", tuple, 3)
        for c in counts:
            integer(c, "a run counter", 0)
        st.live_runs, st.merged, st.peak_runs = counts
        seen: set[Any] = set()
        total = 0
        for key, runs in mapping(partitions, "the runs").items():
            st.partitions[partition_key(key)] = [
                check_run(run, shapes, st.buffer, seen)
                for run in sequence(runs, "a partition's runs")
            ]
            total += len(runs)
        if total != st.live_runs:
            fail("the live run count does not match the runs")
        return st


class NfaEngine(EventCore):
    """Evaluates one compiled plan over ordered events (no state of its own)."""

    def __init__(self, plan: Plan, max_runs: int, *, merge: bool = False) -> None:
        super().__init__(plan)
        self.plan = plan
        self.states = plan.states
        self.max_runs = max_runs
        self.merge = merge
        self.masks = plan.merge_masks
        self.initial = plan.initial_vector
        strategy = plan.strategy
        # ignore formulas (section 3.2, step 3); partition contiguity routes events so a
        # run only sees events of its own partition, where its ignore edge is false.
        self.ignore_always = strategy is Strategy.SKIP_TILL_ANY_MATCH
        self.ignore_if_unmatched = strategy is Strategy.SKIP_TILL_NEXT_MATCH
        self.first_type = self.states[0].event_type

    def new_state(self) -> NfaState:
        return NfaState(len(self.states))

    def live_runs(self, st: NfaState) -> int:
        return st.live_runs

    def process(
        self,
        st: NfaState,
        e: tuple[Any, ...],
        position: int,
        partition: tuple[Any, ...],
        window: float | None,
    ) -> list[Completion] | Iterator[Completion]:
        """Advance the runs of ``partition`` over one event; return the completions
        (lazily with merging, where a merged run may complete very many matches)."""
        completed: list[Any] = []
        runs = st.partitions.get(partition)
        t = e[EVENT_TIME]
        survivors: list[Run] = []
        if runs:
            for run in runs:
                _state, _vector, start, _start_position, _origins = run
                if window is not None and t - start > window:
                    continue
                self.advance(st, run, e, position, window, survivors, completed)
            st.live_runs -= len(runs)
        if e[EVENT_TYPE] == self.first_type:
            self.start(st, e, position, window, survivors, completed)
        if self.merge and len(survivors) > 1:
            survivors = self._merge(st, survivors)
        if survivors:
            st.partitions[partition] = survivors
        elif runs:
            del st.partitions[partition]
        st.live_runs += len(survivors)
        if st.live_runs > st.peak_runs:
            st.peak_runs = st.live_runs
        if st.live_runs > self.max_runs:
            raise run_limit(self.max_runs, "live runs", f"after event {e[EVENT_ID]!r}")
        if not completed:
            return []
        if self.merge:
            return self._expand(st, partition, completed, window)
        return [Completion(partition, sel, vec) for sel, vec in completed]

    @staticmethod
    def _expand(
        st: NfaState, partition: tuple[Any, ...], found: list[Any], window: float | None
    ) -> Iterator[Completion]:
        """The matches of merged runs, retrieved one at a time (the matcher consumes
        them before the buffer changes)."""
        for origins, end, vector in found:
            for selections in st.buffer.retrieve(origins):
                if window is None or end - selections[0][3] <= window:
                    yield Completion(partition, selections, vector)

    def sweep(self, st: NfaState, now: Any, window: float | None) -> None:
        if window is not None:
            st.live_runs -= expire(st.partitions, now, window, run_start)
        oldest = min(
            (run_start_position(r) for runs in st.partitions.values() for r in runs),
            default=1 << 62,
        )
        st.buffer.prune(oldest)

    def flush(self, st: Any, window: float | None) -> list[Completion]:
        return []  # every match is reported at its last event

    def drop_partition(self, st: NfaState, partition: tuple[Any, ...]) -> None:
        st.live_runs -= len(st.partitions.pop(partition, ()))

    # --- moves ----------------------------------------------------------------------

    def start(
        self,
        st: NfaState,
        e: tuple[Any, ...],
        position: int,
        window: float | None,
        out: list[Run],
        completed: list[Any],
    ) -> None:
        """Start a run at event ``e`` when the first state takes it (also used by the
        backtrack core)."""
        first = self.states[0]
        vector = first.edge(e, self.initial)
        if vector is None:
            return
        # a run before its first selection
        unstarted = (0, self.initial, e[EVENT_TIME], position, ())
        self._select(st, first, vector, e, position, unstarted, window, completed, out)

    def _select(
        self,
        st: NfaState,
        state: State,
        vector: tuple[Any, ...],
        e: tuple[Any, ...],
        position: int,
        run: Run,
        window: float | None,
        completed: list[Any],
        out: list[Run],
    ) -> None:
        """Write the event into the buffer at ``state`` for ``run`` and add the resulting
        run to ``out`` (none when it reached F from a singleton state)."""
        _, _, start, start_position, origins = run
        t = e[EVENT_TIME]
        key, slot = st.buffer.add(state.index, position, e[EVENT_ID], t, origins)
        now = ((key, slot, start),)
        then = state.then
        if then is None:  # the last single variable: F
            self._complete(st, now, t, window, vector, completed)
            return
        if state.kind != "single":
            head = self.states[then]  # a loop head without exit: epsilon proceed edge to F
            if head.proceed is not None and head.exit is None and head.proceed(vector):
                self._complete(st, now, t, window, vector, completed)
        out.append((then, vector, start, start_position, now))

    def _complete(
        self,
        st: NfaState,
        origins: Origins,
        end: Any,
        window: float | None,
        vector: tuple[Any, ...],
        completed: list[Any],
    ) -> None:
        if self.merge:  # retrieved lazily by _expand
            completed.append((origins, end, vector))
            return
        for selections in st.buffer.retrieve(origins):
            if window is None or end - selections[0][3] <= window:
                completed.append((selections, vector))

    def advance(
        self,
        st: NfaState,
        run: Run,
        e: tuple[Any, ...],
        position: int,
        window: float | None,
        out: list[Run],
        completed: list[Any],
    ) -> None:
        """Extend ``run`` by event ``e`` along every edge it takes (also used by the
        backtrack core)."""
        index, vector, _, _, _ = run
        state = self.states[index]
        moved = state.edge(e, vector)  # begin or take
        if moved is not None:
            self._select(st, state, moved, e, position, run, window, completed, out)
        if state.exit is not None:
            proceed = state.proceed
            assert proceed is not None
            if proceed(vector):
                nxt = self.states[state.exit]
                begun = nxt.edge(e, vector)  # step 6: peek at the next begin edge
                if begun is not None:
                    self._select(st, nxt, begun, e, position, run, window, completed, out)
        if self.ignore_always or (self.ignore_if_unmatched and moved is None):
            out.append(run)

    def _merge(self, st: NfaState, runs: list[Run]) -> list[Run]:
        """Fold runs with equal state and equal masked vectors into one (5.2.2)."""
        groups: dict[tuple[Any, ...], list[Run]] = {}
        for run in runs:
            state, vector, _start, _start_position, _origins = run
            key = (state, *(vector[i] for i in self.masks[state]))
            groups.setdefault(key, []).append(run)
        if len(groups) == len(runs):
            return runs
        merged = []
        for group in groups.values():
            if len(group) == 1:
                merged.append(group[0])
                continue
            state, vector, _start, _start_position, _origins = group[0]
            starts = [start for _s, _v, start, _p, _o in group]
            start_positions = [start_position for _s, _v, _t, start_position, _o in group]
            origins = tuple(o for _s, _v, _t, _p, group_origins in group for o in group_origins)
            merged.append((state, vector, max(starts), min(start_positions), origins))
            st.merged += len(group) - 1
        return merged
