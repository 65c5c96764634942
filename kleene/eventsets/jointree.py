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
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
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

Event = Mapping[str, Any]
Binding = tuple[int, ...]  # window indices of one variable's events, in order


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

    def __init__(self, pattern: SesPattern, output: str = "all") -> None:
        self.pattern = pattern
        self.output = check_output(output)
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
        if not events or not self.names:
            return []
        search = _Search(self, events)
        self.built = 0
        found: list[tuple[Binding, ...]] = []
        for seed in self.first_set:
            if 0 in search.candidates[seed]:
                found += [tuple(b[n] for n in self.names) for b in self._join(search, seed)]
        return [
            SesMatch(
                {n: tuple(positions[i] for i in b) for n, b in zip(self.names, bs, strict=True)}
            )
            for bs in self.selection.keep(search.events, found)
        ]

    def run_all(self, events: Sequence[Event]) -> list[SesMatch]:
        """Every match of a stream in time order: the algorithm on each match window."""
        out: list[SesMatch] = []
        for window, positions in each_window(list(events), self.pattern.window):
            out += self.matches(window, positions)
        return out

    def _join(self, search: _Search, seed: str) -> list[dict[str, Binding]]:
        partials: list[dict[str, Binding]] = [{seed: b} for b in search.seed_bindings(seed)]
        order = [seed]
        remaining = [n for n in self.names if n != seed]
        partials = self._selectable(search, partials, order, remaining)
        while remaining and partials:
            v = min(remaining, key=lambda n: search.estimate(n, order))
            order.append(v)
            remaining.remove(v)
            probe = next((r for r in self.links[v] if r.equal and _other(r, v) in order), None)
            joined = []
            for partial in partials:
                used = {i for b in partial.values() for i in b}
                for binding in search.probe(v, probe, partial):
                    if used.isdisjoint(binding) and search.fits(v, binding, partial):
                        joined.append({**partial, v: binding})
            partials = self._selectable(search, joined, order, remaining)
        self.last_order = tuple(order)
        return partials if not remaining else []

    def _selectable(
        self,
        search: _Search,
        partials: list[dict[str, Binding]],
        joined: list[str],
        remaining: list[str],
    ) -> list[dict[str, Binding]]:
        """Selection while joining (output earliest and/or maximal): drop a partial
        join when a joined variable has a witness (an earlier start, one more event)
        that no variable still to join can break: none is related to it or in a set
        next to its set, and none may bind the witness event. Every match it would
        complete is then not selected. The complete matches are tested whole by
        :class:`~kleene.eventsets.selection.WindowSelection`."""
        self.built += len(partials)
        sel = self.selection
        if not (sel.earliest or sel.maximal) or not remaining or not partials:
            return partials
        free = [self.index[v] for v in joined if not self.near[v] & set(remaining)]
        if not free:
            return partials
        taken = {i for u in remaining for i in search.candidates[u]}
        check = search.witnesses()
        out = []
        for partial in partials:
            b = tuple(partial.get(n, ()) for n in self.names)
            if sel.earliest and check.earlier(b, free, taken.__contains__):
                continue
            if sel.maximal and check.longer(b, free, taken.__contains__):
                continue
            out.append(partial)
        return out


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
        self._leaves: dict[str, list[Binding]] = {}
        self._indexes: dict[tuple[str, str], dict[Any, list[Binding]] | None] = {}
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
        """``v``'s bindings over ``pool`` (sorted), all starting at ``first`` if given."""
        starts = [first] if first is not None else pool
        for start in starts:
            if not self._extends(v, (), start):
                continue
            stack: list[Binding] = [(start,)]
            while stack:
                binding = stack.pop()
                yield binding
                if not self.m.plus[v]:
                    continue
                after = bisect.bisect_right(pool, binding[-1])
                for j in reversed(pool[after:]):
                    if self._extends(v, binding, j):
                        stack.append((*binding, j))

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

    def seed_bindings(self, v: str) -> list[Binding]:
        """``v``'s bindings that start at the window's first event."""
        pools = self._pools(v, exclude_first=False)
        pool = next(p for p in pools if 0 in p)
        return list(self._sequences(v, pool, 0))

    def leaf(self, v: str) -> list[Binding]:
        """``v``'s bindings among the events after the first."""
        found = self._leaves.get(v)
        if found is None:
            pools = self._pools(v, exclude_first=True)
            found = self._leaves[v] = [b for p in pools for b in self._sequences(v, p, None)]
        return found

    def probe(self, v: str, r: Relation | None, partial: dict[str, Binding]) -> list[Binding]:
        """``v``'s bindings that may join ``partial``: by a hash index on the equality
        ``r`` with a bound variable, else all of them."""
        if r is None or r.equal is None:
            return self.leaf(v)
        mine, theirs = r.equal if r.left == v else r.equal[::-1]
        index = self._index(v, mine)
        value = self.events[partial[_other(r, v)][0]].get(theirs)
        if index is None or not _hashable(value):
            return self.leaf(v)
        return index.get(value, [])

    def _index(self, v: str, attr: str) -> dict[Any, list[Binding]] | None:
        """``v``'s bindings by their (common) value of ``attr``; None if unhashable."""
        key = (v, attr)
        if key not in self._indexes:
            index: dict[Any, list[Binding]] = {}
            for binding in self.leaf(v):
                values = [self.events[i].get(attr) for i in binding]
                if not all(_hashable(x) for x in values):
                    self._indexes[key] = None
                    return None
                if all(x == values[0] for x in values):  # else no value equals them all
                    index.setdefault(values[0], []).append(binding)
            self._indexes[key] = index
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
