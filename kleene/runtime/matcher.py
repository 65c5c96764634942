"""The push-based matcher: admission, the NFA^b engine, negation and output.

``push`` feeds events (any supported batch form) and returns the matches that became
final; ``advance_to`` tells the matcher that no event before a time will come (a
watermark); ``flush`` ends the stream. All mutable state lives in one
:class:`MatcherState`, which ``snapshot`` saves as versioned plain data
(:mod:`kleene.runtime.snapshot`) and a new matcher of the same query resumes from.

Memory stays bounded by the window (SIGMOD 2008, section 5.3): expired runs are swept,
the shared buffer is pruned below the oldest live run, and negation candidates older
than the window are dropped. Two limits bound what no window bounds
(:mod:`kleene.runtime.limits`): ``max_runs`` the live state (:class:`RunLimitError`),
``max_matches`` the matches reported (:class:`MatchLimitError`). With an ``on_matches``
callback the matches are handed out in chunks as they are found instead of returned,
so a consumer that writes them needs memory for one chunk only.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from typing import Any

import numpy as np

from kleene.collapsed import SAFE, UNSAFE, CollapsedMatch, Result
from kleene.compiler.plan import NegatedEvent, Plan
from kleene.events import (
    MICROS,
    EventBatch,
    micros_to_datetime,
    read_batch,
    read_time,
)
from kleene.match import Match, RejectedEvent, late_reason
from kleene.runtime import snapshot
from kleene.runtime.config import MatcherConfig
from kleene.runtime.core import Completion, Core, Intermediate
from kleene.runtime.ingest import ReorderBuffer, Validator, window_size
from kleene.runtime.limits import match_limit, run_limit
from kleene.runtime.negation import NegationState, violated
from kleene.runtime.nfa.backtrack import BacktrackCore
from kleene.runtime.nfa.engine import NfaEngine
from kleene.runtime.output import NonOverlapState
from kleene.runtime.postpone import PostponeCore
from kleene.runtime.postpone.construct import Built, construct
from kleene.runtime.prefilter import Prefilter
from kleene.runtime.snapshot import Shapes, fail, fields_of, integer, mapping, number, sequence
from kleene.runtime.vector import VectorCore
from kleene.vocabulary import OutputFormat, Strategy

SWEEP_EVERY = 4096
NEVER = float("inf")
CHUNK = 1024  # matches per on_matches call


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

    # --- snapshots (kleene.runtime.snapshot) ------------------------------------------

    def to_data(self) -> Any:
        """Plain data. A match waiting for a trailing negation is also a non-overlap
        candidate (the same object), so found matches are written once, in a table."""
        table: dict[int, int] = {}
        found: list[Any] = []

        def ref(f: _Found) -> int:
            if id(f) not in table:
                table[id(f)] = len(found)
                found.append((f.partition, f.selections, f.vector))
            return table[id(f)]

        pending = [(deadline, seq, ref(f)) for deadline, seq, f in self.pending]
        return {
            "core": self.core.to_data(),
            "negation": self.negation.to_data(),
            "non_overlap": self.non_overlap.to_data(ref),
            "pending": pending,
            "found": found,
            "reorder": self.reorder.to_data(),
            "learned_kinds": self.learned_kinds,
            "time": (self.time_kind, self.tz, self.clock),
            "counters": (self.arrived, self.position, self.seq, self.since_sweep),
            "rejected": [(r.id, r.position, r.reason, dict(r.record)) for r in self.rejected],
            "rejected_count": self.rejected_count,
        }

    @classmethod
    def from_data(cls, data: Any, matcher: Matcher) -> MatcherState:
        """The state of :meth:`to_data`, checked against the matcher's plan."""
        fields = fields_of(
            data,
            "the matcher state",
            *("core", "negation", "non_overlap", "pending", "found", "reorder"),
            *("learned_kinds", "time", "counters", "rejected", "rejected_count"),
        )
        core, negation, non_overlap, pending, found, reorder = fields[:6]
        learned, time, counters, rejected, rejected_count = fields[6:]
        for group, kind in mapping(learned, "the learned kinds").items():
            integer(group, "a kind group", 0)
            if type(kind) is not str:
                fail("a learned kind")
        shapes = Shapes(matcher.plan, learned)
        st = cls(matcher.engine)
        st.core = type(st.core).from_data(core, shapes)
        st.negation = NegationState.from_data(negation, shapes)
        table = [matcher._found_from_data(f, shapes) for f in sequence(found, "found matches")]

        def payload(ref: Any) -> tuple[tuple[Any, ...], _Found]:
            f = table[integer(ref, "a found match", 0, len(table))]
            return f.order, f

        st.non_overlap = NonOverlapState.from_data(non_overlap, payload)
        for item in sequence(pending, "the pending matches"):
            deadline, seq, ref = sequence(item, "a pending match", tuple, 3)
            number(deadline, "a pending match's deadline")
            st.pending.append((deadline, integer(seq, "a sequence number", 0), payload(ref)[1]))
        st.pending.sort(key=lambda x: (x[0], x[1]))
        st.reorder = ReorderBuffer.from_data(reorder, shapes)
        st.learned_kinds = learned
        st.time_kind, st.tz, st.clock = sequence(time, "the stream time", tuple, 3)
        if st.time_kind not in (None, "number", "datetime"):
            fail("the stream's time kind")
        if st.tz is not None and not isinstance(st.tz, dt.tzinfo):
            fail("the stream's time zone")
        if st.clock is not None:
            number(st.clock, "the stream's clock")
        for c in sequence(counters, "the stream counters", tuple, 4):
            integer(c, "a stream counter", 0)
        st.arrived, st.position, st.seq, st.since_sweep = counters
        for item in sequence(rejected, "the rejected events"):
            event_id, position, reason, rec = sequence(item, "a rejected event", tuple, 4)
            if position is not None:
                integer(position, "a rejected event's position", 0)
            if type(reason) is not str:
                fail("a rejection reason")
            st.rejected.append(RejectedEvent(event_id, position, reason, mapping(rec, "a record")))
        st.rejected_count = integer(rejected_count, "the rejected count", len(st.rejected))
        return st


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

    def __init__(
        self,
        plan: Plan,
        config: MatcherConfig,
        state: bytes | None = None,
        on_matches: Callable[[list[Result]], object] | None = None,
    ) -> None:
        self.plan = plan
        self.config = config
        # with a callback, matches go to it in chunks as they are found (see _Output)
        self.on_matches = on_matches
        self.reported = 0  # matches reported since this matcher was created
        self.engine = make_core(plan, config)
        self.prefilter = Prefilter(plan)
        # the backtrack core's postponed runs may still complete matches before an
        # event that no state accepts, so every event has to reach it
        self.every_event = isinstance(self.engine, BacktrackCore)
        self.st = MatcherState(self.engine)
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
        self.time_returns = plan.return_times  # RETURN items given back as datetimes
        if state is not None:
            self.restore(snapshot.unseal(state, snapshot.QUERY, self.fingerprint))

    @cached_property
    def fingerprint(self) -> bytes:
        """What this matcher's state means (see :func:`kleene.runtime.snapshot.fingerprint`)."""
        return snapshot.fingerprint(self.plan, self.config)

    # --- public API ---------------------------------------------------------------

    def push(self, events: Any) -> list[Result]:
        """Feed events in time order; return the matches that became final (none when
        an ``on_matches`` callback takes them)."""
        batch = read_batch(events, self.config.fields, self.st.arrived)
        out = _Output(self)
        if len(batch):
            clean = self.validator.clean_types(batch)
            if batch.problems:
                self._push_each(batch, clean, out)
            elif self._vectorizable(batch, clean) and isinstance(self.engine, VectorCore):
                self.engine.push_batch(self, batch, clean, out)
            elif self._vectorizable(batch, clean):
                self.push_relevant(batch, clean, out)
            else:
                self._push_each(batch, clean, out)
        return out.finish()

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

    def push_relevant(self, batch: EventBatch, clean: set[str], out: list[Result]) -> None:
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
            mask = self.prefilter.relevant(batch, clean, self.window())
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
            reason = batch.problems.get(j) or self._time_problem(kinds[j])
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
        out = _Output(self)
        internal = self._time_in(time)
        for ready, useful in self.st.reorder.release(internal):
            self._process(ready, out) if useful else self._pass(ready, out)
        if self.st.clock is None or internal > self.st.clock:
            self.st.clock = internal
        self._decide_pending(internal, out)
        self._sweep(internal)
        return out.finish()

    def flush(self) -> list[Result]:
        """End of stream: every held event is processed and every match decided."""
        out = _Output(self)
        for ready, useful in self.st.reorder.release(None):
            self._process(ready, out) if useful else self._pass(ready, out)
        held = self.engine.flush(self.st.core, self.window())
        self._complete(held, self.st.clock, out)
        self._decide_pending(NEVER, out, everything=True)
        return out.finish()

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
        """The matcher's whole state in the snapshot format (docs/architecture.md);
        ``Query.matcher(state=...)`` of the same query resumes from it."""
        return snapshot.seal(snapshot.QUERY, self.fingerprint, self.st.to_data())

    def restore(self, data: Any) -> None:
        """Take over the state of :meth:`MatcherState.to_data` (SnapshotError when it
        does not fit this matcher's plan)."""
        with snapshot.loading():
            self.st = MatcherState.from_data(data, self)
        self.validator = Validator(self.plan, self.st.learned_kinds)

    def _found_from_data(self, data: Any, shapes: Shapes) -> _Found:
        """A found match of :meth:`MatcherState.to_data`; its order and bounds are
        derived again from its selections."""
        part, selections, vector = sequence(data, "a found match", tuple, 3)
        snapshot.partition_key(part)
        for s in sequence(selections, "a match's selections"):
            shapes.selection(s)
        if not selections:
            fail("a match without selections")
        return self._found(Completion(part, selections, shapes.vector(vector)))

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

    def window(self) -> float | None:
        """The WITHIN size in the stream's time units: a window with a unit is in
        seconds, converted for datetimes (microseconds) and for numeric times by the
        configured ``time_unit``; a window without a unit is in timestamp units
        (seconds for datetimes)."""
        return window_size(self.plan, self.st.time_kind, self.config.time_unit)

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
            return late_reason(self.time_out(t), self.time_out(seen), lateness)
        return late_reason(self.time_out(t), self.time_out(horizon))

    def _lateness(self) -> float:
        return self.config.allowed_lateness * self._scale()

    def _time_in(self, value: Any) -> Any:
        internal, _kind = read_time(value)
        if internal is None:
            raise TypeError(f"cannot use {value!r} as a time")
        return internal

    def time_out(self, value: Any) -> Any:
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
        window = self.window()
        if st.pending and st.pending[0][0] < t:
            self._decide_pending(t, out)
        st.since_sweep += 1
        if st.since_sweep >= SWEEP_EVERY:
            self._sweep(t)
        etype = e[0]
        partition = self._partition(e)
        if partition is not None:
            completions = self.engine.process(st.core, e, position, partition, window)
            if self.collapsed:
                out.extend(
                    self._collapse(c.partition, c.items, t)
                    for c in completions
                    if isinstance(c, Intermediate)
                )
            else:
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
        if any(v is None or not _hashable(v) for v in key):
            return None  # no run's key can equal a missing or unusable value
        return key

    def _complete(self, completions: Iterable[Completion], t: Any, out: list[Result]) -> None:
        st = self.st
        if not (self.inner or self.trailing or self.non_overlap):
            out.extend(map(self._match, completions))  # nothing to decide first
            return
        window = self.window()
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
                if len(st.pending) > self.config.max_runs:
                    raise run_limit(self.config.max_runs, "matches waiting for a trailing negation")
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
        window = self.window()
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
        window = self.window()
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
        plan, limit = self.plan, self.config.max_matches

        def expand() -> list[Match]:
            found = construct(plan.states, items, plan.initial_vector, limit, partition)
            return [self._match(b) for b in found]

        return CollapsedMatch(
            singles=singles,
            candidates=candidates,
            first_fixed=frozenset(first_fixed),
            last_fixed=frozenset(last_fixed),
            start=self.time_out(min(times)),
            end=self.time_out(end),
            partition=partition[: plan.partition_width],
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
                    self.time_out(v) if is_time and v is not None else v
                    for v, is_time in zip(values, self.time_returns, strict=True)
                )
            returned = dict(zip(plan.return_names, values, strict=True))
        if self.st.time_kind == "datetime":
            start, end = self.time_out(start), self.time_out(end)
        # a run's key may be a hash key that starts with the partition (choose_key)
        partition = found.partition[: plan.partition_width]
        return Match.of(variables, where, start, end, partition, returned)


