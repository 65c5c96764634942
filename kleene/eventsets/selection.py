"""Earliest and maximal matches (match-window paper, section 3).

Read as in docs/semantics.md, "Event-set patterns": γ is *earliest* when no single
binding ``v/~e`` can be replaced by a sequence starting earlier, but not before γ's first
event, with the result still a match; γ is *maximal* when no binding of a ``v+`` can be
extended by one event after γ's first event with the result still a match. Either
witness has the same first event as γ, so selection within the match window of γ's
first event is exact. A witness is tested directly (:class:`Witnesses`), not looked up
among the matches found, so the matchers may prune what cannot be selected while they
match (:mod:`kleene.eventsets.automaton`, :mod:`kleene.eventsets.jointree`).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator, Sequence

from kleene.eventsets.compile import TIME, Row, pair_test, properties_test
from kleene.eventsets.model import ConstraintForm, SesPattern

OUTPUTS = ("all", "earliest", "maximal", "earliest-maximal")


def check_output(output: str) -> str:
    """``output`` in its canonical spelling; ValueError for an unknown one."""
    canonical = output.lower().replace("_", "-").replace("+", "-").replace(" ", "-")
    if canonical not in OUTPUTS:
        raise ValueError(f"unknown output {output!r}; expected one of: {', '.join(OUTPUTS)}")
    return canonical


# --- selection within one window by testing each witness directly ---------------------

# (the other variable's index, the test, whether this variable is the left side)
Relation = tuple[int, Callable[[Row, Row], bool], bool]
#: a substitution by variable index: each variable's window indices, in order
Bindings = tuple[tuple[int, ...], ...]


class CompiledPattern:
    """A pattern's constraints as callables by variable index (variables in pattern
    order): what the matchers and :class:`WindowSelection` test."""

    def __init__(self, pattern: SesPattern) -> None:
        variables = pattern.variables
        index = {v.name: i for i, v in enumerate(variables)}
        relations: list[list[Relation]] = [[] for _ in variables]
        prevs: list[list[Callable[[Row, Row], bool]]] = [[] for _ in variables]
        for c in pattern.constraints:
            if c.form is ConstraintForm.RELATIONSHIP:
                left, right = (index[v] for v in c.variables)
                test = pair_test(c)
                relations[left].append((right, test, True))
                relations[right].append((left, test, False))
            elif c.form is ConstraintForm.PREV:
                prevs[index[c.variables[0]]].append(pair_test(c))
        self.window = pattern.window
        self.names = tuple(v.name for v in variables)
        self.plus = tuple(v.plus for v in variables)
        self.set_of = tuple(v.set_index for v in variables)
        self.tests = tuple(properties_test(pattern.properties(v.name)) for v in variables)
        self.relations = tuple(tuple(r) for r in relations)
        self.prevs = tuple(tuple(p) for p in prevs)


class WindowSelection:
    """Earliest and maximal matches among those starting at a window's first event,
    each tested against its possible witnesses directly (the readings above): so the
    result does not depend on which other matches a matcher found, and a matcher may
    skip building matches that cannot be selected. ``output`` canonical."""

    def __init__(self, compiled: CompiledPattern, output: str) -> None:
        self.p = compiled
        self.earliest = output in ("earliest", "earliest-maximal")
        self.maximal = output in ("maximal", "earliest-maximal")

    def keep(
        self,
        events: Sequence[Row],
        found: Iterable[Bindings],
        fitting: Sequence[tuple[int, ...]] | None = None,
    ) -> list[Bindings]:
        """The substitutions of ``found`` (over ``events``, a window in time order) the
        output keeps; ``fitting``, if known, the variables whose properties each event
        satisfies."""
        return list(self.each(events, found, fitting))

    def each(
        self,
        events: Sequence[Row],
        found: Iterable[Bindings],
        fitting: Sequence[tuple[int, ...]] | None = None,
    ) -> Iterator[Bindings]:
        """:meth:`keep` one substitution at a time, as ``found`` yields them: each is
        tested alone, so the window's matches are never held together."""
        if not (self.earliest or self.maximal):
            yield from found
            return
        check: Witnesses | None = None
        for b in found:
            if check is None:
                check = Witnesses(self.p, events, fitting)
            if self.earliest and check.earlier(b):
                continue
            if self.maximal and check.longer(b):
                continue
            yield b


