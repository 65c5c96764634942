"""The vectorized core: whole batches under contiguity, carried tails between them.

``evaluate`` takes a clean, ordered batch at once (admission has checked it): the
carried tail of every partition and the batch form a :class:`Frame`, the edge columns
are computed with numpy, the matches enumerated by :func:`search`, and only the matches
that end in the batch are built as Python objects. What stays alive (runs that later
events may extend) is carried, as event tuples, from the earliest alive run's first
event to its partition's last event.

Batches that need per-event admission, and small batches (a stream pushed a few events
at a time, where numpy's fixed costs would dominate), go event by event through the
basic NFA^b engine (SIGMOD 2008, section 5.2.1): entering this *stream mode* replays the
carried tails into it (their matches were reported already), and each partition keeps
its events since its oldest live run, so that the next large batch can leave it again.

``max_runs`` caps the runs of stream mode (:class:`RunLimitError`). Whole-batch
evaluation holds one array entry per partial match of the batch: a batch that would
hold more than ``max_runs`` of them goes through stream mode instead, so the limit means
the same as for the other cores. Only as many matches as ``max_matches`` still allows
are built.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import numpy as np

from kleene.compiler import codegen
from kleene.compiler.plan import Plan
from kleene.events import EVENT_TIME, EventBatch
from kleene.match import Match
from kleene.runtime.core import Admitted, Completion, Context, Evaluated, EventCore
from kleene.runtime.nfa.engine import NfaEngine, NfaState, run_start_position
from kleene.runtime.snapshot import (
    Shapes,
    fail,
    fields_of,
    integer,
    mapping,
    partition_key,
    sequence,
)
from kleene.runtime.vector.frame import Carried, Frame
from kleene.runtime.vector.masks import compute
from kleene.runtime.vector.search import Found, TooMany, search
from kleene.vocabulary import OutputFormat

SMALL = 64  # batches of fewer events go event by event (stream mode)


class VectorState:
    """Per partition, the events of runs still alive; in stream mode also the NFA^b
    engine's runs (picklable)."""

    def __init__(self) -> None:
        self.carry: dict[tuple[Any, ...], list[Carried]] = {}
        self.live = 0
        self.nfa: NfaState | None = None

    # --- snapshots (kleene.runtime.snapshot) ------------------------------------------

    def to_data(self) -> Any:
        nfa = None if self.nfa is None else self.nfa.to_data()
        return {"carry": self.carry, "live": self.live, "nfa": nfa}

    @classmethod
    def from_data(cls, data: Any, shapes: Shapes) -> VectorState:
        carry, live, nfa = fields_of(data, "the carried rows", "carry", "live", "nfa")
        st = cls()
        for key, tail in mapping(carry, "the carried rows").items():
            partition_key(key)
            for item in sequence(tail, "a partition's carried rows"):
                position, e = sequence(item, "a carried row", tuple, 2)
                integer(position, "a carried row's position", 0)
                shapes.event(e)
            if not tail:
                fail("an empty carried tail")
        st.carry = carry
        st.live = integer(live, "the carried run count", 0)
        st.nfa = None if nfa is None else NfaState.from_data(nfa, shapes)
        return st


