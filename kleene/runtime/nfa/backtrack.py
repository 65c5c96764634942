"""The backtrack algorithm (SIGMOD 2008, section 5.2.3), kept for comparison.

One *singleton* run per partition is evaluated at a time; when it splits, the other
branches are postponed on a stack with the position of the event they resume from. The
singleton runs until it fails (or, for a trailing single variable, completes its
match); then the most recent postponed run is popped and replays the partition's
buffered events from its resume position — a depth-first walk of the run tree where the
basic algorithm walks it breadth-first. Each step is the basic algorithm's edge
evaluation (:class:`NfaEngine`), so the matches are the same; they are reported when
the walk reaches them, which may be well after their last event (at the end of the
stream, the postponed runs are walked to the end). Because of that delay the engine
takes queries without negation and with the default output format only.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from kleene.compiler.plan import Plan
from kleene.events import EVENT_ID, EVENT_TIME, EVENT_TYPE
from kleene.runtime.core import Completion, EventCore
from kleene.runtime.limits import run_limit
from kleene.runtime.nfa.engine import (
    NfaEngine,
    NfaState,
    Run,
    check_run,
    run_start,
    run_start_position,
)
from kleene.runtime.snapshot import Shapes, fields_of, integer, mapping, partition_key, sequence


class _Partition:
    """One partition's walk: buffered events, the singleton and the postponed runs."""

    __slots__ = ("base", "cursor", "events", "singleton", "stack")

    def __init__(self) -> None:
        self.events: deque[tuple[int, tuple[Any, ...]]] = deque()
        self.base = 0  # index of events[0] in the partition's sequence
        self.singleton: Run | None = None
        self.cursor = 0  # next event index for the singleton
        self.stack: list[tuple[Run, int]] = []

    def to_data(self) -> Any:
        return (list(self.events), self.base, self.singleton, self.cursor, self.stack)

    @classmethod
    def from_data(cls, data: Any, shapes: Shapes, nfa: NfaState, seen: set[Any]) -> _Partition:
        events, base, singleton, cursor, stack = sequence(data, "a partition's walk", tuple, 5)
        part = cls()
        integer(base, "a walk's first index", 0)
        end = base + len(sequence(events, "a walk's events"))
        for item in events:
            position, e = sequence(item, "a walked event", tuple, 2)
            integer(position, "a stream position", 0)
            shapes.event(e)
        if singleton is not None:
            part.singleton = check_run(singleton, shapes, nfa.buffer, seen)
        part.cursor = integer(cursor, "a walk's cursor", base, end + 1)
        for item in sequence(stack, "a walk's postponed runs"):
            run, index = sequence(item, "a postponed run", tuple, 2)
            integer(index, "a postponed run's resume index", base, end + 1)
            part.stack.append((check_run(run, shapes, nfa.buffer, seen), index))
        part.events = deque(events)
        part.base = base
        return part


class BacktrackState:
    def __init__(self, n_states: int) -> None:
        self.nfa = NfaState(n_states)  # shared buffer and run counters
        self.partitions: dict[tuple[Any, ...], _Partition] = {}
        self.peak_runs = 0
        self.replayed = 0  # events read again after a backtrack

    # --- snapshots (kleene.runtime.snapshot) ------------------------------------------

    def to_data(self) -> Any:
        return {
            "nfa": self.nfa.to_data(),
            "partitions": {k: p.to_data() for k, p in self.partitions.items()},
            "counters": (self.peak_runs, self.replayed),
        }

    @classmethod
    def from_data(cls, data: Any, shapes: Shapes) -> BacktrackState:
        nfa, parts, counters = fields_of(data, "the walks", "nfa", "partitions", "counters")
        st = cls(shapes.n_states)
        st.nfa = NfaState.from_data(nfa, shapes)
        seen: set[Any] = set()
        st.partitions = {
            partition_key(k): _Partition.from_data(p, shapes, st.nfa, seen)
            for k, p in mapping(parts, "the walks").items()
        }
        peak, replayed = sequence(counters, "the walk counters", tuple, 2)
        st.peak_runs = integer(peak, "a walk counter", 0)
        st.replayed = integer(replayed, "a walk counter", 0)
        return st


