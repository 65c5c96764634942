"""The optimizer's cost model (EDBT 2018, equations 2-4, Table 3) and its enumeration of
evaluation orders without cross products (section 5.4)."""

from __future__ import annotations

import math
from itertools import permutations

from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.tpstream.model import Allen, Constraint, TemporalPattern
from kleene.tpstream.optimizer import (
    TABLE3,
    CostModel,
    OrderSearch,
    Statistics,
    avoids_cross_products,
    initial_selectivity,
    initial_statistics,
    intermediate_sizes,
    order_cost,
    rank_orders,
)

PRINTED = CostModel.PRINTED
B, D, OV, S, F, M, E = (
    Allen.BEFORE,
    Allen.DURING,
    Allen.OVERLAPS,
    Allen.STARTS,
    Allen.FINISHES,
    Allen.MEETS,
    Allen.EQUALS,
)


def pattern(*constraints: tuple[str, str, set[Allen]]) -> TemporalPattern:
    names = sorted({x for c in constraints for x in c[:2]}, key=lambda s: (len(s), s))
    cs = tuple(Constraint(a, b, frozenset(r)) for a, b, r in constraints)
    return TemporalPattern(tuple(names), cs, 1000)


def stats(p: TemporalPattern, sizes: dict[str, float], sel: list[float]) -> Statistics:
    return Statistics(sizes, dict(zip(p.constraints, sel, strict=True)))


def test_table3_mirror_relations_equal_and_all_relations_sum_to_one() -> None:
    assert TABLE3[Allen.AFTER] == TABLE3[B] == 0.445
    assert TABLE3[Allen.CONTAINS] == TABLE3[D] == 0.03
    assert TABLE3[Allen.OVERLAPPED_BY] == TABLE3[OV] == 0.01
    for r in (S, F, M):
        assert TABLE3[r] == TABLE3[r.inverse] == 0.0049
    assert TABLE3[E] == 0.0006
    assert math.isclose(sum(TABLE3.values()), 1.0)


def test_a_constraint_sums_its_alternatives_capped_at_one() -> None:
    # Listing 1's A meets B; A overlaps B; A starts B; A during B
    aggressive = Constraint("A", "B", frozenset({M, OV, S, D}))
    assert math.isclose(initial_selectivity(aggressive), 0.0049 + 0.01 + 0.0049 + 0.03)
    assert initial_selectivity(Constraint("A", "B", frozenset(Allen))) == 1.0
    assert initial_selectivity(Constraint("A", "B", frozenset({Allen.AFTER}))) == 0.445


def test_cost_of_two_symbols_by_hand() -> None:
    p = pattern(("A", "B", {B}))
    st_ = stats(p, {"A": 4, "B": 8}, [0.445])
    # R1 = |B_first|, R2 = 4 * 8 * 0.445 = 14.24 either way; log2(|B| + 1) probes
    # printed: |R1| * |R2| + |P| * 13 * 4 * log2(|B2| + 1)
    assert math.isclose(order_cost(p, ("A", "B"), st_, PRINTED), 4 * 14.24 + 52 * math.log2(9))
    assert math.isclose(order_cost(p, ("B", "A"), st_, PRINTED), 8 * 14.24 + 52 * math.log2(5))
    # searches: |R1| * (4 searches * 1 relation * log2(|B2| + 1)) + |R2|
    assert math.isclose(order_cost(p, ("A", "B"), st_), 4 * 4 * math.log2(9) + 14.24)
    assert math.isclose(order_cost(p, ("B", "A"), st_), 8 * 4 * math.log2(5) + 14.24)
    for model in CostModel:
        assert rank_orders(p, st_, model=model).best[0] == ("A", "B")


def test_cost_of_a_chain_with_alternatives_by_hand() -> None:
    # A meets B; A overlaps B  AND  B during C: s_AB = 0.0049 + 0.01, s_BC = 0.03
    p = pattern(("A", "B", {M, OV}), ("B", "C", {D}))
    st_ = Statistics({"A": 2, "B": 4, "C": 16}, initial_statistics(p, 1).selectivities)
    r = intermediate_sizes(p, ("A", "B", "C"), st_)
    for got, want in zip(r, [2, 2 * 4 * 0.0149, 2 * 4 * 0.0149 * 16 * 0.03], strict=True):
        assert math.isclose(got, want)
    # searches: step B searches 2 relations for each of R1 = 2, step C 1 for R2 = 0.1192
    expected = 2 * (4 * 2 * math.log2(5)) + 0.1192 + 0.1192 * (4 * math.log2(17)) + 0.057216
    assert math.isclose(order_cost(p, ("A", "B", "C"), st_), expected)
    # from C: R1 = 16, R2 = 16 * 4 * 0.03 = 1.92, R3 = 1.92 * 2 * 0.0149 = 0.057216
    expected = 16 * (4 * math.log2(5)) + 1.92 + 1.92 * (4 * 2 * math.log2(3)) + 0.057216
    assert math.isclose(order_cost(p, ("C", "B", "A"), st_), expected)
    # printed, |P| = 2: C_findMatches(|B|) = 2 * 13 * 4 * log2(|B| + 1) once per step
    expected = 2 * 0.1192 + 104 * math.log2(5) + 0.1192 * 0.057216 + 104 * math.log2(17)
    assert math.isclose(order_cost(p, ("A", "B", "C"), st_, PRINTED), expected)


