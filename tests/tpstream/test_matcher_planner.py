"""A planner attached to the matcher (consulted inside its update, EDBT 2018, section
5.4.1) switches orders as ``after_update`` would and never changes the matches."""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from collections.abc import Sequence

from kleene.tpstream.adaptive import AdaptivePlanner
from kleene.tpstream.matcher import SituationMatcher
from kleene.tpstream.model import Allen, Constraint, Situation, TemporalMatch, TemporalPattern

BEFORE = frozenset({Allen.BEFORE})
Q3 = TemporalPattern(
    ("A", "B", "C"),
    (Constraint("A", "B", BEFORE), Constraint("A", "C", BEFORE), Constraint("B", "C", BEFORE)),
    60,
)
Update = tuple[int, list[Situation], list[Situation]]


def shifting_updates(seed: int) -> list[Update]:
    """Situations of A, B, C whose occurrence ratio shifts 1:1:1 -> 1:12:12 -> 12:1:12
    (as in section 6.4.2), as the deriver would report them."""
    rng = random.Random(seed)
    started: dict[int, list[Situation]] = defaultdict(list)
    finished: dict[int, list[Situation]] = defaultdict(list)
    span = 1200
    for phase, ratio in enumerate(((1, 1, 1), (1, 12, 12), (12, 1, 12))):
        for symbol, share in zip("ABC", ratio, strict=True):
            n = 4 * share
            for k in range(n):
                start = phase * span + k * span // n + rng.randrange(3)
                end = start + 1 + rng.randrange(max(1, span // n // 2))
                started[start].append(Situation(symbol, (), start, None, 0, 0))
                finished[end].append(Situation(symbol, (), start, end, 0, 0))
    times = sorted(set(started) | set(finished))
    return [(t, started[t], finished[t]) for t in times]


def drive(
    matcher: SituationMatcher, calls: Sequence[Update], outside: AdaptivePlanner | None = None
) -> tuple[list[TemporalMatch], list[tuple[int, tuple[str, ...]]]]:
    """All matches, and the order after each update where it changed."""
    found: list[TemporalMatch] = []
    orders = []
    for i, (t, started, finished) in enumerate(calls):
        before = matcher.order
        found += matcher.update(t, started, finished)
        if outside is not None:
            outside.after_update(matcher)
        if matcher.order != before:
            orders.append((i, matcher.order))
    return found, orders


def key(m: TemporalMatch) -> tuple[object, ...]:
    return (m.detected, *((x, s.start, s.end) for x, s in sorted(m.situations.items())))


def test_attached_planner_switches_on_the_shift_and_keeps_the_matches() -> None:
    calls = shifting_updates(seed=3)
    attached = SituationMatcher(Q3)
    attached.attach(AdaptivePlanner(Q3, alpha=0.05, observe_every=4))
    inside, inside_orders = drive(attached, calls)
    assert len({o for _, o in inside_orders}) >= 2  # the shift makes it switch
    for order in itertools.permutations("ABC"):
        fixed, _ = drive(SituationMatcher(Q3, order), calls)
        assert sorted(map(key, fixed)) == sorted(map(key, inside))
    assert inside  # the pattern does match on this stream


class Spy:
    """A planner that records what the matcher hands it and never switches."""

    def __init__(self, observe_every: int) -> None:
        self.observe_every = observe_every
        self.order = ("A", "B", "C")
        self.seen: list[tuple[list[float], int | None]] = []
        self.queries: list[list[int] | None] = []

    def observe_counts(
        self,
        sizes: Sequence[float],
        candidates: list[int],
        survivors: list[int],
        updates: int | None = None,
        queries: Sequence[int] | None = None,
    ) -> bool:
        self.seen.append((list(sizes), updates))
        self.queries.append(None if queries is None else list(queries))
        return False


def test_a_fixed_order_matcher_never_turns_to_a_planner() -> None:
    # without a planner the matcher's one comparison per update never succeeds
    m = SituationMatcher(Q3, ("A", "B", "C"))
    turns = []
    m._consult = turns.append  # type: ignore[method-assign]
    for t, started, finished in shifting_updates(seed=2):
        m.update(t, started, finished)
    assert turns == []


def test_observations_weigh_the_ended_situations_and_come_every_k_units_of_work() -> None:
    # No update is counted: the planner's turn comes by time, at the rate of work
    # (ended situations and range queries) seen so far, and each observation stands
    # for the situations ended since the previous one (each counted exactly once).
    calls = shifting_updates(seed=4)
    ended = sum(len(f) for _, _, f in calls)
    spy = Spy(observe_every=8)
    m = SituationMatcher(Q3)
    m.attach(spy)
    sizes_seen, ends_seen, so_far = [], [], 0
    for t, started, finished in calls:
        before = len(spy.seen)
        m.update(t, started, finished)
        so_far += len(finished)
        if len(spy.seen) > before:
            sizes_seen.append(m.counters()[0])
            ends_seen.append(so_far)
    counts = [u for _, u in spy.seen]
    assert counts == [b - a for a, b in zip([0, *ends_seen], ends_seen, strict=False)]
    assert all(c is not None and c > 0 for c in counts)
    # about one observation per 8 units of work (not one per 8 updates or ends)
    work = ended + sum(m.statistics().queries) + sum(m.state()["idle"])
    assert len(calls) > 1.5 * ended and work > 2 * ended
    # (pacing by ends alone would give about ended / 8, under the band)
    assert work / 8 / 1.5 <= len(spy.seen) <= work / 8 * 1.5
    # the sizes handed over are the means of those at the interval's two ends
    assert spy.seen[0][0] == sizes_seen[0]
    for (sizes, _), now, then in zip(spy.seen[1:], sizes_seen[1:], sizes_seen[:-1], strict=True):
        assert sizes == [(a + b) / 2 for a, b in zip(now, then, strict=True)]


def skewed_updates(seed: int) -> list[Update]:
    """A rare A and frequent B and C (1:12:12), as the deriver would report them."""
    rng = random.Random(seed)
    started: dict[int, list[Situation]] = defaultdict(list)
    finished: dict[int, list[Situation]] = defaultdict(list)
    span = 1200
    for symbol, n in zip("ABC", (4, 48, 48), strict=True):
        for k in range(n):
            start = k * span // n + rng.randrange(3)
            end = start + 1 + rng.randrange(max(1, span // n // 2))
            started[start].append(Situation(symbol, (), start, None, 0, 0))
            finished[end].append(Situation(symbol, (), start, end, 0, 0))
    times = sorted(set(started) | set(finished))
    return [(t, started[t], finished[t]) for t in times]


def test_an_expensive_order_is_observed_more_often() -> None:
    # The planner's turn comes every observe_every units of work, so its share of
    # the matcher's time stays bounded and a costly order is noticed sooner: with
    # the rare A searched last, the same stream runs 6x the range queries and is
    # observed several times as often (by ends alone both would be observed alike).
    calls = skewed_updates(seed=1)
    wide = TemporalPattern(Q3.symbols, Q3.constraints, 600)
    seen, work = {}, {}
    for order in (("A", "B", "C"), ("B", "C", "A")):
        spy = Spy(observe_every=32)
        spy.order = order
        m = SituationMatcher(wide)
        m.attach(spy)
        for t, started, finished in calls:
            m.update(t, started, finished)
        seen[order] = len(spy.seen)
        work[order] = sum(len(f) for _, _, f in calls) + sum(m.statistics().queries)
    cheap, costly = ("A", "B", "C"), ("B", "C", "A")
    assert work[costly] > 5 * work[cheap]
    assert seen[costly] > 3 * seen[cheap]
    for order in seen:  # about one turn per 32 units of work
        assert work[order] / 32 / 2 <= seen[order] <= work[order] / 32 * 2


def test_the_planner_gets_the_range_query_counts_as_they_stand() -> None:
    spy = Spy(observe_every=8)
    m = SituationMatcher(Q3)
    m.attach(spy)
    for t, started, finished in shifting_updates(seed=5):
        before = len(spy.seen)
        m.update(t, started, finished)
        if len(spy.seen) > before:
            assert spy.queries[-1] == list(m.statistics().queries)
    assert len(spy.seen) > 3 and sum(spy.queries[-1] or ()) > 0


def test_one_jittering_sample_of_a_small_buffer_does_not_replan() -> None:
    # A buffer of 7 that reads 9 at one observation: held for the whole interval it
    # would move the average by 20% (weight 1 - 0.99^128 = 0.72) and re-plan; as the
    # mean of the interval's two ends (7 and 9) it stays inside the bounds.
    p = AdaptivePlanner(Q3, alpha=0.01, threshold=0.2, initial_buffer_size=7)
    assert not p.observe_counts([7, 7, 7], [1, 1, 1], [1, 1, 1], 128)
    before = p.replanned
    assert not p.observe_counts([(9 + 7) / 2, 7, 7], [1, 1, 1], [1, 1, 1], 128)
    assert p.replanned == before
    held = AdaptivePlanner(Q3, alpha=0.01, threshold=0.2, initial_buffer_size=7)
    held.observe_counts([7, 7, 7], [1, 1, 1], [1, 1, 1], 128)
    held.observe_counts([9, 7, 7], [1, 1, 1], [1, 1, 1], 128)
    assert held.replanned == before + 1


def test_attach_takes_the_planners_order_and_none_detaches() -> None:
    planner = AdaptivePlanner(Q3, observe_every=1)
    m = SituationMatcher(Q3, ("C", "B", "A") if planner.order != ("C", "B", "A") else None)
    m.attach(planner)
    assert m.order == planner.order
    m.attach(None)
    for t, started, finished in shifting_updates(seed=1)[:50]:
        m.update(t, started, finished)
    assert planner.updates == 0
