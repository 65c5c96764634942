"""Evaluation orders of the TPStream matcher: cost model and enumeration (EDBT 2018,
section 5.4).

The matcher joins one situation buffer per symbol in an *evaluation order* (section
5.2, Algorithm 3). An order's cost is equation 2 over the intermediate result sizes of
equation 3, with each step's selectivity composed by equation 4 from the constraints
that become applicable at that step. The optimizer enumerates the orders that never
join a buffer without an applicable constraint (no cross product) and returns the
cheapest; the adaptive loop around it (EMA statistics, re-planning) is
:mod:`kleene.tpstream.adaptive`.

Since ``|R_i|`` depends only on the *set* of symbols joined so far (every constraint
inside the set has been applied exactly once, whatever the order), equation 2 is a sum
of terms over consecutive prefix sets, and a dynamic program over subsets finds the
exact optimum in ``O(2^n * n)`` steps, fast for the ~10 symbols of a pattern.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from kleene.tpstream.model import Allen, Constraint, TemporalPattern

Order = tuple[str, ...]

# Table 3: initial selectivity of each relation; a mirror relation has its inverse's.
# One equality of endpoints (starts, finishes, meets) or two (equals) make a relation
# rarer; the 13 relations together sum to 1 (the back-of-the-envelope reasoning).
_TABLE3 = {
    Allen.BEFORE: 0.445,
    Allen.DURING: 0.03,
    Allen.OVERLAPS: 0.01,
    Allen.STARTS: 0.0049,
    Allen.FINISHES: 0.0049,
    Allen.MEETS: 0.0049,
    Allen.EQUALS: 0.0006,
}
TABLE3: Mapping[Allen, float] = {r: _TABLE3.get(r, _TABLE3.get(r.inverse, 0.0)) for r in Allen}

# Binary searches per relation in one findMatches call (section 5.2: two range queries
# per relation, one on start and one on end timestamps, each bounded on both sides), and
# the relations a constraint may list: equation 2's bound is |P| * 13 * 4 * log2 |B|.
SEARCHES = 4
RELATIONS = 13


class CostModel(Enum):
    """How a step of the join is charged.

    ``PRINTED`` is equation 2 as the paper prints it: step i costs
    ``|R_(i-1)| * |R_i| + C_findMatches(|B_i|)`` with the bound
    ``C_findMatches(|B|) = |P| * 13 * 4 * log2 |B|``, once per step. ``SEARCHES`` is the
    reading equation 1 leads to (the default): each of the ``|R_(i-1)|`` partial results
    issues one findMatches on ``B_i`` (4 binary searches per relation of the applicable
    constraints; a scan of ``B_i`` when none applies, equation 1's term) and each of the
    ``|R_i|`` results is produced once. The printed form charges a constant per step, so
    it ranks orders by their products of intermediate sizes and, with small buffers, by
    which buffer it does not search at all; the bench of section 6.4.2
    (bench/tpstream_adaptive.py) shows it choosing the worst orders there, the
    ``SEARCHES`` form the best ones. Both take ``log2(|B| + 1)``, the probes of a binary
    search over ``|B|`` entries, defined for an empty buffer.
    """

    SEARCHES = "searches"
    PRINTED = "printed"


def step_cost(
    model: CostModel, r_prev: float, r_next: float, size: float, relations: int, pattern_size: int
) -> float:
    """The cost of joining a buffer of ``size`` situations to ``r_prev`` partial results,
    giving ``r_next``, through applicable constraints listing ``relations`` relations in
    all, in a pattern of ``pattern_size`` constraints."""
    probes = math.log2(size + 1)
    if model is CostModel.PRINTED:
        return r_prev * r_next + pattern_size * RELATIONS * SEARCHES * probes
    return r_prev * (SEARCHES * relations * probes if relations else size) + r_next


def initial_selectivity(constraint: Constraint) -> float:
    """A constraint's selectivity before anything is observed: the sum of its
    alternatives' Table 3 values (disjoint relations, so their selectivities add, as
    equation 4's inner sum does), capped at 1."""
    return min(1.0, sum(TABLE3[r] for r in constraint.relations))


@dataclass(frozen=True)
class Statistics:
    """What an order's cost is computed from: the size of each symbol's buffer and the
    selectivity of each constraint (the fraction of pairs of situations of its two
    symbols that satisfy it)."""

    buffer_sizes: Mapping[str, float]
    selectivities: Mapping[Constraint, float]


def initial_statistics(pattern: TemporalPattern, buffer_size: float) -> Statistics:
    """Table 3's selectivities and equal buffer sizes: the assumptions of the initial
    plan (section 5.4)."""
    return Statistics(
        {s: float(buffer_size) for s in pattern.symbols},
        {c: initial_selectivity(c) for c in pattern.constraints},
    )


def applicable(pattern: TemporalPattern, order: Sequence[str], i: int) -> list[Constraint]:
    """``C_i``: the constraints between ``order[i]`` and a symbol joined before it."""
    before = set(order[:i])
    x = order[i]
    return [
        c
        for c in pattern.constraints
        if (c.left == x and c.right in before) or (c.right == x and c.left in before)
    ]


def step_selectivity(constraints: Sequence[Constraint], stats: Statistics) -> float:
    """Equation 4: the product of the applicable constraints' selectivities (each
    constraint's own is already the sum over its alternatives)."""
    return math.prod(stats.selectivities[c] for c in constraints)


def intermediate_sizes(
    pattern: TemporalPattern, order: Sequence[str], stats: Statistics
) -> list[float]:
    """Equation 3: ``|R_1| = |B_1|``, ``|R_i| = |R_(i-1)| * |B_i| * s_i``."""
    sizes: list[float] = []
    for i, x in enumerate(order):
        b = stats.buffer_sizes[x]
        if i == 0:
            sizes.append(b)
        else:
            sizes.append(sizes[-1] * b * step_selectivity(applicable(pattern, order, i), stats))
    return sizes


def order_cost(
    pattern: TemporalPattern,
    order: Sequence[str],
    stats: Statistics,
    model: CostModel = CostModel.SEARCHES,
) -> float:
    """Equation 2: the sum over steps ``i = 2..n`` of :func:`step_cost`."""
    r = intermediate_sizes(pattern, order, stats)
    total = 0.0
    for i in range(1, len(order)):
        relations = sum(len(c.relations) for c in applicable(pattern, order, i))
        size = stats.buffer_sizes[order[i]]
        total += step_cost(model, r[i - 1], r[i], size, relations, len(pattern.constraints))
    return total


def neighbours(pattern: TemporalPattern) -> dict[str, set[str]]:
    """The constraint graph: the symbols each symbol shares a constraint with."""
    graph: dict[str, set[str]] = {s: set() for s in pattern.symbols}
    for c in pattern.constraints:
        graph[c.left].add(c.right)
        graph[c.right].add(c.left)
    return graph


def avoids_cross_products(pattern: TemporalPattern, order: Sequence[str]) -> bool:
    """Whether each symbol after the first has a constraint to an earlier one, except
    where no remaining symbol has one (a pattern whose constraint graph is not connected
    needs one cross product per extra component, and only then)."""
    graph = neighbours(pattern)
    for i in range(1, len(order)):
        done = set(order[:i])
        if not graph[order[i]] & done and any(graph[s] & done for s in order[i:]):
            return False
    return True


@dataclass(frozen=True)
class Ranking:
    """The cheapest orders found (best first, each with its equation-2 cost) and how
    many cross-product-free orders there are in all."""

    orders: tuple[tuple[Order, float], ...]
    candidates: int

    @property
    def best(self) -> tuple[Order, float]:
        return self.orders[0]


class OrderSearch:
    """The exact search of :func:`rank_orders` for one pattern: the constraint graph's
    structure (which steps avoid cross products, which constraints each applies) is
    worked out once, so that re-planning (section 5.4.1) only redoes the arithmetic."""

    def __init__(self, pattern: TemporalPattern, model: CostModel = CostModel.SEARCHES) -> None:
        self.pattern = pattern
        self.model = model
        symbols = pattern.symbols
        n = len(symbols)
        pos = {s: i for i, s in enumerate(symbols)}
        adj = [0] * n
        # per symbol: (other symbol, constraint index, relations), in constraint order
        links: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
        for k, c in enumerate(pattern.constraints):
            a, b = pos[c.left], pos[c.right]
            adj[a] |= 1 << b
            adj[b] |= 1 << a
            links[a].append((b, k, len(c.relations)))
            links[b].append((a, k, len(c.relations)))
        full = (1 << n) - 1
        reach = [0] * (full + 1)  # symbols with a constraint to the set
        count = [0] * (full + 1)
        # per set: its lowest symbol, the rest, the constraints from the one to the
        # other (|R| of the set), and the steps into it that avoid cross products
        self._masks: list[tuple[int, int, int, tuple[int, ...], list[tuple[int, int, int]]]] = []
        for mask in range(1, full + 1):
            low = (mask & -mask).bit_length() - 1
            rest = mask & ~(1 << low)
            inner = tuple(k for j, k, _ in links[low] if rest >> j & 1)
            reach[mask] = reach[rest] | adj[low]
            steps: list[tuple[int, int, int]] = []
            if rest == 0:
                count[mask] = 1
            for x in range(n) if rest else ():
                prev = mask & ~(1 << x)
                if not mask >> x & 1 or not count[prev]:
                    continue
                if not adj[x] & prev and reach[prev] & ~prev:
                    continue  # a cross product while a constrained symbol remains
                steps.append((x, prev, sum(r for j, _, r in links[x] if prev >> j & 1)))
                count[mask] += count[prev]
            self._masks.append((mask, low, rest, inner, steps))
        self.candidates = count[full]
        self._full = full
        self._steps: dict[Order, list[tuple[int, tuple[int, ...], int]]] = {}

    def rank(self, stats: Statistics, keep: int = 2) -> Ranking:
        """The ``keep`` cheapest cross-product-free orders under ``stats``, exactly."""
        symbols, model, m = self.pattern.symbols, self.model, len(self.pattern.constraints)
        size = [float(stats.buffer_sizes[s]) for s in symbols]
        sel = [stats.selectivities[c] for c in self.pattern.constraints]
        r = [1.0] * (self._full + 1)
        best: list[list[tuple[float, tuple[int, ...]]]] = [[] for _ in range(self._full + 1)]
        for mask, low, rest, inner, steps in self._masks:
            r[mask] = r[rest] * size[low] * math.prod(sel[k] for k in inner)
            if rest == 0:
                best[mask] = [(0.0, (low,))]
                continue
            found: list[tuple[float, tuple[int, ...]]] = []
            for x, prev, relations in steps:
                step = step_cost(model, r[prev], r[mask], size[x], relations, m)
                found += [(cost + step, (*seq, x)) for cost, seq in best[prev]]
            if len(found) > 1:
                found.sort(key=lambda cs: (_rounded(cs[0]), cs[1]))
            best[mask] = found[:keep]
        ranked = sorted(
            (
                (order, self.cost(order, size, sel), seq)
                for order, seq in ((tuple(symbols[i] for i in seq), seq) for _, seq in best[-1])
            ),
            key=lambda ocs: (_rounded(ocs[1]), ocs[2]),
        )
        return Ranking(tuple((order, cost) for order, cost, _ in ranked), self.candidates)

    def cost(self, order: Order, size: Sequence[float], sel: Sequence[float]) -> float:
        """:func:`order_cost` from sizes and selectivities listed by symbol and by
        constraint index (the same arithmetic, so the same figure)."""
        steps = self._steps.get(order)
        if steps is None:
            pos = {s: i for i, s in enumerate(self.pattern.symbols)}
            index = {c: k for k, c in reversed(list(enumerate(self.pattern.constraints)))}
            steps = self._steps[order] = [
                (
                    pos[x],
                    tuple(index[c] for c in applicable(self.pattern, order, i)),
                    sum(len(c.relations) for c in applicable(self.pattern, order, i)),
                )
                for i, x in enumerate(order)
            ]
        m = len(self.pattern.constraints)
        r_prev = size[steps[0][0]]
        total = 0.0
        for x, ks, relations in steps[1:]:
            r_next = r_prev * size[x] * math.prod(sel[k] for k in ks)
            total += step_cost(self.model, r_prev, r_next, size[x], relations, m)
            r_prev = r_next
        return total


def rank_orders(
    pattern: TemporalPattern,
    stats: Statistics,
    keep: int = 2,
    model: CostModel = CostModel.SEARCHES,
) -> Ranking:
    """The ``keep`` cheapest cross-product-free evaluation orders, exactly.

    A dynamic program over the sets of symbols joined so far (bit masks): ``|R|`` of a
    set is the product of its buffer sizes and of the selectivities of the constraints
    inside it; a step from ``S`` to ``S + {x}`` costs :func:`step_cost` of ``|R(S)|``,
    ``|R(S + {x})|`` and the constraints between ``x`` and ``S``. Each set keeps its
    ``keep`` cheapest prefixes, which makes the overall ``keep`` cheapest exact (a
    k-shortest-paths DP on a DAG). Ties go to the order listing pattern symbols first.
    (:class:`OrderSearch` keeps the structure for repeated searches.)
    """
    return OrderSearch(pattern, model).rank(stats, keep)


def _rounded(cost: float) -> float:
    """A cost to 12 significant digits, so that orders of equal cost tie whatever the
    rounding of the sums that computed it."""
    return float(f"{cost:.12g}")


def describe_constraint(c: Constraint) -> str:
    """``A meets B; A overlaps B``: a constraint as the query language states it."""
    rels = sorted(c.relations, key=list(Allen).index)
    return "; ".join(f"{c.left} {r.value} {c.right}" for r in rels)
