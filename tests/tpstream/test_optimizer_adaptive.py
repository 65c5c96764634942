"""The adaptive planner: EMA statistics, re-planning on drift past the threshold, plan
switches (EDBT 2018, section 5.4.1)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.errors import KleeneError
from kleene.tpstream.adaptive import AdaptivePlanner, drift, ema
from kleene.tpstream.model import Allen, Constraint, TemporalPattern
from kleene.tpstream.optimizer import initial_statistics, order_cost, rank_orders
from kleene.tpstream.planning import SharedPlanner

BEFORE = frozenset({Allen.BEFORE})
# Q3 of section 6.4: A before B AND A before C AND B before C
Q3 = TemporalPattern(
    ("A", "B", "C"),
    (Constraint("A", "B", BEFORE), Constraint("A", "C", BEFORE), Constraint("B", "C", BEFORE)),
    10_000,
)


@dataclass(frozen=True)
class Observed:
    """The statistics the matcher reports (cumulative query counts per constraint)."""

    buffer_sizes: Mapping[str, int]
    candidates: tuple[int, ...]
    survivors: tuple[int, ...]


@dataclass
class Feed:
    """Drives a planner as a matcher would: per update, buffer sizes and per constraint
    (survivors, candidates) added to cumulative counts."""

    planner: AdaptivePlanner
    candidates: list[int] = field(default_factory=lambda: [0, 0, 0])
    survivors: list[int] = field(default_factory=lambda: [0, 0, 0])

    def __call__(
        self, a: float, b: float, c: float, queried: Mapping[int, tuple[int, int]] = {}
    ) -> bool:
        for i, (survived, ran) in queried.items():
            self.survivors[i] += survived
            self.candidates[i] += ran
        sizes = {"A": a, "B": b, "C": c}
        obs = Observed(sizes, tuple(self.candidates), tuple(self.survivors))  # type: ignore[arg-type]
        return self.planner.observe(obs)


def test_ema_arithmetic() -> None:
    assert ema(100.0, 140.0, 0.5) == 120.0
    assert math.isclose(ema(10.0, 0.0, 0.01), 9.9)
    p = AdaptivePlanner(Q3, alpha=0.25, threshold=100, initial_buffer_size=8)
    xs = [4.0, 20.0, 0.0, 12.0]
    for x in xs:
        Feed(p)(x, 8, 8)
    # closed form: (1 - a)^k * prior + sum_j a * (1 - a)^(k - j) * x_j
    expected = 0.75**4 * 8 + sum(0.25 * 0.75 ** (3 - j) * x for j, x in enumerate(xs))
    assert math.isclose(p.sizes["A"], expected)
    assert p.sizes["B"] == p.sizes["C"] == 8.0


def test_selectivity_ema_starts_at_table3_and_follows_each_updates_counts() -> None:
    p = AdaptivePlanner(Q3, alpha=0.5, threshold=100)
    feed = Feed(p)
    ab, ac, bc = Q3.constraints
    feed(100, 100, 100, {0: (45, 1000)})
    assert math.isclose(p.selectivities[ab], 0.5 * 0.045 + 0.5 * 0.445)
    feed(100, 100, 100, {0: (10, 10), 2: (7, 7)})  # this update's counts, not the totals
    assert math.isclose(p.selectivities[ab], 0.5 * 1.0 + 0.25 * 0.045 + 0.25 * 0.445)
    assert math.isclose(p.selectivities[bc], 0.5 + 0.5 * 0.445)
    assert p.selectivities[ac] == 0.445  # never queried: Table 3's value
    feed(100, 100, 100)  # nothing queried: no change
    assert math.isclose(p.selectivities[bc], 0.5 + 0.5 * 0.445)


def test_counters_that_go_back_count_from_zero() -> None:
    p = AdaptivePlanner(Q3, alpha=0.5, threshold=100)
    p.observe(Observed({"A": 1, "B": 1, "C": 1}, (1000, 0, 0), (500, 0, 0)))
    p.observe(Observed({"A": 1, "B": 1, "C": 1}, (10, 0, 0), (1, 0, 0)))  # a restored matcher
    assert math.isclose(p.selectivities[Q3.constraints[0]], 0.5 * 0.1 + 0.25 * 0.5 + 0.25 * 0.445)


def test_replans_exactly_past_the_threshold() -> None:
    p = AdaptivePlanner(Q3, alpha=0.5, threshold=0.2, initial_buffer_size=100)
    Feed(p)(140, 100, 100)  # EMA 120: drift exactly 0.2, not past it
    assert p.replanned == 0
    Feed(p)(120, 100, 100)  # EMA stays 120
    assert p.replanned == 0
    Feed(p)(120.0002, 100, 100)  # EMA 120.0001: past
    assert p.replanned == 1
    assert p.snapshot.buffer_sizes["A"] == pytest.approx(120.0001)
    Feed(p)(120.0001, 100, 100)  # measured from the new snapshot: no drift
    assert p.replanned == 1


def test_a_vanishing_buffer_stops_replanning_at_the_floor() -> None:
    p = AdaptivePlanner(Q3, alpha=0.5, threshold=0.2, initial_buffer_size=100)
    for _ in range(100):
        Feed(p)(0, 100, 100)
    # EMA_k = 100 / 2^k: each halving drifts 50% (k = 1..6); at k = 7 the EMA, 0.78, counts
    # as the floor 1, 36% below 1.5625; from then on it stays at the floor
    assert p.replanned == 7


def test_q3_adapts_to_the_occurrence_ratio_and_ties_do_not_switch() -> None:
    p = AdaptivePlanner(Q3, alpha=0.5, threshold=0.2, initial_buffer_size=100)
    first = p.order
    for _ in range(20):  # all buffers grow alike: every order costs the same
        Feed(p)(300, 300, 300)
    assert p.replanned > 0 and p.switches == 0 and p.order == first
    for _ in range(30):  # 1:50:50: start from the small buffer A
        Feed(p)(10, 500, 500)
    assert p.order[0] == "A"
    switches = p.switches
    for _ in range(30):  # 50:1:50: start from B
        Feed(p)(500, 10, 500)
    assert p.order[0] == "B" and p.switches == switches + 1
    order, cost = p.plan
    assert cost == pytest.approx(rank_orders(Q3, p.snapshot).best[1])
    assert cost == pytest.approx(order_cost(Q3, order, p.snapshot))


def test_observe_reports_a_switch() -> None:
    p = AdaptivePlanner(Q3, alpha=0.9, threshold=0.2)
    assert p.order == ("A", "B", "C")  # all orders tie initially: the pattern's order
    assert Feed(p)(1000, 10, 1000) is True
    assert p.order[0] == "B" and p.switches == 1
    assert Feed(p)(1000, 10, 1000) is False


def test_explanation_names_order_cost_runner_up_and_statistics() -> None:
    p = AdaptivePlanner(Q3, alpha=0.9, threshold=0.2)
    Feed(p)(10, 1000, 1000, {2: (3, 10)})
    text = p.explanation()
    order, cost = p.plan
    assert f"evaluation order: {' -> '.join(order)} (estimated cost {cost:.4g}" in text
    runner = next(o for o, _ in p.ranking.orders if o != order)
    assert f"next best {' -> '.join(runner)}" in text
    assert "(a tie)" in text  # A -> B -> C and A -> C -> B: R2 = 19 * 910 * 0.445 either way
    assert "of 6 orders without cross products" in text
    assert "buffer A: 19 situations" in text  # 0.9 * 10 + 0.1 * 100
    assert "B before C: selectivity 0.3145 (observed)" in text  # 0.9 * 0.3 + 0.1 * 0.445
    assert "A before B: selectivity 0.445 (Table 3)" in text
    assert "drifted" in text and "searches form" in text


def test_bad_options_are_kleene_errors() -> None:
    for kwargs in (
        {"alpha": 0.0},
        {"alpha": 1.0},
        {"threshold": -1},
        {"initial_buffer_size": 0},
        {"observe_every": 0},
    ):
        with pytest.raises(KleeneError):
            AdaptivePlanner(Q3, **kwargs)  # type: ignore[arg-type]


# --- random observation sequences against a model of section 5.4.1 --------------------

counts = st.integers(1, 60).flatmap(lambda ran: st.tuples(st.integers(0, ran), st.just(ran)))
observation = st.tuples(
    st.lists(st.integers(0, 400), min_size=3, max_size=3),
    st.dictionaries(st.integers(0, 2), counts, max_size=3),
)


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from([0.01, 0.1, 0.5, 0.9]),
    st.sampled_from([0.0, 0.05, 0.2, 1.0]),
    st.lists(observation, min_size=1, max_size=30),
)
def test_replanning_matches_the_drift_rule(
    alpha: float, threshold: float, stream: list[tuple[list[int], dict[int, tuple[int, int]]]]
) -> None:
    p = AdaptivePlanner(Q3, alpha=alpha, threshold=threshold, initial_buffer_size=50)
    prior = initial_statistics(Q3, 50)
    avg = {
        **prior.buffer_sizes,
        **{i: prior.selectivities[c] for i, c in enumerate(Q3.constraints)},
    }
    snap = dict(avg)
    floors = {"A": 1.0, "B": 1.0, "C": 1.0, 0: 1e-4, 1: 1e-4, 2: 1e-4}
    replans = 0
    feed = Feed(p)
    for sizes, queried in stream:
        observed: dict[str | int, float] = dict(zip("ABC", sizes, strict=True))
        observed |= {i: survived / ran for i, (survived, ran) in queried.items()}
        for k, x in observed.items():
            avg[k] = alpha * x + (1 - alpha) * avg[k]
        bases = {k: max(snap[k], floors[k]) for k in avg}
        moved = any(
            not bases[k] * (1 - threshold) <= max(avg[k], floors[k]) <= bases[k] * (1 + threshold)
            for k in avg
        )
        if moved:
            replans += 1
            snap = dict(avg)
        feed(*sizes, queried)
        assert p.replanned == replans
    _, cost = p.plan
    # the active order is always a cheapest one for the snapshot it was computed from
    assert cost == pytest.approx(rank_orders(Q3, p.snapshot).best[1], rel=1e-9, abs=1e-9)


def test_drift_is_relative_with_a_floor() -> None:
    assert drift(100.0, 120.0, 1.0) == 0.2
    assert drift(100.0, 80.0, 1.0) == 0.2
    assert drift(0.0, 0.5, 1.0) == 0.0
    assert drift(0.5, 2.0, 1.0) == 1.0


@dataclass
class FakeMatcher:
    """Reports the buffer sizes it is given and records the orders it is handed."""

    sizes: dict[str, int]
    orders: list[tuple[str, ...]] = field(default_factory=list)
    asked: int = 0

    def statistics(self) -> Observed:
        self.asked += 1
        return Observed(dict(self.sizes), (0, 0, 0), (0, 0, 0))

    def set_order(self, order: Sequence[str]) -> None:
        self.orders.append(tuple(order))


def test_after_update_observes_every_kth_call_and_sets_the_order() -> None:
    p = AdaptivePlanner(Q3, alpha=0.9, threshold=0.2, observe_every=3)
    m = FakeMatcher({"A": 1000, "B": 10, "C": 1000})
    switched = [p.after_update(m) for _ in range(7)]
    assert m.asked == 2 and p.updates == 2  # calls 3 and 6
    assert switched == [False, False, True, False, False, False, False]
    assert m.orders == [p.order] and p.order[0] == "B"


def test_sparse_observations_keep_alpha_per_update() -> None:
    p = AdaptivePlanner(Q3, alpha=0.1, threshold=100, initial_buffer_size=50, observe_every=4)
    m = FakeMatcher({"A": 10, "B": 50, "C": 50})
    for _ in range(4):
        p.after_update(m)
    # one observation standing for 4 updates of weight 0.1: 0.9^4 of the prior is left
    assert math.isclose(p.sizes["A"], 0.9**4 * 50 + (1 - 0.9**4) * 10)


def test_a_vanishing_buffer_ranks_at_the_floor() -> None:
    # 50:1:50 of section 6.4.2: B's buffer is empty nearly always. Ranked by its raw
    # average (towards 0) every order's cost shrinks towards 0 with it, and in the
    # bench the planner left B -> A -> C again; the ranking takes it at the floor.
    p = AdaptivePlanner(Q3, alpha=0.05, threshold=0.2, initial_buffer_size=8)
    feed = Feed(p)
    for _ in range(3000):
        feed(8, 0, 8, {0: (1, 10), 1: (10, 10), 2: (0, 0)})
    assert p.sizes["B"] < 1e-30
    assert p.snapshot.buffer_sizes == {"A": p.sizes["A"], "B": 1.0, "C": p.sizes["C"]}
    assert p.order[0] == "B"
    assert p.plan[1] > 1  # not a cost scaled towards 0


def test_the_shared_planner_observes_every_kth_update_of_all_partitions() -> None:
    # Its weight per observation stands for observe_every updates: observing every
    # update as well would weigh each update k times over.
    shared = SharedPlanner(Q3, alpha=0.1, threshold=100, initial_buffer_size=50, observe_every=4)
    one, two = FakeMatcher({"A": 10, "B": 50, "C": 50}), FakeMatcher({"A": 10, "B": 50, "C": 50})
    for m in (one, two):
        shared.adopt(m)
    for m in (one, two, one, two, one, two, one, two, one):
        shared.observe(m, [one, two])
    assert shared.planner.updates == 2 and one.asked + two.asked == 2 + 2  # 2 by adopt
    assert math.isclose(shared.planner.sizes["A"], 0.9**8 * 50 + (1 - 0.9**8) * 10)


def test_the_reason_keeps_the_figures_of_its_replan() -> None:
    # worded only when asked, from the averages of the re-plan it explains
    p = AdaptivePlanner(Q3, alpha=0.5, threshold=0.2, initial_buffer_size=100)
    Feed(p)(200, 100, 100)  # EMA of A 150: 50% past the snapshot
    assert p.replanned == 1
    reason = p.reason
    assert reason == "re-planned after update 1: buffer A drifted by 50%"
    Feed(p)(160, 100, 100)  # EMA 155: within 20% of the new snapshot, no re-plan
    assert p.replanned == 1 and p.reason == reason
    assert p.largest_drift() == ("buffer A", pytest.approx(5 / 150))


def test_a_constraint_stated_twice_pools_its_counts() -> None:
    ab = Constraint("A", "B", BEFORE)
    twice = TemporalPattern(("A", "B"), (ab, ab), 100)
    p = AdaptivePlanner(twice, alpha=0.5, threshold=100)
    p.observe(Observed({"A": 1, "B": 1}, (10, 30), (1, 7)))
    assert math.isclose(p.selectivities[ab], 0.5 * (8 / 40) + 0.5 * 0.445)
    p.observe(Observed({"A": 1, "B": 1}, (10, 40), (1, 7)))  # only the second grew
    assert math.isclose(p.selectivities[ab], 0.5 * 0.0 + 0.25 * (8 / 40) + 0.25 * 0.445)


def test_a_selectivity_sample_weighs_as_the_range_queries_behind_it() -> None:
    # Section 5.4.1 folds one sample per update that measured a constraint. An
    # observation standing for 128 updates in which `A before B` was queried twice
    # (finding nothing) moves its average 1 - 0.99^2 of the way, and does not
    # re-plan; the same sample behind 128 queries or more (at most one per update
    # counts) moves it 1 - 0.99^128 of the way, past the threshold.
    ab = Q3.constraints[0]
    prior = AdaptivePlanner(Q3).selectivities[ab]
    few = AdaptivePlanner(Q3, alpha=0.01, threshold=0.2, initial_buffer_size=7)
    assert not few.observe_counts([7, 7, 7], [10, 0, 0], [0, 0, 0], 128, [2, 0, 0])
    assert math.isclose(few.selectivities[ab], prior * 0.99**2)
    assert few.replanned == 0
    for queries in (128, 500):
        many = AdaptivePlanner(Q3, alpha=0.01, threshold=0.2, initial_buffer_size=7)
        many.observe_counts([7, 7, 7], [10, 0, 0], [0, 0, 0], 128, [queries, 0, 0])
        assert math.isclose(many.selectivities[ab], prior * 0.99**128)
        assert many.replanned == 1
    # without query counts the sample weighs as the whole interval, as before
    plain = AdaptivePlanner(Q3, alpha=0.01, threshold=0.2, initial_buffer_size=7)
    plain.observe_counts([7, 7, 7], [10, 0, 0], [0, 0, 0], 128)
    assert math.isclose(plain.selectivities[ab], prior * 0.99**128)


def test_a_sample_without_counted_queries_weighs_as_the_interval() -> None:
    # Candidates grew but no range query was counted behind them (counters restored
    # from a state saved before queries were counted): the sample weighs as the
    # ended situations, neither as nothing nor as zero queries.
    ab = Q3.constraints[0]
    prior = AdaptivePlanner(Q3).selectivities[ab]
    planner = AdaptivePlanner(Q3, alpha=0.01, threshold=0.2, initial_buffer_size=7)
    planner.observe_counts([7, 7, 7], [10, 0, 0], [0, 0, 0], 16, [0, 0, 0])
    assert math.isclose(planner.selectivities[ab], prior * 0.99**16)
    assert ab in planner.observed


def test_an_observation_for_negative_updates_is_refused() -> None:
    planner = AdaptivePlanner(Q3)
    with pytest.raises(KleeneError, match=">= 0 updates"):
        planner.observe_counts([1, 1, 1], [0, 0, 0], [0, 0, 0], -1)


def test_the_shared_planner_pools_the_range_queries_of_all_partitions() -> None:
    from kleene.tpstream.matcher import SituationMatcher
    from kleene.tpstream.model import Situation

    shared = SharedPlanner(Q3, observe_every=1)
    seen: list[list[int] | None] = []
    real = shared.planner.observe_counts

    def spy(sizes, candidates, survivors, updates=None, queries=None):  # type: ignore[no-untyped-def]
        seen.append(None if queries is None else list(queries))
        return real(sizes, candidates, survivors, updates, queries)

    shared.planner.observe_counts = spy  # type: ignore[method-assign]
    one, two = SituationMatcher(Q3), SituationMatcher(Q3)
    for m in (one, two):
        shared.adopt(m)
    for k in range(20):
        for m in (one, two):
            for x, offset in zip("ABC", (0, 10, 20), strict=True):
                t = 100 * k + offset
                m.update(t, [Situation(x, (), t, None, 0, 0)], [])
                shared.observe(m, [one, two])
                m.update(t + 5, [], [Situation(x, (), t, t + 5, 0, 0)])
                shared.observe(m, [one, two])
    total = [a + b for a, b in zip(one.query_counts(), two.query_counts(), strict=True)]
    assert seen[-1] == total and sum(total) > 0