def test_a_step_without_constraint_scans_its_buffer() -> None:
    # two components: after A, B the join of C is a cross product (equation 1's scan)
    p = pattern(("A", "B", {B}), ("C", "D", {M}))
    st_ = stats(p, {"A": 2, "B": 3, "C": 5, "D": 7}, [0.5, 0.1])
    r2, r3, r4 = 2 * 3 * 0.5, 2 * 3 * 0.5 * 5, 2 * 3 * 0.5 * 5 * 7 * 0.1
    expected = (2 * 4 * math.log2(4) + r2) + (r2 * 5 + r3) + (r3 * 4 * math.log2(8) + r4)
    assert math.isclose(order_cost(p, ("A", "B", "C", "D"), st_), expected)


def test_step_selectivity_multiplies_the_applicable_constraints() -> None:
    # Q1 of section 6.4.1: A overlaps B AND A overlaps C AND B starts C
    p = pattern(("A", "B", {OV}), ("A", "C", {OV}), ("B", "C", {S}))
    st_ = stats(p, {"A": 10, "B": 10, "C": 10}, [0.01, 0.01, 0.0049])
    r = intermediate_sizes(p, ("B", "C", "A"), st_)
    assert math.isclose(r[1], 10 * 10 * 0.0049)
    assert math.isclose(r[2], r[1] * 10 * 0.01 * 0.01)  # both A constraints apply at once
    # the initial plan joins the most selective pair (B starts C) first (Figure 8a)
    best = rank_orders(p, initial_statistics(p, 100)).best[0]
    assert set(best[:2]) == {"B", "C"}


def test_cross_products_are_avoided_when_the_graph_allows() -> None:
    p = pattern(("A", "B", {B}), ("B", "C", {M}))
    assert avoids_cross_products(p, ("A", "B", "C"))
    assert avoids_cross_products(p, ("B", "C", "A"))
    assert not avoids_cross_products(p, ("A", "C", "B"))
    # two components {A, B} and {C, D}: one cross product, after a whole component
    q = pattern(("A", "B", {B}), ("C", "D", {M}))
    assert avoids_cross_products(q, ("A", "B", "D", "C"))
    assert not avoids_cross_products(q, ("A", "C", "B", "D"))
    ranking = rank_orders(q, initial_statistics(q, 10), keep=100)
    assert ranking.candidates == 8 == len(ranking.orders)
    assert all(avoids_cross_products(q, o) for o, _ in ranking.orders)


def test_ten_symbols_counts_and_optimum() -> None:
    # a star S0 - Si: 2 * 9! orders avoid cross products (start at the centre, or at a
    # leaf followed by the centre); a chain of 10 has 2^9 (grow the interval either way)
    star = pattern(*(("S0", f"S{i}", {B}) for i in range(1, 10)))
    assert rank_orders(star, initial_statistics(star, 100)).candidates == 2 * math.factorial(9)
    chain = pattern(*((f"S{i}", f"S{i + 1}", {M}) for i in range(9)))
    assert rank_orders(chain, initial_statistics(chain, 100)).candidates == 2**9
    # buffers of 10^4 and selectivities 10^-4, but S9 holds one situation: a prefix
    # holding S9 has |R| = 1, any other 10^4. Reversed, each step searches 10^4 + 1
    # entries for one partial result and yields one; any other start joins a second
    # symbol to R1 = 10^4 partial results
    sizes = {s: 10_000.0 for s in chain.symbols} | {"S9": 1.0}
    st_ = Statistics(sizes, dict.fromkeys(chain.constraints, 1e-4))
    reverse = tuple(f"S{i}" for i in range(9, -1, -1))
    assert math.isclose(order_cost(chain, reverse, st_), 9 * (4 * math.log2(10_001) + 1))
    assert rank_orders(chain, st_).best[0] == tuple(f"S{i}" for i in range(9, -1, -1))


# --- random patterns against brute force ---------------------------------------------


def components(p: TemporalPattern) -> dict[str, int]:
    """Union-find over the constraint graph: each symbol's component."""
    parent = {s: s for s in p.symbols}

    def find(s: str) -> str:
        while parent[s] != s:
            s = parent[s]
        return s

    for c in p.constraints:
        parent[find(c.left)] = find(c.right)
    return {s: hash(find(s)) for s in p.symbols}