class VectorCore(EventCore):
    """Evaluates plans whose shape is vectorizable (``plan.shape``, see
    :mod:`kleene.compiler.shape`); no state of its own."""

    def __init__(self, plan: Plan, max_runs: int) -> None:
        super().__init__(plan)
        self.plan = plan
        self.shape = plan.shape
        assert self.shape.vectorizable, self.shape.declined
        self.kleene = [c.kleene for c in self.shape.components]
        self.vars = [c.var for c in self.shape.components]
        self.max_runs = max_runs
        self.nfa = NfaEngine(plan, max_runs)  # stream mode
        self.small = SMALL
        self.make = _maker(self.vars)

    def new_state(self) -> VectorState:
        return VectorState()

    def live_runs(self, st: VectorState) -> int:
        return st.live if st.nfa is None else self.nfa.live_runs(st.nfa)

    def _search(self, frame: Frame, window: float | None) -> Found:
        masks = compute(frame, self.shape, self.plan)
        return search(frame, masks, self.kleene, window, self.max_runs)

    # --- stream mode: one event at a time ------------------------------------------------

    def process(
        self,
        st: VectorState,
        e: tuple[Any, ...],
        position: int,
        partition: tuple[Any, ...],
        window: float | None,
    ) -> list[Completion] | Iterator[Completion]:
        if st.nfa is None:
            st.nfa = self._replay(st, window)
        tail = st.carry.setdefault(partition, [])
        tail.append((position, e))
        completions = self.nfa.process(st.nfa, e, position, partition, window)
        self._trim(st, st.nfa, partition)
        return completions

    def _replay(self, st: VectorState, window: float | None) -> NfaState:
        """Enter stream mode: the carried events rebuild the runs that are alive."""
        nfa = self.nfa.new_state()
        for partition, tail in st.carry.items():
            for position, e in tail:
                self.nfa.process(nfa, e, position, partition, window)  # reported before
        return nfa

    @staticmethod
    def _trim(st: VectorState, nfa: NfaState, partition: tuple[Any, ...]) -> None:
        """Keep a partition's events from its oldest live run on."""
        runs = nfa.partitions.get(partition)
        if not runs:
            st.carry.pop(partition, None)
            return
        oldest = min(map(run_start_position, runs))
        tail = st.carry[partition]
        first_position, _e = tail[0]
        if first_position < oldest:
            st.carry[partition] = [(p, e) for p, e in tail if p >= oldest]

    def sweep(self, st: VectorState, now: Any, window: float | None) -> None:
        if st.nfa is not None:
            self.nfa.sweep(st.nfa, now, window)
            for partition in list(st.carry):
                self._trim(st, st.nfa, partition)
        elif window is not None:
            for partition in list(st.carry):
                tail = [(p, e) for p, e in st.carry[partition] if now - e[EVENT_TIME] <= window]
                if tail:
                    st.carry[partition] = tail
                else:
                    del st.carry[partition]

    def drop_partition(self, st: VectorState, partition: tuple[Any, ...]) -> None:
        st.carry.pop(partition, None)
        if st.nfa is not None:
            self.nfa.drop_partition(st.nfa, partition)

    def flush(self, st: VectorState, window: float | None) -> list[Completion]:
        return []  # every match is reported at its last event

    # --- the batch protocol ---------------------------------------------------------------

    def evaluate(self, st: VectorState, admitted: Admitted, ctx: Context) -> Iterator[Evaluated]:
        """A clean batch of at least :data:`SMALL` events as a whole; any other events
        one by one, in stream mode."""
        batch = admitted.batch
        if batch is None or len(batch) < self.small:
            return self.each_event(st, admitted.events(), ctx)
        if st.nfa is not None:  # leave stream mode: the carry is what its runs need
            for partition in list(st.carry):
                self._trim(st, st.nfa, partition)
            st.nfa = None
        collecting = gc.isenabled()
        gc.disable()  # many small objects, none cyclic: spare the collector's passes
        try:
            matches = self._whole(st, batch, admitted.base, ctx)
        except TooMany:  # nothing changed yet: evaluate the batch event by event
            return self.each_event(st, admitted.events(), ctx)
        finally:
            if collecting:
                gc.enable()
        return iter([(batch.last_time(), admitted.base + len(batch) - 1, None, None, matches)])

    def _whole(self, st: VectorState, batch: EventBatch, base: int, ctx: Context) -> list[Match]:
        """The matches that end in the batch; the runs alive at its end are carried."""
        carried = [c for tail in st.carry.values() for c in tail]
        frame = Frame(self.plan, carried, batch, base=base)
        found = self._search(frame, ctx.window())
        self._keep(st, frame, found)
        new = np.flatnonzero(frame.is_new[found.end])
        if self.plan.output is OutputFormat.NON_OVERLAP:
            new = self._non_overlap(ctx.last_end, frame, found, new)
        return self._matches(ctx, frame, found, new)

    def _keep(self, st: VectorState, frame: Frame, found: Found) -> None:
        """Carry each partition's rows from its earliest alive run on."""
        st.live = len(found.alive)
        st.carry = {}
        if not len(found.alive):
            return
        seg = frame.seg[found.alive]
        first = np.full(int(frame.seg.max()) + 1, frame.n, dtype=np.int64)
        np.minimum.at(first, seg, found.alive)
        first = first[first < frame.n]
        last = frame.seg_end[first] + 1
        rows = np.concatenate([np.arange(a, b) for a, b in zip(first, last, strict=True)])
        events = frame.tuples(frame.src[rows])
        kept = list(zip(frame.pos[rows].tolist(), events, strict=True))
        at = 0
        for a, b in zip(first.tolist(), last.tolist(), strict=True):
            st.carry[frame.partition(a)] = kept[at : at + b - a]
            at += b - a

    def _non_overlap(
        self, last_end: dict[tuple[Any, ...], int], frame: Frame, found: Found, new: np.ndarray
    ) -> np.ndarray:
        """The non-overlap selection (SIGMOD 2008, section 2) among the new matches:
        per partition, in order of (end, start, component lengths), each match that
        starts after the last one selected. The next selectable match after one ending
        at e is the first whose start exceeds e; since no match before it in this order
        can start after e, a running maximum of the starts finds it by bisection."""
        if not len(new):
            return new
        lengths = [x[new] - f[new] for f, x in zip(found.first, found.last, strict=True)]
        keys = (*reversed(lengths), found.start[new], found.end[new], frame.seg[found.start[new]])
        order = new[np.lexsort(keys)]
        starts, ends = frame.pos[found.start[order]], frame.pos[found.end[order]]
        seg = frame.seg[found.end[order]]
        big = int(frame.pos.max()) + 2
        reach = np.maximum.accumulate(seg * big + starts)  # increasing along ``order``
        jump = np.searchsorted(reach, seg * big + ends, side="right").tolist()
        seg_list, ends_list = seg.tolist(), ends.tolist()
        parts: dict[int, tuple[Any, ...]] = {}
        chosen = []
        i, n = 0, len(order)
        while i < n:
            g = seg_list[i]
            part = parts.get(g)
            if part is None:  # entering a partition: skip what its last output overlaps
                part = parts[g] = frame.partition(int(found.end[order[i]]))
                i = int(np.searchsorted(reach, g * big + last_end.get(part, -1), side="right"))
                if i >= n or seg_list[i] != g:
                    continue
            chosen.append(i)
            last_end[part] = ends_list[i]
            i = jump[i]
        return order[np.asarray(chosen, dtype=np.int64)]

    def _matches(self, ctx: Context, frame: Frame, found: Found, chosen: np.ndarray) -> list[Match]:
        if not len(chosen):
            return []
        chosen = chosen[np.lexsort((found.start[chosen], found.end[chosen]))]
        if ctx.room is not None:  # build no more than the output can take (one past)
            chosen = chosen[: ctx.room]
        start, end = found.start[chosen], found.end[chosen]
        cover = np.zeros(frame.n + 1, dtype=np.int64)
        np.add.at(cover, start, 1)
        np.add.at(cover, end + 1, -1)
        inside = np.cumsum(cover[:-1]) > 0
        needed = np.flatnonzero(inside)
        at = np.cumsum(inside) - 1  # row -> index into the lists below
        ids = frame.values("id", frame.src[needed])
        positions = frame.pos[needed].tolist()
        starts = frame.values("timestamp", frame.src[start])
        ends = frame.values("timestamp", frame.src[end])
        starts, ends = list(map(ctx.time_out, starts)), list(map(ctx.time_out, ends))
        segs = frame.seg[end].tolist()
        parts: dict[int, tuple[Any, ...]] = {}
        for g, row in zip(segs, end.tolist(), strict=True):
            if g not in parts:
                parts[g] = frame.partition(row)
        partitions = [parts[g] for g in segs]
        per_var_ids, per_var_pos = [], []
        for comp, f, x in zip(self.shape.components, found.first, found.last, strict=True):
            lo = at[f[chosen]].tolist()
            if comp.kleene:
                hi = (at[x[chosen]] + 1).tolist()
                per_var_ids.append([tuple(ids[a:b]) for a, b in zip(lo, hi, strict=True)])
                per_var_pos.append([tuple(positions[a:b]) for a, b in zip(lo, hi, strict=True)])
            else:
                per_var_ids.append([(ids[a],) for a in lo])
                per_var_pos.append([(positions[a],) for a in lo])
        returned: list[dict[str, Any]] = [{}] * len(chosen)
        if self.plan.returns is not None:
            events = frame.tuples(frame.src[needed])
            returned = self._returns(events, at, found, chosen)
        columns = [c for pair in zip(per_var_ids, per_var_pos, strict=True) for c in pair]
        return list(map(self.make, *columns, starts, ends, partitions, returned))

    def _returns(
        self, events: list[tuple[Any, ...]], at: np.ndarray, found: Found, chosen: np.ndarray
    ) -> list[dict[str, Any]]:
        """RETURN values, from each match's replayed computation-state vector."""
        assert self.plan.returns is not None
        returns, names = self.plan.returns, self.plan.return_names
        bounds = [
            (at[f[chosen]].tolist(), (at[x[chosen]] + 1).tolist())
            for f, x in zip(found.first, found.last, strict=True)
        ]
        out = []
        for m in range(len(chosen)):
            elems = [events[lo[m] : hi[m]] for lo, hi in bounds]
            out.append(dict(zip(names, returns(self._vector(elems)), strict=True)))
        return out

    # --- replay -------------------------------------------------------------------------

    def _state(self, j: int, k: int) -> int:
        comp = self.shape.components[j]
        if k and comp.rest_state is not None:
            return comp.rest_state
        return comp.first_state

    def _vector(self, elems: list[list[tuple[Any, ...]]]) -> tuple[Any, ...]:
        """The computation-state vector of a match, by replaying its edges (SIGMOD
        2008, section 5.2.1); RETURN reads it."""
        if self.plan.returns is None:
            return self.plan.initial_vector
        vector: tuple[Any, ...] | None = self.plan.initial_vector
        states = self.plan.states
        for j, events in enumerate(elems):
            for k, e in enumerate(events):
                assert vector is not None
                vector = states[self._state(j, k)].edge(e, vector)
        assert vector is not None, "a vectorized match failed its own edges"
        return vector


def _maker(names: list[str]) -> Any:
    """A function building a Match from per-variable ids and positions, with dict
    displays and without the frozen dataclass's per-field ``object.__setattr__``."""
    args = ", ".join(f"i{k}, p{k}" for k in range(len(names)))
    ids = ", ".join(f"{v!r}: i{k}" for k, v in enumerate(names))
    pos = ", ".join(f"{v!r}: p{k}" for k, v in enumerate(names))
    source = (
        f"def make({args}, start, end, partition, returned):\n"
        "    m = new(Match)\n"
        "    d = m.__dict__\n"
        f"    d['variables'] = {{{ids}}}\n"
        f"    d['positions'] = {{{pos}}}\n"
        "    d['start'] = start\n"
        "    d['end'] = end\n"
        "    d['partition'] = partition\n"
        "    d['returned'] = returned\n"
        "    return m\n"
    )
    return codegen.build(source, "make", {"new": object.__new__, "Match": Match})
