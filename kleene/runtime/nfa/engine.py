"""NFA^b execution with multiple runs: the basic algorithm (SIGMOD 2008, section 5.2.1).

A run is a tuple ``(state, V, start time, start position, last entry, its label,
version)``: its automaton state, its computation-state vector, the time and position of
its first event, the pointer to its most recent selection in the shared buffer, and its
Dewey version. Runs are indexed by partition (the inferred key) so an event only visits
the runs of its own partition; without a key there is one partition.

For each event every run evaluates the edges of its state: begin (or take), proceed
(peeking at the next state's begin edge, step 6 of section 3.2) and ignore (by strategy,
step 3). A run follows every edge that holds (splitting if several do) and dies if none
does or if the event lies beyond the window (step 5: the window is on every edge).
"""

from __future__ import annotations

from typing import Any

from kleene.compiler.plan import Plan, State
from kleene.errors import RunLimitError
from kleene.lang.ast import Strategy
from kleene.runtime.nfa.buffer import EntryKey, SharedVersionedBuffer, Version

Run = tuple[int, tuple[Any, ...], Any, int, EntryKey, Version, Version]


class Completion:
    """A run that reached F: where to read its match, and its final state vector."""

    __slots__ = ("entry", "label", "partition", "start", "start_position", "vector")

    def __init__(
        self,
        entry: EntryKey,
        label: Version,
        vector: tuple[Any, ...],
        start: Any,
        start_position: int,
        partition: tuple[Any, ...],
    ) -> None:
        self.entry = entry
        self.label = label
        self.vector = vector
        self.start = start
        self.start_position = start_position
        self.partition = partition


class NfaState:
    """All mutable state of the run engine (picklable for snapshots)."""

    def __init__(self, n_states: int) -> None:
        self.partitions: dict[tuple[Any, ...], list[Run]] = {}
        self.buffer = SharedVersionedBuffer(n_states)
        self.next_digit = 0
        self.live_runs = 0


class NfaEngine:
    """Evaluates one compiled plan over ordered events (no state of its own)."""

    def __init__(self, plan: Plan, max_runs: int) -> None:
        self.plan = plan
        self.states = plan.states
        self.max_runs = max_runs
        self.initial = plan.initial_vector
        strategy = plan.strategy
        # ignore formulas (section 3.2, step 3); partition contiguity routes events so a
        # run only sees events of its own partition, where its ignore edge is false.
        self.ignore_always = strategy is Strategy.SKIP_TILL_ANY_MATCH
        self.ignore_if_unmatched = strategy is Strategy.SKIP_TILL_NEXT_MATCH
        self.first_type = self.states[0].event_type
        self.types = {s.event_type for s in self.states}

    def new_state(self) -> NfaState:
        return NfaState(len(self.states))

    def process(
        self,
        st: NfaState,
        e: tuple[Any, ...],
        position: int,
        partition: tuple[Any, ...],
        window: float | None,
    ) -> list[Completion]:
        """Advance the runs of ``partition`` over one event; return the completions."""
        completed: list[Completion] = []
        runs = st.partitions.get(partition)
        t = e[1]
        if runs:
            survivors: list[Run] = []
            for run in runs:
                if window is not None and t - run[2] > window:
                    continue
                self._advance(st, run, e, position, partition, survivors, completed)
            if survivors:
                st.partitions[partition] = survivors
            else:
                del st.partitions[partition]
            st.live_runs += len(survivors) - len(runs)
        if e[0] == self.first_type:
            self._start(st, e, position, partition, completed)
        if st.live_runs > self.max_runs:
            raise RunLimitError(
                f"more than {self.max_runs} live runs after event {e[2]!r}: the pattern is "
                "too permissive for this stream; narrow the window, use a stricter selection "
                "strategy, or raise max_runs"
            )
        return completed

    def _start(
        self,
        st: NfaState,
        e: tuple[Any, ...],
        position: int,
        partition: tuple[Any, ...],
        completed: list[Completion],
    ) -> None:
        first = self.states[0]
        vector = first.edge(e, self.initial)
        if vector is None:
            return
        st.next_digit += 1
        version = (st.next_digit,)
        run = self._select(
            st,
            first,
            vector,
            e,
            position,
            e[1],
            position,
            None,
            None,
            version,
            partition,
            completed,
        )
        if run is not None:
            st.partitions.setdefault(partition, []).append(run)
            st.live_runs += 1

    def _select(
        self,
        st: NfaState,
        state: State,
        vector: tuple[Any, ...],
        e: tuple[Any, ...],
        position: int,
        start: Any,
        start_position: int,
        entry: EntryKey | None,
        label: Version | None,
        version: Version,
        partition: tuple[Any, ...],
        completed: list[Completion],
    ) -> Run | None:
        """Write the event into the buffer at ``state`` and return the resulting run
        (None when it reached F from a singleton state)."""
        key = st.buffer.add(state.index, position, e[2], e[1], version, entry, label)
        if state.kind == "single":
            if state.last:
                completed.append(Completion(key, version, vector, start, start_position, partition))
                return None
            return (state.index + 1, vector, start, start_position, key, version, version)
        rest = state.index if state.kind == "rest" else state.index + 1
        if state.last:
            proceed = self.states[rest].proceed
            assert proceed is not None
            if proceed(vector):  # epsilon proceed edge to F
                completed.append(Completion(key, version, vector, start, start_position, partition))
        return (rest, vector, start, start_position, key, version, version)

    def _advance(
        self,
        st: NfaState,
        run: Run,
        e: tuple[Any, ...],
        position: int,
        partition: tuple[Any, ...],
        out: list[Run],
        completed: list[Completion],
    ) -> None:
        index, vector, start, start_position, entry, label, version = run
        state = self.states[index]
        stays = False
        moved = state.edge(e, vector)  # begin or take
        if moved is not None:
            child_version = version if state.kind == "rest" else self._append(st, version)
            stays = state.kind == "rest"
            child = self._select(
                st,
                state,
                moved,
                e,
                position,
                start,
                start_position,
                entry,
                label,
                child_version,
                partition,
                completed,
            )
            if child is not None:
                out.append(child)
        if state.kind == "rest" and not state.last:
            proceed = state.proceed
            assert proceed is not None
            if proceed(vector):
                nxt = self.states[index + 1]
                begun = nxt.edge(e, vector)  # step 6: peek at the next begin edge
                if begun is not None:
                    child = self._select(
                        st,
                        nxt,
                        begun,
                        e,
                        position,
                        start,
                        start_position,
                        entry,
                        label,
                        self._append(st, version),
                        partition,
                        completed,
                    )
                    if child is not None:
                        out.append(child)
        if self.ignore_always or (self.ignore_if_unmatched and moved is None):
            child_version = self._split(st, version) if stays else version
            out.append((index, vector, start, start_position, entry, label, child_version))

    @staticmethod
    def _append(st: NfaState, version: Version) -> Version:
        st.next_digit += 1
        return (*version, st.next_digit)

    @staticmethod
    def _split(st: NfaState, version: Version) -> Version:
        st.next_digit += 1
        return (*version[:-1], st.next_digit)
