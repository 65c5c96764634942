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

:meth:`AutomatonMatcher.matches` is algorithm A of Definition 4: the matches that start
at the first event of a match window. :meth:`AutomatonMatcher.run_all` slides the
window over a whole stream (no pre-processing).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from kleene.eventsets.compile import TIME, Row
from kleene.eventsets.model import SesMatch, SesPattern
from kleene.eventsets.selection import CompiledPattern, WindowSelection, check_output

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


class AutomatonMatcher:
    """Matches an SES pattern by the automaton above. ``output``: "all", "earliest",
    "maximal" or "earliest-maximal" (docs/semantics.md, "Event-set patterns")."""

    def __init__(self, pattern: SesPattern, output: str = "all") -> None:
        self.pattern = pattern
        self.output = check_output(output)
        p = self.p = CompiledPattern(pattern)
        m = len(p.names)
        self.selection = WindowSelection(p, self.output)
        self.sets = tuple(
            sum(1 << i for i in range(m) if p.set_of[i] == s) for s in range(len(pattern.sets))
        )
        self._plus = sum(1 << i for i in range(m) if p.plus[i])
        self._later = tuple(sum(self.sets[s + 1 :]) for s in range(len(self.sets)))
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
        #: instances built for the last window (what selection while matching saves)
        self.built = 0

    # --- algorithm A -----------------------------------------------------------------

    def matches(self, events: Sequence[Row], positions: Sequence[int]) -> list[SesMatch]:
        """The matches (of the chosen output) whose earliest event is ``events[0]``;
        ``events`` in time order, ``positions`` their stream positions."""
        if not events:
            return []
        found = self._all_from_first(events, self._fitting(events, positions))
        found = self.selection.keep(events, found)
        names = self.p.names
        return [
            SesMatch({n: tuple(positions[k] for k in seq) for n, seq in zip(names, b, strict=True)})
            for b in found
        ]

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

    # --- the automaton ----------------------------------------------------------------

    def _fitting(self, events: Sequence[Row], positions: Sequence[int]) -> list[tuple[int, ...]]:
        """Per event of the window, the variables whose properties it satisfies."""
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
    ) -> list[Bindings]:
        first_time = events[0][TIME]
        accepting = (len(self.sets) - 1, self.sets[-1])
        empty: Bindings = tuple(() for _ in self.p.names)
        instances = [_Instance(0, 0, empty, first_time)]
        found: list[Bindings] = []
        prune = self._earlier or self._longer
        self.built = 0
        for k, row in enumerate(events):
            time = row[TIME]
            if time - first_time > self.pattern.window:
                break
            if prune and k:
                instances = [i for i in instances if not (i.witnesses and self._settled(i, time))]
            grown: list[_Instance] = []
            for n, inst in enumerate(instances):
                skipped: list[_Witness] = []
                for v in fitting[k]:
                    nxt = self._bind(inst, v, k, row, events)
                    if nxt is None:
                        continue
                    if inst.witnesses:
                        nxt = nxt._replace(witnesses=self._carry(inst.witnesses, v, row, events))
                    grown.append(nxt)
                    if (nxt.set_index, nxt.bound) == accepting:
                        found.append(nxt.bindings)
                    if prune and self.p.set_of[v] == inst.set_index:
                        longer = bool(inst.bound >> v & 1)
                        if self._longer if longer else self._earlier:
                            skipped.append(_Witness(v, k, time, longer, True))
                if skipped:
                    instances[n] = inst._replace(witnesses=inst.witnesses + tuple(skipped))
            self.built += len(grown)
            if k == 0:
                instances = grown  # the first event is bound: every match starts there
            else:
                instances.extend(grown)
        return found

    def _bind(
        self, inst: _Instance, v: int, k: int, row: Row, events: Sequence[Row]
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
        own = inst.bindings[v]
        if own and not all(test(events[own[-1]], row) for test in p.prevs[v]):
            return None
        for other, test, left in p.relations[v]:
            for j in inst.bindings[other]:
                if not (test(row, events[j]) if left else test(events[j], row)):
                    return None
        bindings = (*inst.bindings[:v], (*own, k), *inst.bindings[v + 1 :])
        return _Instance(set_index, bound, bindings, row[TIME])

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
                if not all(
                    test(e, row) if left else test(row, e) for test, left in self._pairs[w.var, u]
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
