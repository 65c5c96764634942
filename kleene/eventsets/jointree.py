"""A join-tree matcher for SES patterns (the join-based algorithm A of the match-windows
paper's experiments, section 6: ZStream, Mei and Madden, SIGMOD 2009).

Within one match window the matches that start at its first event are built by joins:

- a *leaf* per variable holds the window's events that satisfy its properties
  (Θ^p_v); for ``v+`` the leaf holds the event sequences in chronological order whose
  consecutive events satisfy the ``prev`` relationships and whose events satisfy the
  relationships of ``v`` with itself (built within groups of equal values when ``v``
  is equated to another variable: all its events must then agree);
- the first event is bound to a variable of B_1 (the earliest event of a match lies in
  B_1); that leaf is the seed, every other leaf excludes it;
- the remaining leaves are joined one at a time in a cost-based order: next is the
  variable with the smallest estimated result, its leaf size times the selectivity of
  the predicates linking it to the variables joined so far (1/distinct values for an
  equality, 1/3 for another comparison, 1/2 for the order of consecutive sets), the
  estimates taken from the window's own events;
- a join probes a hash index on an equality relationship with a joined variable when
  there is one (hashing only narrows the candidates: every predicate is then tested);
- the event-set order condition (all events of B_i before all of B_{i+1}), disjoint
  bindings and every relationship (for all pairs of bound events, Definition 2) are
  tested as a binding joins; the window bounds τ.

Predicates are evaluated by the callables generated from the constraints' IR.

**Pipelined, depth first.** The paper's join tree materializes each level's partial
joins, and a ``v+`` leaf holds every admissible sequence: 2^n of them over n events.
Here the joins are nested loops in the same cost-based order (fixed per seed before
joining, as the estimates read only the window's events), each partial join extended
by the next leaf's bindings one at a time, and a leaf's sequences are made on demand
(depth first, in order), kept to be read again only up to a per-window budget
(:data:`KEPT`, at most ``max_runs``). So the matches come out as they are found
(:meth:`JoinTreeMatcher.each`), a consumer that stops at ``max_matches`` stops the
joins, and a window holds one partial join per variable and one pending choice per
event of the sequences being made, besides the bindings kept.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple

from kleene.eventsets.compile import pair_test, properties_test
from kleene.eventsets.model import ConstraintForm, SesMatch, SesPattern
from kleene.eventsets.selection import (
    CompiledPattern,
    WindowSelection,
    Witnesses,
    check_output,
)
from kleene.eventsets.windows import TIME, each_window
from kleene.runtime.limits import DEFAULT_MAX_RUNS

Event = Mapping[str, Any]
Binding = tuple[int, ...]  # window indices of one variable's events, in order

#: leaf bindings a window keeps to read again (beyond, they are made again each time)
KEPT = 1 << 16


class Relation(NamedTuple):
    """A relationship ``left.A φ right.B``; ``equal`` is (A, B) when φ is ``=``."""

    number: int
    left: str
    right: str
    test: Callable[[Event, Event], bool]
    equal: tuple[str, str] | None


class JoinTreeMatcher:
    """Algorithm A by joins: :meth:`matches` on one window, :meth:`run_all` on a stream.
    ``output``: "all", "earliest", "maximal" or "earliest-maximal", selected among the
    matches of each window (:mod:`kleene.eventsets.selection`)."""

    def __init__(
        self, pattern: SesPattern, output: str = "all", max_runs: int = DEFAULT_MAX_RUNS
    ) -> None:
        self.pattern = pattern
        self.output = check_output(output)
        #: the leaf bindings one window keeps to read again (part of max_runs' state)
        self.keep = min(KEPT, max_runs)
        self.selection = WindowSelection(CompiledPattern(pattern), self.output)
        self.names = tuple(v.name for v in pattern.variables)
        self.plus = {v.name: v.plus for v in pattern.variables}
        self.set_of = {v.name: v.set_index for v in pattern.variables}
        self.first_set = tuple(v.name for v in pattern.sets[0]) if pattern.sets else ()
        self.properties = {n: properties_test(pattern.properties(n)) for n in self.names}
        self.prev: dict[str, tuple[Callable[[Event, Event], bool], ...]] = {
            n: () for n in self.names
        }
        relations: list[Relation] = []
        for c in pattern.constraints:
            if c.form is ConstraintForm.PREV:
                self.prev[c.variables[0]] += (pair_test(c),)
            elif c.form is ConstraintForm.RELATIONSHIP:
                equal = (c.attributes[0], c.attributes[1]) if c.op == "=" else None
                relations.append(
                    Relation(len(relations), c.variables[0], c.variables[1], pair_test(c), equal)
                )
        self.own = {n: [r for r in relations if r.left == r.right == n] for n in self.names}
        self.links = {
            n: [r for r in relations if (r.left == n) != (r.right == n)] for n in self.names
        }
        self.group = {n: _group_attribute(n, relations) for n in self.names}
        self.index = {n: i for i, n in enumerate(self.names)}
        #: per variable, those whose binding may break a witness for it: related ones
        #: and those of the sets just before and after
        self.near = {
            n: {_other(r, n) for r in self.links[n]}
            | {u for u in self.names if abs(self.set_of[u] - self.set_of[n]) == 1}
            for n in self.names
        }
        #: the join order of the last window searched (for explain and tests)
        self.last_order: tuple[str, ...] = ()
        #: partial joins kept in the last window (what selection while joining saves)
        self.built = 0

    def matches(self, events: Sequence[Event], positions: Sequence[int]) -> list[SesMatch]:
        """The matches among a window's events that start at ``events[0]``."""
        return list(self.each(events, positions))

    def each(self, events: Sequence[Event], positions: Sequence[int]) -> Iterator[SesMatch]:
        """:meth:`matches` one at a time, as the joins find them: a consumer that stops
        stops the joins."""
        if not events or not self.names:
            return
        search = _Search(self, events)
        self.built = 0
        found = (
            tuple(b[n] for n in self.names)
            for seed in self.first_set
            if 0 in search.candidates[seed]
            for b in self._join(search, seed)
        )
        for bs in self.selection.each(search.events, found):
            yield SesMatch(
                {n: tuple(positions[i] for i in b) for n, b in zip(self.names, bs, strict=True)}
            )

    def run_all(self, events: Sequence[Event]) -> list[SesMatch]:
        """Every match of a stream in time order: the algorithm on each match window."""
        out: list[SesMatch] = []
        for window, positions in each_window(list(events), self.pattern.window):
            out += self.matches(window, positions)
        return out

    def _join(self, search: _Search, seed: str) -> Iterator[dict[str, Binding]]:
        """The complete joins from ``seed``'s bindings that start at the first event,
        depth first: a partial join is extended by the next leaf's bindings one at a
        time, so only the partial joins on the path are held (one per variable)."""
        plan = _JoinPlan(self, search, seed)
        try:
            for binding in search.seed_bindings(seed):
                partial = {seed: binding}
                self.built += 1
                if self._selectable(search, partial, plan.prune(0)):
                    yield from self._extend(search, partial, plan)
        finally:
            self.last_order = tuple(plan.order)

    def _extend(
        self, search: _Search, partial: dict[str, Binding], plan: _JoinPlan
    ) -> Iterator[dict[str, Binding]]:
        """The complete joins extending a seed's ``partial``: one frame per level on a
        stack, each with its partial join and where it is in the next leaf's bindings."""
        last = len(self.names) - 1
        if not last:
            yield partial
            return
        stack = [self._frame(search, partial, plan, 1)]
        while stack:
            partial, bindings, used, v, pruning, at = stack[-1]
            for binding in bindings:
                if used.isdisjoint(binding) and search.fits(v, binding, partial):
                    joined = {**partial, v: binding}
                    self.built += 1
                    if not self._selectable(search, joined, pruning):
                        continue
                    if at == last:
                        yield joined
                    else:
                        stack.append(self._frame(search, joined, plan, at + 1))
                        break
            else:
                stack.pop()

    def _frame(
        self, search: _Search, partial: dict[str, Binding], plan: _JoinPlan, at: int
    ) -> _Frame:
        v, probe = plan.step(at)
        used = {i for b in partial.values() for i in b}
        bindings = iter(search.probe(v, probe, partial))
        return partial, bindings, used, v, plan.prune(at), at

    def _pruning(self, search: _Search, joined: list[str], remaining: list[str]) -> _Pruning | None:
        """What selection while joining tests after ``joined`` (None: nothing): the
        joined variables whose witnesses no variable still to join can break (none is
        related to them or in a set next to theirs) and the events those may bind."""
        sel = self.selection
        if not (sel.earliest or sel.maximal) or not remaining:
            return None
        free = [self.index[v] for v in joined if not self.near[v] & set(remaining)]
        if not free:
            return None
        return free, frozenset(i for u in remaining for i in search.candidates[u])

    def _selectable(
        self, search: _Search, partial: dict[str, Binding], pruning: _Pruning | None
    ) -> bool:
        """Selection while joining (output earliest and/or maximal): a partial join is
        dropped when a joined variable has a witness (an earlier start, one more event)
        that no variable still to join can break: none is related to it or in a set
        next to its set, and none may bind the witness event. Every match it would
        complete is then not selected. The complete matches are tested whole by
        :class:`~kleene.eventsets.selection.WindowSelection`."""
        if pruning is None:
            return True
        free, taken = pruning
        sel = self.selection
        check = search.witnesses()
        b = tuple(partial.get(n, ()) for n in self.names)
        if sel.earliest and check.earlier(b, free, taken.__contains__):
            return False
        return not (sel.maximal and check.longer(b, free, taken.__contains__))