class _Output(list[Result]):
    """The matches one call (push, advance_to, flush) reports, counted against
    ``max_matches`` as they come and, with an ``on_matches`` callback, handed to it in
    chunks of :data:`CHUNK`. On the limit the matches before it are handed out first,
    then :class:`MatchLimitError` is raised. Iterators given to ``extend`` are consumed
    only as far as needed, so a core's lazy result construction stops at the limit."""

    __slots__ = ("limit", "matcher", "sink")

    def __init__(self, matcher: Matcher) -> None:
        super().__init__()
        self.matcher = matcher
        self.limit = matcher.config.max_matches
        self.sink = matcher.on_matches

    def append(self, match: Result) -> None:
        super().append(match)
        self._counted(1)

    def extend(self, matches: Iterable[Result]) -> None:
        items = iter(matches)
        while True:
            part = list(islice(items, self._room()))
            if not part:
                return
            super().extend(part)
            self._counted(len(part))

    def __iadd__(self, matches: Iterable[Result]) -> _Output:  # type: ignore[override,misc]
        self.extend(matches)
        return self

    def _room(self) -> int:
        """How many matches may come before the next check (one past the limit)."""
        room = CHUNK - len(self) if self.sink is not None else 1 << 62
        if self.limit is not None:
            room = min(room, self.limit + 1 - self.matcher.reported)
        return max(room, 1)

    def _counted(self, n: int) -> None:
        m = self.matcher
        m.reported += n
        if self.limit is not None and m.reported > self.limit:
            del self[len(self) - (m.reported - self.limit) :]
            m.reported = self.limit
            self._drain()
            raise match_limit(self.limit)
        if self.sink is not None and len(self) >= CHUNK:
            self._drain()

    def _drain(self) -> None:
        if self.sink is not None and len(self):
            chunk = list(self)
            self.clear()
            self.sink(chunk)

    def finish(self) -> list[Result]:
        """The call's matches (none left when a callback took them)."""
        self._drain()
        return list(self)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


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
