"""The automaton-based SES matcher (match-window paper, sections 3 and 5; the SES
automaton of its reference [5]).

The pattern ``(⟨B1, ..., Bk⟩, Θ, τ)`` becomes an automaton whose states are pairs
``(i, S)``: the set ``Bi`` being matched and the subset ``S ⊆ Bi`` of its variables bound
so far. Reading an event ``e`` (in time order), an instance may

* bind ``e`` to a variable ``v ∈ Bi \\ S`` (to ``(i, S ∪ {v})``),
* bind ``e`` to a ``v+ ∈ S`` once more (a loop: ``e`` follows v's last event, so
  ``prev(v.A) φ v.A`` is checked between them),
* when ``S = Bi``, bind ``e`` to a variable of ``Bi+1`` (to ``(i+1, {v})``) if ``e`` comes
  strictly after (in time) every event bound in ``Bi`` (Definition 2, condition 2),
* or ignore ``e``.

Every binding checks ``e`` against the properties of ``v`` and against each relationship
of ``v`` with the events already bound to the other variable (so every pair of
Definition 2, condition 1 is checked once, when its later event is read). An instance in
``(k, Bk)`` is a match: it is reported when it gets there by binding an event, so each
substitution is reported once. All events lie within τ of the first (condition 3).

**Selection while matching** (output earliest and/or maximal). An instance that skips
an event ``e`` it could bind to a variable ``v`` of its current set keeps ``(v, e)`` as a
*witness*: if ``v`` is unbound, every match it completes could bind ``⟨e⟩`` to ``v``
instead, an earlier start; if ``v+`` is bound, every match could take ``e`` into ``v``'s
sequence, a longer one. Either holds unless a later binding breaks it: a relationship
of ``v`` with the later event, the strict order against the next set (a tie in time),
or, for ``v+``, ``prev`` with ``v``'s next event. Each later binding re-tests the
witnesses its instance carries (dropping broken ones); once no variable the instance
may still bind can break a witness, no match it completes is selected and the instance
is dropped. The matches found are then tested one by one against their witnesses
(:class:`~kleene.eventsets.selection.WindowSelection`), so the output is exact
whatever was pruned.

**Depth first, lazily.** The instances form a tree (each event read splits an
instance into the one skipping it and those binding it). The paper's automaton runs
all instances event by event, breadth first, which holds every partial match of the
window at once: 2^n of them for ``{A+ a, B+ b}`` over n events. Here the tree is walked
depth first, the bindings of an event before its skip, so only the instances on the
path and their pending siblings are held (at most one per variable and event of the
window, bounded by ``max_runs``: more raise RunLimitError), and the matches come out
one at a time in order of their positions (:meth:`AutomatonMatcher.each`), so a
consumer that stops at ``max_matches`` stops the search. Every instance the breadth-
first run builds is built once, with the same pruning, so the matches are the same.

:meth:`AutomatonMatcher.matches` is algorithm A of Definition 4: the matches that start
at the first event of a match window. :meth:`AutomatonMatcher.run_all` slides the
window over a whole stream (no pre-processing).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from kleene.eventsets.compile import TIME, Row
from kleene.eventsets.model import SesMatch, SesPattern
from kleene.eventsets.selection import CompiledPattern, WindowSelection, check_output
from kleene.runtime.limits import DEFAULT_MAX_RUNS, run_limit

Bindings = tuple[tuple[int, ...], ...]


class _Witness(NamedTuple):
    """Event ``k`` (at ``time``) that an instance skipped although it could bind it to
    variable ``var``: unbound then (``longer`` False: an earlier start) or a bound
    ``v+`` (``longer``: one more event); ``open`` while v's next event after it, which
    ``prev`` must accept, is still to come."""

    var: int
    k: int
    time: int | float
    longer: bool
    open: bool


class _Instance(NamedTuple):
    """One automaton instance: state ``(set_index, bound)`` (``bound`` a bit per
    variable) and its bindings (indices into the window, per variable); ``last`` is the
    time of the latest event bound; ``witnesses`` see the module docstring."""

    set_index: int
    bound: int
    bindings: Bindings
    last: int | float
    witnesses: tuple[_Witness, ...] = ()
    deadline: int = 0


class _Need:
    """What the variables still unbound need of a window's rest (a necessary
    condition, so dropping an instance that fails it loses no match): every variable of
    a match binds at least one event of its own, distinct from the others' events, that
    satisfies its properties. For a set ``U`` of unbound variables, ``deadline(U)`` is
    the last window index from which enough such events remain, counted per class of
    variables fitting the same events and for ``U`` as a whole (Hall's condition on
    those subsets); -1 when none is. An instance is dropped once it reads past its
    deadline."""

    def __init__(self, fitting: Sequence[tuple[int, ...]], reach: int) -> None:
        self.reach = reach
        self.masks = [sum(1 << v for v in fitting[k]) for k in range(reach)]
        positions: dict[int, list[int]] = {}
        for k in range(reach):
            for v in fitting[k]:
                positions.setdefault(v, []).append(k)
        classes: dict[tuple[int, ...], int] = {}
        for v, at in positions.items():
            classes[tuple(at)] = classes.get(tuple(at), 0) | 1 << v
        self.fitted = sum(1 << v for v in positions)
        self.classes = [(at, members) for at, members in classes.items()]
        self._cache: dict[int, int] = {}

    def deadline(self, unbound: int) -> int:
        hit = self._cache.get(unbound)
        if hit is None:
            hit = self._cache[unbound] = self._deadline(unbound)
        return hit

    def _deadline(self, unbound: int) -> int:
        if not unbound:
            return self.reach
        if unbound & ~self.fitted:
            return -1  # a variable no event of the window fits
        last = self.reach
        for at, members in self.classes:
            need = (unbound & members).bit_count()
            if need > len(at):
                return -1
            if need:
                last = min(last, at[-need])
        union = [k for k, mask in enumerate(self.masks) if mask & unbound]
        need = unbound.bit_count()
        return -1 if need > len(union) else min(last, union[-need])


class AutomatonMatcher:
    """Matches an SES pattern by the automaton above. ``output``: "all", "earliest",
    "maximal" or "earliest-maximal" (docs/semantics.md, "Event-set patterns")."""

    def __init__(
        self, pattern: SesPattern, output: str = "all", max_runs: int = DEFAULT_MAX_RUNS
    ) -> None:
        self.pattern = pattern
        self.output = check_output(output)
        self.max_runs = max_runs  # instances held while searching one window
        p = self.p = CompiledPattern(pattern)
        m = len(p.names)
        self.selection = WindowSelection(p, self.output)
        self.sets = tuple(
            sum(1 << i for i in range(m) if p.set_of[i] == s) for s in range(len(pattern.sets))
        )
        self._plus = sum(1 << i for i in range(m) if p.plus[i])
        self._later = tuple(sum(self.sets[s + 1 :]) for s in range(len(self.sets)))
        self._all = (1 << m) - 1
        #: per variable: the variables it has a relationship with, those of the next set
        self._related = tuple(
            sum(1 << u for u in {u for u, _, _ in p.relations[v]}) for v in range(m)
        )
        self._next = tuple(
            self.sets[p.set_of[v] + 1] if p.set_of[v] + 1 < len(self.sets) else 0 for v in range(m)
        )
        #: tests of v's relationships with u, by (v, u)
        self._pairs = {
            (v, u): tuple((t, left) for w, t, left in p.relations[v] if w == u)
            for v in range(m)
            for u in range(m)
        }
        self._earlier = self.selection.earliest
        self._longer = self.selection.maximal
        # the variables whose properties an event satisfies, by stream position (an
        # event is in several windows); each entry keeps its row, to know it is the same
        self._fits: dict[int, tuple[Row, tuple[int, ...]]] = {}
        #: the same, taken from the pre-processing's bit vectors (take_fits)
        self._given: dict[int, tuple[Row, tuple[int, ...]]] = {}
        #: instances built for the last window (what selection while matching saves)
        self.built = 0

    # --- algorithm A -----------------------------------------------------------------

    def matches(self, events: Sequence[Row], positions: Sequence[int]) -> list[SesMatch]:
        """The matches (of the chosen output) whose earliest event is ``events[0]``;
        ``events`` in time order, ``positions`` their stream positions."""
        return list(self.each(events, positions))

    def each(self, events: Sequence[Row], positions: Sequence[int]) -> Iterator[SesMatch]:
        """:meth:`matches` one at a time, as they are found (in order of their
        positions): a consumer that stops stops the search."""
        if not events:
            return
        fitting = self._fitting(events, positions)
        found = self.selection.each(events, self._all_from_first(events, fitting), fitting)
        names = self.p.names
        for b in found:
            yield SesMatch(
                {n: tuple(positions[k] for k in seq) for n, seq in zip(names, b, strict=True)}
            )

    def run_all(self, events: Sequence[Row]) -> list[SesMatch]:
        """Every match over a whole stream in time order (positions are indices): the
        match window of each event in turn (Definition 3)."""
        out: list[SesMatch] = []
        end = 0
        for start, first in enumerate(events):
            end = max(end, start)
            while end < len(events) and events[end][TIME] - first[TIME] <= self.pattern.window:
                end += 1
            out += self.matches(events[start:end], range(start, end))
        return out

    def take_fits(
        self, events: Sequence[Row], positions: Sequence[int], bits: Sequence[int]
    ) -> None:
        """The variables each event's properties fit, from its bit vector ``ē`` as the
        pre-processing computed it (match-windows paper, Example 13: ``v_1`` the
        highest bit), kept for the windows A is called on next instead of testing the
        properties again (:meth:`_fitting` keeps what it tests the same way)."""
        m = len(self.p.names)
        decoded: dict[int, tuple[int, ...]] = {}
        given = self._given = {}
        for row, p, b in zip(events, positions, bits, strict=True):
            fit = decoded.get(b)
            if fit is None:
                fit = decoded[b] = tuple(v for v in range(m) if b >> (m - 1 - v) & 1)
            given[p] = (row, fit)

    # --- the automaton ----------------------------------------------------------------

    def _fitting(self, events: Sequence[Row], positions: Sequence[int]) -> list[tuple[int, ...]]:
        """Per event of the window, the variables whose properties it satisfies."""
        if self._given:  # taken from the bit vectors, where every event has them
            hits = [self._given.get(p) for p in positions]
            if all(h is not None and h[0] is row for h, row in zip(hits, events, strict=True)):
                return [h[1] for h in hits if h is not None]
        cache = self._fits
        if len(cache) > 4 * len(events) + 1024:  # drop what earlier windows left behind
            for p in [p for p in cache if p < positions[0]]:
                del cache[p]
        tests = self.p.tests
        out = []
        for row, p in zip(events, positions, strict=True):
            hit = cache.get(p)
            if hit is None or hit[0] is not row:
                hit = cache[p] = (row, tuple(v for v, test in enumerate(tests) if test(row)))
            out.append(hit[1])
        return out

    def _all_from_first(
        self, events: Sequence[Row], fitting: list[tuple[int, ...]]
    ) -> Iterator[Bindings]:
        """The matches starting at ``events[0]``, depth first (see the module
        docstring): in order of their positions, as they are found."""
        first_time = events[0][TIME]
        reach = len(events)  # the events within τ of the first
        for k, row in enumerate(events):
            if row[TIME] - first_time > self.pattern.window:
                reach = k
                break
        need = _Need(fitting, reach)
        self.built = 0
        start = need.deadline(self._all)
        if start < 0 or not fitting[0]:
            return  # not enough events for the variables: no instance can complete
        # the next event from k on that fits a variable (reach if none): an instance
        # only passes over the events between, and would be dropped at k if at those
        nxt = [reach] * (reach + 1)
        for k in range(reach - 1, -1, -1):
            nxt[k] = k if fitting[k] else nxt[k + 1]
        empty: Bindings = tuple(() for _ in self.p.names)
        root = _Instance(0, 0, empty, first_time, (), start)
        prune = self._earlier or self._longer
        limit = self.max_runs
        # (instance, the next event it reads, whether it is a match): an instance's
        # bindings are pushed after its skipping self, so they are read first
        stack: list[tuple[_Instance, int, bool]] = []
        self.built += self._step(root, 0, events, fitting[0], need, stack)
        stack.pop(0)  # the first event is bound: every match starts there
        while stack:
            inst, k, complete = stack.pop()
            if complete:
                yield inst.bindings
            k = nxt[k]
            if k >= reach or inst.deadline < k:
                continue
            if prune and inst.witnesses and self._settled(inst, events[k][TIME]):
                continue
            self.built += self._step(inst, k, events, fitting[k], need, stack)
            if len(stack) > limit:
                raise run_limit(limit, "partial matches of one match window")

    def _step(
        self,
        inst: _Instance,
        k: int,
        events: Sequence[Row],
        fits: tuple[int, ...],
        need: _Need,
        stack: list[tuple[_Instance, int, bool]],
    ) -> int:
        """Reads event ``k`` in ``inst``: pushes ``inst`` having skipped it, then the
        instances binding it (in variable order, to be read first to last, each marked
        when it is a match); returns how many bind it."""
        skipped: list[_Witness] = []
        last_set = len(self.sets) - 1
        accepting, set_of = self.sets[last_set], self.p.set_of
        prune = self._earlier or self._longer
        row = events[k]
        grown: list[tuple[_Instance, int, bool]] = []
        for v in fits:
            nxt = self._bind(inst, v, k, row, events, need)
            if nxt is None:
                continue
            grown.append((nxt, k + 1, nxt.set_index == last_set and nxt.bound == accepting))
            if prune and set_of[v] == inst.set_index:
                longer = bool(inst.bound >> v & 1)
                if self._longer if longer else self._earlier:
                    skipped.append(_Witness(v, k, row[TIME], longer, True))
        if skipped:
            inst = inst._replace(witnesses=inst.witnesses + tuple(skipped))
        stack.append((inst, k + 1, False))
        stack.extend(reversed(grown))
        return len(grown)

    def _bind(
        self, inst: _Instance, v: int, k: int, row: Row, events: Sequence[Row], need: _Need
    ) -> _Instance | None:
        """The instance after binding event ``k`` to ``v``, or None when no transition
        allows it."""
        p = self.p
        bit = 1 << v
        set_index = p.set_of[v]
        if set_index == inst.set_index:
            if inst.bound & bit and not p.plus[v]:
                return None
            bound = inst.bound | bit
        elif set_index == inst.set_index + 1 and inst.bound == self.sets[inst.set_index]:
            if not row[TIME] > inst.last:
                return None
            bound = bit
        else:
            return None
        if bound == inst.bound:
            deadline = inst.deadline  # one more event of a v+: nothing newly bound
        else:
            deadline = need.deadline((self.sets[set_index] ^ bound) | self._later[set_index])
            if deadline <= k:
                return None  # too few events left for the variables still unbound
        own = inst.bindings[v]
        if own:
            before = events[own[-1]]
            for prev in p.prevs[v]:
                if not prev(before, row):
                    return None
        for other, test, left in p.relations[v]:
            for j in inst.bindings[other]:
                if not (test(row, events[j]) if left else test(events[j], row)):
                    return None
        bindings = (*inst.bindings[:v], (*own, k), *inst.bindings[v + 1 :])
        witnesses = self._carry(inst.witnesses, v, row, events) if inst.witnesses else ()
        return _Instance(set_index, bound, bindings, row[TIME], witnesses, deadline)

    # --- selection while matching -----------------------------------------------------

    def _carry(
        self, witnesses: tuple[_Witness, ...], u: int, row: Row, events: Sequence[Row]
    ) -> tuple[_Witness, ...]:
        """The witnesses that still hold after binding ``row`` to variable ``u``."""
        p = self.p
        kept = []
        for w in witnesses:
            e = events[w.k]
            if u == w.var:
                if w.longer and w.open:
                    if not all(test(e, row) for test in p.prevs[u]):
                        continue  # e before row in v's sequence breaks prev
                    w = w._replace(open=False)
            else:
                if p.set_of[u] == p.set_of[w.var] + 1 and not w.time < row[TIME]:
                    continue
                pairs = self._pairs[w.var, u]
                if pairs and not all(
                    test(e, row) if left else test(row, e) for test, left in pairs
                ):
                    continue
            kept.append(w)
        return tuple(kept)

    def _settled(self, inst: _Instance, time: int | float) -> bool:
        """Whether a witness of ``inst`` holds whatever it binds from ``time`` on: no
        variable it may still bind can break it."""
        s = inst.set_index  # the variables it may still bind:
        future = (self.sets[s] & ~inst.bound) | (self.sets[s] & inst.bound & self._plus)
        future |= self._later[s]
        for w in inst.witnesses:
            threat = self._related[w.var]
            if w.time >= time:
                threat |= self._next[w.var]  # a tie with the next set may still come
            if w.longer and w.open and self.p.prevs[w.var]:
                threat |= 1 << w.var
            if not threat & future:
                return True
        return False
