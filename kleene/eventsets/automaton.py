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

:meth:`AutomatonMatcher.matches` is algorithm A of Definition 4: the matches that start
at the first event of a match window. :meth:`AutomatonMatcher.run_all` slides the
window over a whole stream (no pre-processing).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from kleene.eventsets.compile import TIME, Row, pair_test, properties_test
from kleene.eventsets.model import ConstraintForm, SesMatch, SesPattern
from kleene.eventsets.selection import check_output, select

# (the other variable's index, the test, whether this variable is the left side)
_Relation = tuple[int, Callable[[Row, Row], bool], bool]


@dataclass(frozen=True)
class _Variable:
    index: int
    name: str
    plus: bool
    set_index: int
    test: Callable[[Row], bool]  # all its properties
    relations: tuple[_Relation, ...]
    prevs: tuple[Callable[[Row, Row], bool], ...]


class _Instance(NamedTuple):
    """One automaton instance: state ``(set_index, bound)`` (``bound`` a bit per
    variable) and its bindings (indices into the window, per variable); ``last`` is the
    time of the latest event bound."""

    set_index: int
    bound: int
    bindings: tuple[tuple[int, ...], ...]
    last: int | float


class AutomatonMatcher:
    """Matches an SES pattern by the automaton above. ``output``: "all", "earliest",
    "maximal" or "earliest-maximal" (docs/semantics.md, "Event-set patterns")."""

    def __init__(self, pattern: SesPattern, output: str = "all") -> None:
        self.pattern = pattern
        self.output = check_output(output)
        names = [v.name for v in pattern.variables]
        index = {n: i for i, n in enumerate(names)}
        relations: list[list[_Relation]] = [[] for _ in names]
        prevs: list[list[Callable[[Row, Row], bool]]] = [[] for _ in names]
        for c in pattern.constraints:
            if c.form is ConstraintForm.RELATIONSHIP:
                left, right = (index[v] for v in c.variables)
                test = pair_test(c)
                relations[left].append((right, test, True))
                relations[right].append((left, test, False))
            elif c.form is ConstraintForm.PREV:
                prevs[index[c.variables[0]]].append(pair_test(c))
        self.variables = tuple(
            _Variable(
                i,
                v.name,
                v.plus,
                v.set_index,
                properties_test(pattern.properties(v.name)),
                tuple(relations[i]),
                tuple(prevs[i]),
            )
            for i, v in enumerate(pattern.variables)
        )
        self.sets = tuple(sum(1 << index[v.name] for v in group) for group in pattern.sets)
        # the variables whose properties an event satisfies, by stream position (an
        # event is in several windows); each entry keeps its row, to know it is the same
        self._fits: dict[int, tuple[Row, tuple[_Variable, ...]]] = {}

    # --- algorithm A -----------------------------------------------------------------

    def matches(self, events: Sequence[Row], positions: Sequence[int]) -> list[SesMatch]:
        """The matches (of the chosen output) whose earliest event is ``events[0]``;
        ``events`` in time order, ``positions`` their stream positions."""
        if not events:
            return []
        found = self._all_from_first(events, self._fitting(events, positions))
        out = [
            SesMatch(
                {
                    v.name: tuple(positions[k] for k in seq)
                    for v, seq in zip(self.variables, bindings, strict=True)
                }
            )
            for bindings in found
        ]
        return select(out, self.output)

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

    def _fitting(
        self, events: Sequence[Row], positions: Sequence[int]
    ) -> list[tuple[_Variable, ...]]:
        """Per event of the window, the variables whose properties it satisfies."""
        cache = self._fits
        if len(cache) > 4 * len(events) + 1024:  # drop what earlier windows left behind
            for p in [p for p in cache if p < positions[0]]:
                del cache[p]
        out = []
        for row, p in zip(events, positions, strict=True):
            hit = cache.get(p)
            if hit is None or hit[0] is not row:
                hit = cache[p] = (row, tuple(v for v in self.variables if v.test(row)))
            out.append(hit[1])
        return out

    def _all_from_first(
        self, events: Sequence[Row], fitting: list[tuple[_Variable, ...]]
    ) -> list[tuple[tuple[int, ...], ...]]:
        first_time = events[0][TIME]
        accepting = (len(self.sets) - 1, self.sets[-1])
        instances = [_Instance(0, 0, tuple(() for _ in self.variables), first_time)]
        found: list[tuple[tuple[int, ...], ...]] = []
        for k, row in enumerate(events):
            if row[TIME] - first_time > self.pattern.window:
                break
            grown: list[_Instance] = []
            for inst in instances:
                for v in fitting[k]:
                    nxt = self._bind(inst, v, k, row, events)
                    if nxt is not None:
                        grown.append(nxt)
                        if (nxt.set_index, nxt.bound) == accepting:
                            found.append(nxt.bindings)
            if k == 0:
                instances = grown  # the first event is bound: every match starts there
            else:
                instances.extend(grown)
        return found

    def _bind(
        self, inst: _Instance, v: _Variable, k: int, row: Row, events: Sequence[Row]
    ) -> _Instance | None:
        """The instance after binding event ``k`` to ``v``, or None when no transition
        allows it."""
        bit = 1 << v.index
        if v.set_index == inst.set_index:
            if inst.bound & bit and not v.plus:
                return None
            bound = inst.bound | bit
        elif v.set_index == inst.set_index + 1 and inst.bound == self.sets[inst.set_index]:
            if not row[TIME] > inst.last:
                return None
            bound = bit
        else:
            return None
        own = inst.bindings[v.index]
        if own and not all(test(events[own[-1]], row) for test in v.prevs):
            return None
        for other, test, left in v.relations:
            for j in inst.bindings[other]:
                if not (test(row, events[j]) if left else test(events[j], row)):
                    return None
        bindings = (*inst.bindings[: v.index], (*own, k), *inst.bindings[v.index + 1 :])
        return _Instance(v.set_index, bound, bindings, row[TIME])
