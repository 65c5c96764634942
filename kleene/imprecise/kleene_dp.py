"""Kleene closure over interval events (SASE++ section 4, Appendix A, and Algorithm 1 of
section 5.3).

Runs always skip till any match: a signature chooses one event per single component and
a non-empty set of events per Kleene component. Candidates of a Kleene component are
sorted by their intervals (Appendix A) and its sets are enumerated as in Algorithm 1:
each set grows by later candidates only.

Confidence (the correlated case of Appendix A). In a world the signature's events occur
at strictly increasing instants, component after component, a Kleene component's events
in the order of their instants, and the plan's edges run on them in that order. So the
worlds of a signature split by the *time order* of its events, and each order's
probability is a chain product (:mod:`kleene.imprecise.chains`): a distribution over
(first instant, last instant), O(U^2) numbers, never the U^k worlds.

The partial signatures form a lattice: the orders of a set T end with some event y, so
the orders of T are those of T - {y} followed by y, over every y of T's last component
(a Kleene set of size >= 2) or its single event. Each partial signature keeps, per plan
state (next state, state vector, run key), the chain of the orders that lead to it (the
value predicates between consecutive Kleene events are evaluated once per order, not per
world, and orders reaching equal states are merged), and one chain of the orders some
edge refused (they can never match, but their worlds still count for the bound below).

Pruning (Algorithm 1, lines 5 and 9): the total mass of a partial signature is the
probability that its events are strictly ordered and fit the window, ignoring value
predicates. It bounds the confidence of every extension, as an extension only adds
constraints; a partial signature whose mass is zero or fails the confidence threshold
is dropped, and so is every set that has it as a subset (found missing among its
predecessors). The bound ignores predicates, so pruning is exact whatever they are: a
set may match k[i].x != k[i-1].x although a subset does not.

The evaluation runs when the input ends (:meth:`KleeneFramework.flush`), lazily: the
results come out as the lattice grows, so a consumer that stops at ``max_matches``
stops the evaluation; ``max_runs`` bounds the partial signatures of the two levels held
at once (:mod:`kleene.imprecise.budget`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from kleene.compiler.plan import Plan
from kleene.imprecise import chains
from kleene.imprecise.budget import RunBudget
from kleene.imprecise.chains import Chain
from kleene.imprecise.collapse import Threshold
from kleene.imprecise.model import IntervalEvent, Probability
from kleene.imprecise.points import Steps
from kleene.imprecise.result import Framework, ImpreciseMatch, partition_of

# the candidates chosen per component so far (indexes into each component's candidates)
Sets = tuple[tuple[int, ...], ...]
# a plan state: next state index, state vector, run key (None before the first event)
State = tuple[int | None, tuple[Any, ...], tuple[Any, ...] | None]


class Never:
    """The verdict on an event that no order of its set can select."""


NEVER = Never()


class Node:
    """One partial signature: the chain of each plan state its orders reach, and the
    chain of its refused orders."""

    __slots__ = ("alive", "refused")

    def __init__(self) -> None:
        self.alive: dict[Any, tuple[State, Chain]] = {}
        self.refused: Chain | None = None

    def add(self, state: State | None, chain: Chain) -> None:
        if state is None:
            self.refused = chain if self.refused is None else chains.add(self.refused, chain)
            return
        key: Any = state
        try:
            hash(state)
        except TypeError:  # an unhashable state vector: not merged
            key = (id(chain),)
        held = self.alive.get(key)
        self.alive[key] = (state, chain if held is None else chains.add(held[1], chain))

    def chains(self) -> Iterator[Chain]:
        yield from (c for _, c in self.alive.values())
        if self.refused is not None:
            yield self.refused

    def bound(self) -> Probability:
        """P[the events are strictly ordered and fit the window]."""
        return sum((c.total() for c in self.chains()), start=0)

    def latest_first(self) -> int:
        return max(c.first + c.mass.shape[0] - 1 for c in self.chains())


class KleeneFramework(Framework):
    """Admitted interval events in; at the end of the input, every signature whose
    confidence passes ``keep``."""

    def __init__(
        self, plan: Plan, window: float | None, keep: Threshold, *, max_runs: int | None = None
    ) -> None:
        self.plan = plan
        self.budget = RunBudget(max_runs, "partial signatures of Kleene closure")
        self.steps = Steps(plan)
        self.window = window
        self.keep = keep
        self.events: list[IntervalEvent] = []
        # per positive component: its variable, whether Kleene, its event type
        self.components: list[tuple[str, bool, str]] = []
        for s in plan.states:
            if s.kind != "rest":
                self.components.append((s.var, s.kind == "first", s.event_type))

    def results(
        self, events: list[IntervalEvent], now_lower: int | None
    ) -> Iterator[ImpreciseMatch]:
        """:meth:`push` (no results before the end)."""
        self.events.extend(events)
        return iter(())

    def final_results(self) -> Iterator[ImpreciseMatch]:
        """:meth:`flush`, the signatures as the lattice grows."""
        return _Lattice(self).run()

    def _candidates(self, etype: str) -> list[IntervalEvent]:
        found = [e for e in self.events if e.type == etype]
        return sorted(found, key=lambda e: (e.lower, e.upper, e.position))

    def match(
        self,
        chosen: list[tuple[int, IntervalEvent]],
        vector: tuple[Any, ...],
        start: int,
        end: int,
        confidence: Probability,
    ) -> ImpreciseMatch:
        """The result of a signature (the chosen (component, event) pairs)."""
        plan = self.plan
        returned: dict[str, Any] = {}
        if plan.returns is not None:
            returned = dict(zip(plan.return_names, plan.returns(vector), strict=True))
        ids: dict[str, list[Any]] = {}
        positions: dict[str, list[int]] = {}
        for k, e in sorted(chosen, key=lambda c: (c[0], c[1].position)):
            var = self.components[k][0]
            ids.setdefault(var, []).append(e.id)
            positions.setdefault(var, []).append(e.position)
        return ImpreciseMatch(
            variables={v: tuple(x) for v, x in ids.items()},
            positions={v: tuple(x) for v, x in positions.items()},
            start=start,
            end=end,
            confidence=confidence,
            returned=returned,
            partition=partition_of(plan, chosen[0][1]),
        )


class _Lattice:
    """One evaluation: the partial signatures level by level (level m: m events)."""

    def __init__(self, fw: KleeneFramework) -> None:
        self.fw = fw
        self.candidates = [fw._candidates(etype) for _, _, etype in fw.components]
        self.dtype = chains.dtype_of(fw.events)
        # the begin state of each component, and the deadlines found (see _deadline)
        self.begins = [s.index for s in fw.plan.states if s.kind != "rest"]
        self.deadlines: dict[Any, float] = {}

    def run(self) -> Iterator[ImpreciseMatch]:
        """The signatures level by level, each as soon as its node is made."""
        root = Node()
        root.alive[None] = ((0, self.fw.plan.initial_vector, None), Chain(0, 0, None))
        level: dict[Sets, Node] = {(): root}
        check = self.fw.budget.check if self.fw.budget.limit is not None else None
        while level:
            grown: dict[Sets, Node] = {}
            for sets, node in level.items():
                for child in self._children(sets, node):
                    if child in grown:
                        continue
                    made = self._node(child, level)
                    if made is not None:
                        grown[child] = made
                        if check is not None:
                            check(len(level) + len(grown))
                        if len(child) == len(self.fw.components):
                            yield from self._result(child, made)
            level = grown

    def _children(self, sets: Sets, node: Node) -> Iterator[Sets]:
        """The sets grown by one event: a later candidate of the last (Kleene) component
        or a first one of the next component, not already chosen, that may fall within
        the window of the first instant."""
        comps = self.fw.components
        horizon = None
        if sets and self.fw.window is not None:
            horizon = node.latest_first() + self.fw.window
        used = {self.candidates[k][i].id for k, chosen in enumerate(sets) for i in chosen}
        k = len(sets) - 1
        if sets and comps[k][1]:
            deadline = self._deadline(sets, node)
            for i in range(sets[k][-1] + 1, len(self.candidates[k])):
                e = self.candidates[k][i]
                if (horizon is not None and e.lower > horizon) or e.lower >= deadline:
                    break
                if e.id not in used:
                    yield (*sets[:k], (*sets[k], i))
        if k + 1 < len(comps):
            for i, e in enumerate(self.candidates[k + 1]):
                if horizon is not None and e.lower > horizon:
                    break
                if e.id not in used:
                    yield (*sets, (i,))

    def _node(self, sets: Sets, level: dict[Sets, Node]) -> Node | None:
        """The partial signature ``sets`` from its predecessors (``sets`` without an
        event that can come last), or None when pruned."""
        k = len(sets) - 1
        last = sets[k]
        node = Node()
        if len(last) == 1:
            ends = [(sets[:k], last[0])]
        else:
            ends = [((*sets[:k], last[:n] + last[n + 1 :]), i) for n, i in enumerate(last)]
        for before, i in ends:
            pred = level.get(before)
            if pred is None:
                return None  # a subset was pruned: its bound bounds this one's
            if not self._append(pred, k, self.candidates[k][i], node):
                return None  # no order of this set, or of any superset, can match
        bound = node.bound()
        if not bound or not self.fw.keep(bound):
            return None
        if not self.fw.components[k][1] and self.candidates[k][last[0]].lower >= self._deadline(
            sets, node
        ):
            return None  # no event of the next component can follow
        return node

    def _deadline(self, sets: Sets, node: Node) -> float:
        """The latest instant at which an event of the component after the last one of
        ``sets`` may occur and be selected: the largest upper bound among the next
        component's candidates that its relaxed edge and the run key accept (they read
        only the single variables chosen so far). Every event of the last component
        must occur strictly before it, so one whose lower bound is at or past it makes
        the set and all its supersets fail. Infinite when no alive order tells the
        single variables or when the last component is the pattern's last."""
        k = len(sets) - 1
        if k + 1 == len(self.fw.components) or not node.alive:
            return math.inf
        singles = (k, *(s for c, s in enumerate(sets) if not self.fw.components[c][1]))
        found = self.deadlines.get(singles)
        if found is None:
            (_, vector, key), _ = next(iter(node.alive.values()))
            steps = self.fw.steps
            begin = steps.states[self.begins[k + 1]]
            found = -math.inf
            for e in self.candidates[k + 1]:
                point = e.at(e.lower)
                if steps.routed and steps.key(point) != key:
                    continue
                if e.upper > found and begin.relaxed(point, vector) is not None:
                    found = e.upper
            self.deadlines[singles] = found
        return found

    def _append(self, pred: Node, k: int, e: IntervalEvent, into: Node) -> bool:
        """The orders of ``pred`` followed by ``e`` (of component k) into ``into``; False
        when ``e`` is refused whatever the order (then so is every superset)."""
        window = self.fw.window
        for state, chain in pred.alive.values():
            taken = self._take(state, k, e)
            if isinstance(taken, Never):
                return False
            if chain.mass is None:  # the root: e is the first event
                grown = chains.begin(e, self.dtype)
            else:
                grown = chains.append(chain, e, window)
            if grown is not None:
                into.add(taken, grown)
        if pred.refused is not None:
            grown = chains.append(pred.refused, e, window)
            if grown is not None:
                into.add(None, grown)
        return True

    def _take(self, state: State, k: int, e: IntervalEvent) -> State | Never | None:
        """The plan state after selecting ``e`` into component k (value predicates only:
        timestamps are not readable over intervals); None when an edge refuses it in
        this order; NEVER when it refuses it in every order: a run key that differs, or
        a failing relaxed edge (single-event properties and conditions on single
        variables, which are bound alike in every order: SASE++ section 5.2)."""
        j, vector, key = state
        if j is None:
            return None
        steps = self.fw.steps
        point = e.at(e.lower)
        if key is None:
            key = steps.key(point)
        if key is None or (steps.routed and steps.key(point) != key):
            return NEVER
        current = steps.states[j]
        if current.var != self.fw.components[k][0]:
            if current.exit is None or current.proceed is None or not current.proceed(vector):
                return None
            j = current.exit
            current = steps.states[j]
        taken = steps.take(j, point, key, vector)
        if taken is not None:
            return (current.then, taken, key)
        return NEVER if current.relaxed(point, vector) is None else None

    def _result(self, sets: Sets, node: Node) -> list[ImpreciseMatch]:
        confidence: Probability = 0
        start = end = None
        vector = None
        for (j, vec, _), chain in node.alive.values():
            if not self._accepts(j, vec):
                continue
            confidence += chain.total()
            start = chain.start if start is None else min(start, chain.start)
            end = chain.end if end is None else max(end, chain.end)
            vector = vec if vector is None else vector
        if not isinstance(confidence, Fraction):
            confidence = float(confidence)
        if vector is None or not self.fw.keep(confidence):
            return []
        assert start is not None and end is not None
        chosen = [(k, self.candidates[k][i]) for k, s in enumerate(sets) for i in s]
        return [self.fw.match(chosen, vector, start, end, confidence)]

    def _accepts(self, j: int | None, vector: tuple[Any, ...]) -> bool:
        """Whether a run at state j with ``vector`` has matched the whole pattern."""
        if j is None:
            return True
        head = self.fw.plan.states[j]
        if head.kind != "rest" or head.exit is not None or head.proceed is None:
            return False
        return bool(head.proceed(vector))