def brute_force_valid(p: TemporalPattern, order: tuple[str, ...]) -> bool:
    """A step without a constraint to the prefix is allowed only once the prefix is a
    union of whole components of the constraint graph."""
    comp = components(p)
    for i in range(1, len(order)):
        prefix = set(order[:i])
        linked = any(
            {c.left, c.right} == {order[i], other} for c in p.constraints for other in prefix
        )
        closed = all(comp[s] not in {comp[t] for t in prefix} for s in order[i:])
        if not linked and not closed:
            return False
    return True


@st.composite
def patterns_and_stats(
    draw: st.DrawFn, max_symbols: int = 5, connected: bool = False
) -> tuple[TemporalPattern, Statistics]:
    n = draw(st.integers(2, max_symbols))
    names = tuple("ABCDEFG"[:n])
    pairs = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :]]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=len(pairs) + 1))
    if connected:  # a random spanning tree first
        chosen += [(names[draw(st.integers(0, i - 1))], names[i]) for i in range(1, n)]
    rels = st.frozensets(st.sampled_from(list(Allen)), min_size=1, max_size=4)
    constraints = tuple(Constraint(a, b, draw(rels)) for a, b in chosen)
    p = TemporalPattern(names, constraints, 100)
    size = st.one_of(st.integers(0, 2000).map(float), st.floats(0.0, 50.0))
    sizes = {s: draw(size) for s in names}
    sel = {c: draw(st.floats(0.0, 1.0)) for c in constraints}
    return p, Statistics(sizes, sel)


@settings(max_examples=150, deadline=None)
@given(patterns_and_stats(), st.sampled_from(CostModel))
def test_chosen_order_is_the_argmin_over_cross_product_free_orders(
    case: tuple[TemporalPattern, Statistics], model: CostModel
) -> None:
    p, st_ = case
    valid = [o for o in permutations(p.symbols) if brute_force_valid(p, o)]
    costs = sorted(order_cost(p, o, st_, model) for o in valid)
    ranking = rank_orders(p, st_, model=model)
    assert ranking.candidates == len(valid)
    (order, cost), (_, second) = ranking.orders[0], ranking.orders[1]
    assert order in valid
    assert math.isclose(cost, order_cost(p, order, st_, model))
    assert math.isclose(cost, costs[0], rel_tol=1e-9, abs_tol=1e-9)
    assert math.isclose(second, costs[1], rel_tol=1e-9, abs_tol=1e-9)
    assert all(avoids_cross_products(p, o) == (o in valid) for o in permutations(p.symbols))


@settings(max_examples=10, deadline=None)
@given(patterns_and_stats(max_symbols=7))
def test_argmin_holds_for_larger_patterns(case: tuple[TemporalPattern, Statistics]) -> None:
    p, st_ = case
    best = min(order_cost(p, o, st_) for o in permutations(p.symbols) if brute_force_valid(p, o))
    assert math.isclose(rank_orders(p, st_).best[1], best, rel_tol=1e-9, abs_tol=1e-9)


@settings(max_examples=60, deadline=None)
@given(patterns_and_stats(connected=True))
def test_no_cross_product_in_a_connected_pattern(case: tuple[TemporalPattern, Statistics]) -> None:
    p, st_ = case
    order = rank_orders(p, st_).best[0]
    for i in range(1, len(order)):
        x, prefix = order[i], set(order[:i])
        assert any(
            {c.left, c.right} - {x} <= prefix < prefix | {x} and x in (c.left, c.right)
            for c in p.constraints
        )


@settings(max_examples=60, deadline=None)
@given(patterns_and_stats())
def test_one_cross_product_per_extra_component(case: tuple[TemporalPattern, Statistics]) -> None:
    p, st_ = case
    order = rank_orders(p, st_).best[0]
    crossings = sum(
        not any(
            x in (c.left, c.right) and {c.left, c.right} - {x} <= set(order[:i])
            for c in p.constraints
        )
        for i, x in enumerate(order)
        if i
    )
    assert crossings == len(set(components(p).values())) - 1


@settings(max_examples=60, deadline=None)
@given(patterns_and_stats(), st.sampled_from(CostModel), st.data())
def test_a_reused_search_gives_the_cost_models_exact_figures(
    case: tuple[TemporalPattern, Statistics], model: CostModel, data: st.DataObject
) -> None:
    """The planner keeps one OrderSearch per pattern and re-ranks with new statistics:
    each ranking and each cost it computes is exactly equation 2's (order_cost)."""
    p, first = case
    search = OrderSearch(p, model)
    for _ in range(2):
        st_ = Statistics(
            {s: data.draw(st.floats(0.0, 500.0)) for s in p.symbols},
            {c: data.draw(st.floats(0.0, 1.0)) for c in p.constraints},
        )
        for stats_ in (first, st_):
            ranking = search.rank(stats_)
            for order, cost in ranking.orders:
                assert cost == order_cost(p, order, stats_, model)
            size = [float(stats_.buffer_sizes[s]) for s in p.symbols]
            sel = [stats_.selectivities[c] for c in p.constraints]
            for order in permutations(p.symbols):
                assert search.cost(order, size, sel) == order_cost(p, order, stats_, model)
