"""The push-based matcher: admission, the NFA^b engine, negation and output.

``push`` feeds events (any supported batch form) and returns the matches that became
final; ``advance_to`` tells the matcher that no event before a time will come (a
watermark); ``flush`` ends the stream. All mutable state lives in one
:class:`MatcherState`, which ``snapshot`` pickles and a new matcher can resume from.

Memory stays bounded by the window (SIGMOD 2008, section 5.3): expired runs are swept,
the shared buffer is pruned below the oldest live run, and negation candidates older
than the window are dropped. A cap on live runs raises :class:`RunLimitError`.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kleene.collapsed import SAFE, UNSAFE, CollapsedMatch, Result
from kleene.compiler.plan import NegatedEvent, Plan
from kleene.compiler.returns import time_items
from kleene.events import (
    MICROS,
    EventBatch,
    EventFields,
    micros_to_datetime,
    read_batch,
    read_time,
)
from kleene.lang.ast import OutputFormat, Strategy
from kleene.match import Match, RejectedEvent, late_reason
from kleene.runtime.core import Completion, Core, Intermediate
from kleene.runtime.ingest import ReorderBuffer, Validator
from kleene.runtime.negation import NegationState, violated
from kleene.runtime.nfa.backtrack import BacktrackCore
from kleene.runtime.nfa.engine import NfaEngine
from kleene.runtime.output import NonOverlapState
from kleene.runtime.postpone import PostponeCore
from kleene.runtime.postpone.construct import Built, construct
from kleene.runtime.prefilter import Prefilter
from kleene.runtime.vector import VectorCore

SWEEP_EVERY = 4096
NEVER = float("inf")


@dataclass(frozen=True)
class MatcherConfig:
    fields: EventFields = field(default_factory=EventFields)
    allowed_lateness: float = 0
    max_runs: int = 1_000_000
    engine: str = "nfa"  # a core of runtime.choice.ENGINES, never "auto" (resolved before)


class MatcherState:
    """Everything a matcher remembers between events."""

    def __init__(self, core: Core) -> None:
        self.core = core.new_state()
        self.negation = NegationState()
        self.non_overlap = NonOverlapState()
        self.pending: list[tuple[Any, int, _Found]] = []  # (deadline, seq, match)
        self.reorder = ReorderBuffer()
        self.learned_kinds: dict[int, str] = {}
        self.time_kind: str | None = None
        self.tz: Any = None
        self.clock: Any = None  # time of the last released event (or watermark)
        self.arrived = 0  # events read so far (input positions)
        self.position = 0  # events released into the stream so far
        self.seq = 0
        self.since_sweep = 0
        self.rejected: list[RejectedEvent] = []
        self.rejected_count = 0


@dataclass
class _Found:
    """A completed positive match awaiting negation checks and output."""

    partition: tuple[Any, ...]
    selections: list[tuple[int, int, Any, Any]]  # (state, position, id, time)
    vector: tuple[Any, ...]
    order: tuple[Any, ...]
    bounds: list[tuple[int, int, Any, Any]]


class Matcher:
    """Evaluates one compiled query over a stream pushed to it in time order."""

    def __init__(self, plan: Plan, config: MatcherConfig, state: bytes | None = None) -> None:
        self.plan = plan
        self.config = config
        self.engine = make_core(plan, config)
        self.prefilter = Prefilter(plan)
        # the backtrack core's postponed runs may still complete matches before an
        # event that no state accepts, so every event has to reach it
        self.every_event = isinstance(self.engine, BacktrackCore)
        self.st: MatcherState = pickle.loads(state) if state else MatcherState(self.engine)
        self.validator = Validator(plan, self.st.learned_kinds)
        self.trailing = [n for n in plan.negations if n.after is None]
        self.inner = [n for n in plan.negations if n.after is not None]
        self.by_type_negations: dict[str, list[NegatedEvent]] = {}
        for n in plan.negations:
            for member in n.members:
                self.by_type_negations.setdefault(member.event_type, []).append(member)
        self.types = {s.event_type for s in plan.states} | set(self.by_type_negations)
        self.non_overlap = plan.output is OutputFormat.NON_OVERLAP
        self.collapsed = plan.output is OutputFormat.COLLAPSED
        skip = plan.strategy in (Strategy.SKIP_TILL_NEXT_MATCH, Strategy.SKIP_TILL_ANY_MATCH)
        self.only_pattern_types = skip
        self.component_of_state = [s.component for s in plan.states]
        self.var_of_component = list(plan.positive_vars)
        self.n_components = len(plan.positive_vars)
        # where a keyed event type's partition key is (none for a query with one partition)
        self.key_index = dict(plan.key_index) if plan.routed else {}
        self.time_returns = time_items(plan.query)  # RETURN items given back as datetimes

    # --- public API ---------------------------------------------------------------

    def push(self, events: Any) -> list[Result]:
        """Feed events in time order; return the matches that became final."""
        batch = read_batch(events, self.config.fields, self.st.arrived)
        out: list[Result] = []
        if len(batch):
            clean = self.validator.clean_types(batch)
            if self._vectorizable(batch, clean) and isinstance(self.engine, VectorCore):
                self.engine.push_batch(self, batch, clean, out)
            elif self._vectorizable(batch, clean):
                self._push_relevant(batch, clean, out)
            else:
                self._push_each(batch, clean, out)
        return out

    def _vectorizable(self, batch: EventBatch, clean: set[str]) -> bool:
        """Whether the batch needs no per-event admission: one time kind, in order and
        not late, every event typed and valid."""
        st = self.st
        if self.config.allowed_lateness:
            return False
        if batch.time_kind is None or st.time_kind not in (None, batch.time_kind):
            return False
        present = batch.present_types()
        if None in present or not (present & self.types) <= clean:
            return False
        times = batch.times_array()
        horizon = self._horizon()
        return bool(np.all(times[1:] >= times[:-1])) and (horizon is None or times[0] >= horizon)

    def _push_relevant(self, batch: EventBatch, clean: set[str], out: list[Result]) -> None:
        """Admit a whole batch at once and give the automaton only the events some
        state may accept (match-windows paper, section 4.2). Under the skip-till
        strategies the others are skipped; under strict and partition contiguity they
        still end the runs of their partition."""
        st = self.st
        if st.time_kind is None:
            st.time_kind, st.tz = batch.time_kind, batch.tz
        if self.every_event:
            mask = np.ones(len(batch), dtype=bool)
        elif self.prefilter.useful:
            mask = self.prefilter.relevant(batch, clean, self._window())
        else:
            mask = batch.type_mask(self.types)
        useful: list[bool] | None = None
        if self.only_pattern_types:
            rows = np.flatnonzero(mask)
        else:
            rows, useful = np.arange(len(batch)), mask.tolist()
        base = st.position
        types = batch.take(self.config.fields.type_field, rows)
        times = batch.times_at(rows)
        ids = batch.ids_at(rows)
        columns = [batch.take(a, rows) for a in self.plan.attributes]
        for k, j in enumerate(rows.tolist()):
            e = (types[k], times[k], ids[k], *(col[k] for col in columns))
            if useful is None or useful[j]:
                self._process(e, out, base + j)
            else:
                self._pass(e, out, base + j)
        n = len(batch)
        st.arrived += n
        st.position = base + n
        st.clock = batch.last_time()
        st.since_sweep += n - len(rows)
        if st.pending and st.pending[0][0] < st.clock:
            self._decide_pending(st.clock, out)
        if st.since_sweep >= SWEEP_EVERY:
            self._sweep(st.clock)

    def _push_each(self, batch: EventBatch, clean: set[str], out: list[Result]) -> None:
        """Admit the batch event by event: validation, order and lateness."""
        st = self.st
        columns = [batch.column(a) for a in self.plan.attributes]
        if self.prefilter.useful and not self.every_event:
            relevant = self.prefilter.relevant(batch, clean).tolist()
        else:
            relevant = [True] * len(batch)
        types, times, kinds, ids = batch.types, batch.times, batch.time_kinds, batch.ids
        for j in range(len(batch)):
            arrival = st.arrived
            st.arrived += 1
            reason = self._time_problem(kinds[j])
            etype = types[j]
            if reason is None and etype in self.types and etype not in clean:
                reason = self.validator.problem(etype, batch, j)
            elif reason is None and etype is None:
                reason = "missing event type"
            if reason is not None:
                self._reject(ids[j], None, reason, batch.record(j))
                continue
            if st.time_kind is None:
                st.time_kind, st.tz = kinds[j], batch.tz
            t = times[j]
            e = (etype, t, ids[j], *(col[j] for col in columns))
            horizon = self._horizon()
            if horizon is not None and t < horizon:
                self._reject(
                    ids[j],
                    None,
                    self._late_reason(t, horizon),
                    batch.record(j),
                )
                continue
            if self.config.allowed_lateness:
                st.reorder.push(t, arrival, (e, relevant[j]))
                for ready, useful in st.reorder.release(st.reorder.max_seen - self._lateness()):
                    self._process(ready, out) if useful else self._pass(ready, out)
            elif relevant[j]:
                self._process(e, out)
            else:
                self._pass(e, out)

    def advance_to(self, time: Any) -> list[Result]:
        """No event before ``time`` will come: release, decide and prune up to it."""
        out: list[Result] = []
        internal = self._time_in(time)
        for ready, useful in self.st.reorder.release(internal):
            self._process(ready, out) if useful else self._pass(ready, out)
        if self.st.clock is None or internal > self.st.clock:
            self.st.clock = internal
        self._decide_pending(internal, out)
        self._sweep(internal)
        return out

    def flush(self) -> list[Result]:
        """End of stream: every held event is processed and every match decided."""
        out: list[Result] = []
        for ready, useful in self.st.reorder.release(None):
            self._process(ready, out) if useful else self._pass(ready, out)
        held = self.engine.flush(self.st.core, self._window())
        if held:
            self._complete(held, self.st.clock, out)
        self._decide_pending(NEVER, out, everything=True)
        return out

    def take_rejected(self) -> list[RejectedEvent]:
        """The rejected events since the last call."""
        rejected, self.st.rejected = self.st.rejected, []
        return rejected

    @property
    def rejected_count(self) -> int:
        return self.st.rejected_count

    @property
    def live_runs(self) -> int:
        return self.engine.live_runs(self.st.core)

    def snapshot(self) -> bytes:
        """The matcher's whole state; ``Query.matcher(state=...)`` resumes from it."""
        return pickle.dumps(self.st, protocol=pickle.HIGHEST_PROTOCOL)

    # --- admission --------------------------------------------------------------------

    def _time_problem(self, kind: str) -> str | None:
        if kind not in ("number", "datetime"):
            return kind
        if self.st.time_kind is not None and kind != self.st.time_kind:
            return f"timestamp is a {kind} but the stream's timestamps are {self.st.time_kind}s"
        return None

    def _reject(
        self, event_id: Any, position: int | None, reason: str, record: dict[str, Any]
    ) -> None:
        self.st.rejected.append(RejectedEvent(event_id, position, reason, record))
        self.st.rejected_count += 1

    def _scale(self) -> float:
        return MICROS if self.st.time_kind == "datetime" else 1

    def _window(self) -> float | None:
        w = self.plan.window
        return None if w is None else w * (MICROS if self.st.time_kind == "datetime" else 1)

    def _horizon(self) -> Any:
        """Events before this time are late."""
        st = self.st
        seen = st.reorder.max_seen
        if seen is None or not self.config.allowed_lateness:
            return st.clock
        behind = seen - self._lateness()
        return behind if st.clock is None else max(st.clock, behind)

    def _late_reason(self, t: Any, horizon: Any) -> str:
        seen, lateness = self.st.reorder.max_seen, self.config.allowed_lateness
        if lateness and seen is not None and horizon == seen - self._lateness():
            return late_reason(self._time_out(t), self._time_out(seen), lateness)
        return late_reason(self._time_out(t), self._time_out(horizon))

    def _lateness(self) -> float:
        return self.config.allowed_lateness * self._scale()

    def _time_in(self, value: Any) -> Any:
        internal, _kind = read_time(value)
        if internal is None:
            raise TypeError(f"cannot use {value!r} as a time")
        return internal

    def _time_out(self, value: Any) -> Any:
        if self.st.time_kind == "datetime":
            return micros_to_datetime(value, self.st.tz)
        return value

    # --- the stream ---------------------------------------------------------------

    def _process(self, e: tuple[Any, ...], out: list[Result], position: int | None = None) -> None:
        """One event the automaton may accept, at its stream position."""
        st = self.st
        t = e[1]
        if position is None:
            position = st.position
            st.position += 1
        st.clock = t
        window = self._window()
        if st.pending and st.pending[0][0] < t:
            self._decide_pending(t, out)
        st.since_sweep += 1
        if st.since_sweep >= SWEEP_EVERY:
            self._sweep(t)
        etype = e[0]
        partition = self._partition(e)
        if partition is not None:
            completions = self.engine.process(st.core, e, position, partition, window)
            if completions and self.collapsed:
                out.extend(
                    self._collapse(c.partition, c.items, t)
                    for c in completions
                    if isinstance(c, Intermediate)
                )
            elif completions:
                self._complete(completions, t, out)  # type: ignore[arg-type]
        for member in self.by_type_negations.get(etype, ()):
            st.negation.add(member, partition or (), position, e)

    def _pass(self, e: tuple[Any, ...], out: list[Result], position: int | None = None) -> None:
        """An event no state can accept (see :mod:`kleene.runtime.prefilter`): it takes a
        stream position and moves time on; under strict or partition contiguity it ends
        every run of its partition, as no edge of theirs could follow it."""
        st = self.st
        t = e[1]
        if position is None:
            st.position += 1
        st.clock = t
        if st.pending and st.pending[0][0] < t:
            self._decide_pending(t, out)
        if not self.only_pattern_types:
            partition = self._partition(e)
            if partition is not None:
                self.engine.drop_partition(st.core, partition)

    def _partition(self, e: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """The partition whose runs see this event; None when no run can."""
        etype = e[0]
        index = self.key_index.get(etype)
        if index is not None:  # a keyed type: validated, its key values are present
            return tuple([e[i] for i in index])
        if not self.plan.routed:  # one partition
            return () if etype in self.types or not self.only_pattern_types else None
        if self.only_pattern_types or not self.plan.common_key_index:
            return None
        key = tuple([e[i] for i in self.plan.common_key_index])
        return None if any(v is None for v in key) else key

    def _complete(self, completions: list[Completion], t: Any, out: list[Result]) -> None:
        st = self.st
        if not (self.inner or self.trailing or self.non_overlap):
            out += [self._match(c) for c in completions]  # nothing to decide first
            return
        window = self._window()
        touched: set[tuple[Any, ...]] = set()
        for c in completions:
            found = self._found(c)
            start = c.selections[0][3]
            if any(
                violated(n, st.negation, c.partition, found.bounds, c.vector, window, start, t)
                for n in self.inner
            ):
                continue
            decided = not self.trailing
            if not decided:
                deadline = NEVER if window is None else start + window
                st.seq += 1
                _insort(st.pending, (deadline, st.seq, found))
            if self.non_overlap:
                st.non_overlap.offer(c.partition, found.order, found, decided)
                touched.add(c.partition)
            elif decided:
                out.append(self._match(found))
        for partition in touched:
            released = st.non_overlap.release(partition)
            out.extend(self._match(f) for f in released)
            if released and not self.trailing:
                # every remaining run of this partition started at or before the released
                # match's end, so none can produce a non-overlapping match any more
                self.engine.drop_partition(st.core, partition)

    def _found(self, c: Completion) -> _Found:
        selections = c.selections
        bounds: list[Any] = [None] * self.n_components
        for state, position, _id, time in selections:
            k = self.component_of_state[state]
            b = bounds[k]
            bounds[k] = (
                (position, position, time, time) if b is None else (b[0], position, b[2], time)
            )
        positions = tuple(s[1] for s in selections)
        per_component: list[list[int]] = [[] for _ in range(self.n_components)]
        for state, position, _id, _time in selections:
            per_component[self.component_of_state[state]].append(position)
        order = (positions[-1], positions[0], positions, tuple(map(tuple, per_component)))
        return _Found(c.partition, selections, c.vector, order, bounds)

    def _decide_pending(self, time: Any, out: list[Result], everything: bool = False) -> None:
        st = self.st
        window = self._window()
        while st.pending and (everything or st.pending[0][0] < time):
            _, _, found = st.pending.pop(0)
            first_time = found.selections[0][3]
            last_time = found.selections[-1][3]
            accepted = not any(
                violated(
                    n,
                    st.negation,
                    found.partition,
                    found.bounds,
                    found.vector,
                    window,
                    first_time,
                    last_time,
                )
                for n in self.trailing
            )
            if self.non_overlap:
                released = st.non_overlap.decide(found.partition, found, accepted)
                out.extend(self._match(f) for f in released)
            elif accepted:
                out.append(self._match(found))

    def _sweep(self, now: Any) -> None:
        """Drop expired runs and everything only they could reach (section 5.3)."""
        st = self.st
        st.since_sweep = 0
        window = self._window()
        self.engine.sweep(st.core, now, window)
        if window is not None:
            st.negation.prune(now - window)

    def _collapse(self, partition: tuple[Any, ...], items: list[Any], end: Any) -> CollapsedMatch:
        """An intermediate match of the postponing core as a collapsed result."""
        states = self.plan.states
        singles: dict[str, Any] = {}
        candidates: dict[str, tuple[tuple[Any, str], ...]] = {}
        first_fixed, last_fixed = set(), set()
        times = []
        for item in items:
            if len(item) == 3:
                state, _position, e = item
                singles[states[state].var] = e[2]
                times.append(e[1])
                continue
            first, cands, length, forced, fixed = item
            var = states[first].var
            candidates[var] = tuple((c[1][2], SAFE if c[2] else UNSAFE) for c in cands[:length])
            times += [c[1][1] for c in cands[:length]]
            if fixed:
                first_fixed.add(var)
            if forced:
                last_fixed.add(var)
        exact = all(label == SAFE for cs in candidates.values() for _, label in cs) and not any(
            s.proceed_text or (s.postponed and s.kind == "single") for s in states
        )
        plan, limit = self.plan, self.config.max_runs

        def expand() -> list[Match]:
            found = construct(plan.states, items, plan.initial_vector, limit, partition)
            return [self._match(b) for b in found]

        return CollapsedMatch(
            singles=singles,
            candidates=candidates,
            first_fixed=frozenset(first_fixed),
            last_fixed=frozenset(last_fixed),
            start=self._time_out(min(times)),
            end=self._time_out(end),
            partition=partition,
            exact=exact,
            _expand=expand,
        )

    def _match(self, found: _Found | Completion) -> Match:
        plan = self.plan
        names = plan.positive_vars
        if isinstance(found, Built):  # grouped per variable by result construction
            variables, where, start, end, _source = found.groups
        else:
            by_var: dict[str, list[Any]] = {v: [] for v in names}
            at: dict[str, list[int]] = {v: [] for v in names}
            for state, position, event_id, _time in found.selections:
                var = plan.states[state].var
                by_var[var].append(event_id)
                at[var].append(position)
            variables = {v: tuple(x) for v, x in by_var.items()}
            where = {v: tuple(x) for v, x in at.items()}
            start, end = found.selections[0][3], found.selections[-1][3]
        returned = {}
        if plan.returns is not None:
            values = plan.returns(found.vector)
            if self.st.time_kind == "datetime" and any(self.time_returns):
                values = tuple(
                    self._time_out(v) if is_time and v is not None else v
                    for v, is_time in zip(values, self.time_returns, strict=True)
                )
            returned = dict(zip(plan.return_names, values, strict=True))
        if self.st.time_kind == "datetime":
            start, end = self._time_out(start), self._time_out(end)
        return Match.of(variables, where, start, end, found.partition, returned)


def _insort(pending: list[tuple[Any, int, _Found]], item: tuple[Any, int, _Found]) -> None:
    from bisect import insort

    insort(pending, item, key=lambda x: (x[0], x[1]))


def make_core(plan: Plan, config: MatcherConfig) -> Core:
    """The evaluation core the configuration names."""
    if config.engine in ("nfa", "merge"):
        return NfaEngine(plan, config.max_runs, merge=config.engine == "merge")
    if config.engine == "vector":
        return VectorCore(plan, config.max_runs)
    if config.engine == "backtrack":
        return BacktrackCore(plan, config.max_runs)
    if config.engine in ("postpone", "postpone-late"):
        collapsed = plan.output is OutputFormat.COLLAPSED
        early = config.engine == "postpone"
        return PostponeCore(plan, config.max_runs, collapsed=collapsed, early=early)
    raise ValueError(f"unknown engine {config.engine!r}")