#: the variables selection while joining tests and the events still to be bound
_Pruning = tuple[list[int], frozenset[int]]
#: a level of the join search: its partial join, the next leaf's bindings still to
#: try, the events already bound, the leaf's variable, the pruning and the level
_Frame = tuple[dict[str, Binding], Iterator[Binding], set[int], str, "_Pruning | None", int]


class _JoinPlan:
    """The join order after one seed, chosen a level at a time as the search first
    reaches it (a window whose partial joins die early costs no later estimates): next
    is the variable of the smallest estimate given those joined so far, probed by an
    equality with a joined variable when there is one; the selection's pruning after
    each level is worked out when first needed too."""

    def __init__(self, matcher: JoinTreeMatcher, search: _Search, seed: str) -> None:
        self.m = matcher
        self.search = search
        self.order = [seed]
        self.probes: list[Relation | None] = [None]
        self.pruning: dict[int, _Pruning | None] = {}

    def step(self, at: int) -> tuple[str, Relation | None]:
        """Level ``at`` (from 1): its variable and the equality to probe it by."""
        m, order = self.m, self.order
        while len(order) <= at:
            remaining = [n for n in m.names if n not in order]
            v = min(remaining, key=lambda n: self.search.estimate(n, order))
            probe = next((r for r in m.links[v] if r.equal and _other(r, v) in order), None)
            order.append(v)
            self.probes.append(probe)
        return order[at], self.probes[at]

    def prune(self, at: int) -> _Pruning | None:
        """The selection's pruning once levels 0 to ``at`` are joined."""
        if at not in self.pruning:
            joined = self.order[: at + 1]
            remaining = [n for n in self.m.names if n not in joined]
            self.pruning[at] = self.m._pruning(self.search, joined, remaining)
        return self.pruning[at]