class Witnesses:
    """The witness tests over one window (property results cached per event). A
    substitution may be partial (unbound variables as empty tuples, the first event
    bound): ``variables`` limits the bindings tried and ``taken`` tells which events
    the variables still to bind may use, which no witness may then use."""

    def __init__(
        self,
        p: CompiledPattern,
        events: Sequence[Row],
        fitting: Sequence[tuple[int, ...]] | None = None,
    ) -> None:
        self.p = p
        self.events = events
        self.times = [e[TIME] for e in events]
        self._fits: dict[tuple[int, int], bool] = {}
        #: per variable, the window indices of the events satisfying its properties
        self._at: list[list[int] | None] = [None] * len(p.names)
        if fitting is not None:
            at: list[list[int]] = [[] for _ in p.names]
            for i, variables in enumerate(fitting):
                for v in variables:
                    at[v].append(i)
            self._at = list(at)

    def fits(self, v: int, i: int) -> bool:
        key = (v, i)
        hit = self._fits.get(key)
        if hit is None:
            hit = self._fits[key] = self.p.tests[v](self.events[i])
        return hit

    def _fitting(self, v: int) -> list[int]:
        """The window indices of the events satisfying v's properties."""
        at = self._at[v]
        if at is None:
            at = self._at[v] = [i for i in range(len(self.events)) if self.fits(v, i)]
        return at

    def _joins(self, b: Bindings, v: int, i: int) -> bool:
        """Event ``i`` bound to ``v`` keeps the order of consecutive sets and v's
        relationships with the other variables' events of ``b``."""
        p, t, row = self.p, self.times[i], self.events[i]
        s = p.set_of[v]
        for u, seq in enumerate(b):
            if u == v or not seq:
                continue
            if p.set_of[u] == s - 1 and not self.times[seq[-1]] < t:
                return False
            if p.set_of[u] == s + 1 and not t < self.times[seq[0]]:
                return False
        for u, test, left in p.relations[v]:
            for j in b[u]:
                if not (test(row, self.events[j]) if left else test(self.events[j], row)):
                    return False
        return True

    def earlier(
        self,
        b: Bindings,
        variables: Iterable[int] | None = None,
        taken: Callable[[int], bool] | None = None,
    ) -> bool:
        """Whether a binding can be replaced by one starting earlier (not before the
        first event): ⟨s⟩ alone suffices, as every constraint on a sequence holds for
        its first event alone."""
        first = min(seq[0] for seq in b if seq)
        used = {i for seq in b for i in seq}
        for v in range(len(b)) if variables is None else variables:
            seq = b[v]
            for s in self._fitting(v):
                if s >= (seq[0] if seq else first):
                    break
                if s < first or s in used or (taken is not None and taken(s)):
                    continue
                if self._joins(b, v, s):
                    return True
        return False

    def longer(
        self,
        b: Bindings,
        variables: Iterable[int] | None = None,
        taken: Callable[[int], bool] | None = None,
    ) -> bool:
        """Whether a ``v+`` binding can take one more event after the first (at its
        place in time) and stay a match."""
        first = min(seq[0] for seq in b if seq)
        used = {i for seq in b for i in seq}
        limit = self.times[first] + self.p.window
        for v in range(len(b)) if variables is None else variables:
            seq = b[v]
            if not (self.p.plus[v] and seq):
                continue
            for e in self._fitting(v):
                if self.times[e] > limit:
                    break
                if e <= first or e in used or (taken is not None and taken(e)):
                    continue
                at = bisect.bisect(seq, e)
                if at and not self._prev(v, seq[at - 1], e):
                    continue
                if at < len(seq) and not self._prev(v, e, seq[at]):
                    continue
                if self._joins(b, v, e):
                    return True
        return False

    def _prev(self, v: int, earlier: int, later: int) -> bool:
        a, b = self.events[earlier], self.events[later]
        return all(test(a, b) for test in self.p.prevs[v])