class BacktrackCore(EventCore):
    """Depth-first evaluation of the NFA^b runs of each partition."""

    # postponed runs may still complete matches before an event that no state accepts
    every_event = True

    def __init__(self, plan: Plan, max_runs: int) -> None:
        super().__init__(plan)
        self.engine = NfaEngine(plan, max_runs)
        self.max_runs = max_runs

    def new_state(self) -> BacktrackState:
        return BacktrackState(len(self.engine.states))

    def live_runs(self, st: BacktrackState) -> int:
        return sum(len(p.stack) + (p.singleton is not None) for p in st.partitions.values())

    def process(
        self,
        st: BacktrackState,
        e: tuple[Any, ...],
        position: int,
        partition: tuple[Any, ...],
        window: float | None,
    ) -> list[Completion]:
        part = st.partitions.get(partition)
        if part is None:
            part = st.partitions[partition] = _Partition()
        part.events.append((position, e))
        index = part.base + len(part.events) - 1
        completed: list[tuple[Any, tuple[Any, ...]]] = []
        started: list[Run] = []
        if e[EVENT_TYPE] == self.engine.first_type:  # run initialization, postponed like a branch
            self.engine.start(st.nfa, e, position, window, started, completed)
        part.stack.extend((run, index + 1) for run in reversed(started))
        self._walk(st, part, window, completed)
        if not part.stack and part.singleton is None:
            del st.partitions[partition]
        elif (
            # only then can all partitions together hold more than max_runs
            (len(part.stack) + 1) * len(st.partitions) > self.max_runs
            and self.live_runs(st) > self.max_runs
        ):
            raise run_limit(self.max_runs, "postponed runs", f"after event {e[EVENT_ID]!r}")
        return [Completion(partition, sel, vec) for sel, vec in completed]

    def _walk(
        self,
        st: BacktrackState,
        part: _Partition,
        window: float | None,
        completed: list[tuple[Any, tuple[Any, ...]]],
    ) -> int:
        """Walk until a run is alive at the newest event; return how many postponed
        runs were taken up."""
        end = part.base + len(part.events)
        taken = 0
        while True:
            if part.singleton is None:
                if not part.stack:
                    return taken
                run, index = part.stack.pop()
                taken += 1
                st.replayed += end - index
            else:
                run, index = part.singleton, part.cursor
            current: Run | None = run
            while current is not None and index < end:
                position, e = part.events[index - part.base]
                if window is not None and e[EVENT_TIME] - run_start(current) > window:
                    current = None
                    break
                children: list[Run] = []
                self.engine.advance(st.nfa, current, e, position, window, children, completed)
                index += 1
                current = children[0] if children else None
                part.stack.extend((child, index) for child in reversed(children[1:]))
                if len(part.stack) >= self.max_runs:  # checked as the walk goes
                    raise run_limit(self.max_runs, "postponed runs in one partition")
            runs = len(part.stack) + 1
            st.peak_runs = max(st.peak_runs, runs)
            part.singleton, part.cursor = current, index
            if current is not None:
                return taken  # the singleton is alive at the newest event

    def sweep(self, st: BacktrackState, now: Any, window: float | None) -> None:
        oldest = 1 << 62
        for part in st.partitions.values():
            keep = [i for _, i in part.stack]
            if part.singleton is not None:
                keep.append(part.cursor)
            first = min(keep, default=part.base + len(part.events))
            while part.base < first and part.events:
                part.events.popleft()
                part.base += 1
            runs = [r for r, _ in part.stack] + ([part.singleton] if part.singleton else [])
            oldest = min([oldest, *map(run_start_position, runs)])
        st.nfa.buffer.prune(oldest)

    def drop_partition(self, st: BacktrackState, partition: tuple[Any, ...]) -> None:
        st.partitions.pop(partition, None)

    def flush(self, st: BacktrackState, window: float | None) -> Iterator[Completion]:
        """End of stream: the singletons have read every event, so walk every postponed
        run to the end as well; the matches come as each walk finds them."""
        for key, part in list(st.partitions.items()):
            walked = 0  # runs walked to the end: the basic algorithm's runs at the end
            while part.stack:
                completed: list[tuple[Any, tuple[Any, ...]]] = []
                part.singleton = None
                walked += self._walk(st, part, window, completed)
                if walked > self.max_runs:
                    raise run_limit(self.max_runs, "runs walked at the end of the stream")
                yield from (Completion(key, sel, vec) for sel, vec in completed)
        st.partitions.clear()