def _other(r: Relation, v: str) -> str:
    return r.right if r.left == v else r.left


def _group_attribute(v: str, relations: list[Relation]) -> str | None:
    """An attribute on which all events of ``v`` must agree: one ``v`` is equated on
    with another variable (or with itself on the same attribute)."""
    for r in relations:
        if r.equal is None:
            continue
        if r.left == v and (r.right != v or r.equal[0] == r.equal[1]):
            return r.equal[0]
        if r.right == v and r.left != v:
            return r.equal[1]
    return None


def _hashable(value: Any) -> bool:
    return isinstance(value, Hashable)


class _Search:
    """One window's leaves, indexes and cached predicate results."""

    def __init__(self, matcher: JoinTreeMatcher, events: Sequence[Event]) -> None:
        self.m = matcher
        limit = events[0][TIME] + matcher.pattern.window
        n = 0
        while n < len(events) and events[n][TIME] <= limit:
            n += 1
        self.events = events[:n]
        self.times = [e[TIME] for e in self.events]
        self.candidates = {
            v: [i for i in range(n) if test(self.events[i])]
            for v, test in matcher.properties.items()
        }
        self._pairs: dict[tuple[int, int, int], bool] = {}
        self._leaves: dict[str, _Replay] = {}
        self._indexes: dict[tuple[str, str], dict[Any, _Replay] | None] = {}
        self.kept = _Budget(matcher.keep)
        self._witnesses: Witnesses | None = None

    def witnesses(self) -> Witnesses:
        """The witness tests over this window (made once)."""
        if self._witnesses is None:
            self._witnesses = Witnesses(self.m.selection.p, self.events)
        return self._witnesses

    # --- predicates ---------------------------------------------------------------

    def holds(self, r: Relation, i: int, j: int) -> bool:
        key = (r.number, i, j)
        found = self._pairs.get(key)
        if found is None:
            found = self._pairs[key] = r.test(self.events[i], self.events[j])
        return found

    def _extends(self, v: str, binding: Binding, j: int) -> bool:
        """Whether ``binding + (j,)`` keeps ``v``'s own predicates."""
        if binding:
            last = self.events[binding[-1]]
            if not all(t(last, self.events[j]) for t in self.m.prev[v]):
                return False
        for r in self.m.own[v]:
            if not self.holds(r, j, j):
                return False
            if not all(self.holds(r, i, j) and self.holds(r, j, i) for i in binding):
                return False
        return True

    def fits(self, v: str, binding: Binding, partial: dict[str, Binding]) -> bool:
        """The order of consecutive sets and ``v``'s relationships with the variables
        bound in ``partial`` (for all pairs of their events)."""
        sv = self.m.set_of[v]
        for u, bound in partial.items():
            su = self.m.set_of[u]
            if su == sv - 1 and not self.times[bound[-1]] < self.times[binding[0]]:
                return False
            if su == sv + 1 and not self.times[binding[-1]] < self.times[bound[0]]:
                return False
        for r in self.m.links[v]:
            other = partial.get(_other(r, v))
            if other is None:
                continue
            lefts, rights = (binding, other) if r.left == v else (other, binding)
            if not all(self.holds(r, i, j) for i in lefts for j in rights):
                return False
        return True

    # --- leaves -------------------------------------------------------------------

    def _sequences(self, v: str, pool: list[int], first: int | None) -> Iterator[Binding]:
        """``v``'s bindings over ``pool`` (sorted), all starting at ``first`` if given:
        each binding, then its extensions by a later event in order, depth first (one
        pending choice per event of the binding is held)."""
        starts = [first] if first is not None else pool
        plus = self.m.plus[v]
        for start in starts:
            if not self._extends(v, (), start):
                continue
            yield (start,)
            if not plus:
                continue
            stack: list[tuple[Binding, int]] = [((start,), bisect.bisect_right(pool, start))]
            while stack:
                binding, at = stack[-1]
                while at < len(pool) and not self._extends(v, binding, pool[at]):
                    at += 1
                if at == len(pool):
                    stack.pop()
                    continue
                stack[-1] = (binding, at + 1)
                longer = (*binding, pool[at])
                yield longer
                stack.append((longer, at + 1))

    def _pools(self, v: str, exclude_first: bool) -> list[list[int]]:
        """``v``'s candidates, split into groups of equal values when they must agree."""
        pool = [i for i in self.candidates[v] if not (exclude_first and i == 0)]
        attr = self.m.group[v]
        if not self.m.plus[v] or attr is None:
            return [pool]
        groups: dict[Any, list[int]] = {}
        for i in pool:
            value = self.events[i].get(attr)
            if not _hashable(value):
                return [pool]
            groups.setdefault(value, []).append(i)
        return list(groups.values())

    def seed_bindings(self, v: str) -> Iterator[Binding]:
        """``v``'s bindings that start at the window's first event."""
        pools = self._pools(v, exclude_first=False)
        pool = next(p for p in pools if 0 in p)
        return self._sequences(v, pool, 0)

    def leaf(self, v: str) -> _Replay:
        """``v``'s bindings among the events after the first."""
        found = self._leaves.get(v)
        if found is None:
            pools = self._pools(v, exclude_first=True)
            found = self._leaves[v] = self._replay(v, pools)
        return found

    def _replay(self, v: str, pools: list[list[int]]) -> _Replay:
        return _Replay(lambda: (b for p in pools for b in self._sequences(v, p, None)), self.kept)

    def probe(self, v: str, r: Relation | None, partial: dict[str, Binding]) -> Iterable[Binding]:
        """``v``'s bindings that may join ``partial``: by a hash index on the equality
        ``r`` with a bound variable, else all of them."""
        if r is None or r.equal is None:
            return self.leaf(v)
        mine, theirs = r.equal if r.left == v else r.equal[::-1]
        index = self._index(v, mine)
        value = self.events[partial[_other(r, v)][0]].get(theirs)
        if index is None or not _hashable(value):
            return self.leaf(v)
        return index.get(value, ())

    def _index(self, v: str, attr: str) -> dict[Any, _Replay] | None:
        """``v``'s bindings by their (common) value of ``attr``; None if one of its
        candidates' values is unhashable. A value's bindings are those over the
        candidates of that value (a value not equal to itself, NaN, is in none)."""
        key = (v, attr)
        if key not in self._indexes:
            by_value: dict[Any, list[list[int]]] = {}
            for pool in self._pools(v, exclude_first=True):
                split: dict[Any, list[int]] = {}
                for i in pool:
                    value = self.events[i].get(attr)
                    if not _hashable(value):
                        self._indexes[key] = None
                        return None
                    if value == value:
                        split.setdefault(value, []).append(i)
                for value, part in split.items():
                    by_value.setdefault(value, []).append(part)
            self._indexes[key] = {
                value: self._replay(v, pools) for value, pools in by_value.items()
            }
        return self._indexes[key]

    # --- cost estimates -----------------------------------------------------------

    def estimate(self, v: str, joined: list[str]) -> float:
        """The estimated size of joining ``v`` next, from the window's events."""
        n = len(self.candidates[v])
        size = n * (n + 1) / 2 if self.m.plus[v] else n
        for r in self.m.links[v]:
            if _other(r, v) in joined:
                size *= 1 / max(1, self._distinct(v, r)) if r.equal else 1 / 3
        sv = self.m.set_of[v]
        if any(abs(self.m.set_of[u] - sv) == 1 for u in joined):
            size /= 2
        return size

    def _distinct(self, v: str, r: Relation) -> int:
        assert r.equal is not None
        attr = r.equal[0] if r.left == v else r.equal[1]
        values = [self.events[i].get(attr) for i in self.candidates[v]]
        return len({x for x in values if _hashable(x)})


class _Budget:
    """How many leaf bindings a window may still keep."""

    def __init__(self, left: int) -> None:
        self.left = left


class _Replay:
    """A leaf's bindings, made on demand by ``make``: kept after the first complete
    pass for the next ones while the window's budget lasts, else made again each time
    (so a leaf of 2^n sequences of a ``v+`` is never held whole)."""

    def __init__(self, make: Callable[[], Iterator[Binding]], budget: _Budget) -> None:
        self.make = make
        self.budget = budget
        self.kept: list[Binding] | None = None

    def __iter__(self) -> Iterator[Binding]:
        if self.kept is not None:
            yield from self.kept
            return
        budget = self.budget
        record: list[Binding] | None = [] if budget.left > 0 else None
        try:
            for b in self.make():
                if record is not None:
                    if budget.left > 0:
                        budget.left -= 1
                        record.append(b)
                    else:
                        budget.left += len(record)
                        record = None
                yield b
            if record is not None and self.kept is None:
                self.kept, record = record, None
        finally:
            if record is not None:  # abandoned, or another pass kept them first
                budget.left += len(record)
