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


def test_attached_planner_switches_as_after_update_and_keeps_the_matches() -> None:
    calls = shifting_updates(seed=3)
    attached = SituationMatcher(Q3)
    attached.attach(AdaptivePlanner(Q3, alpha=0.05, observe_every=4))
    inside, inside_orders = drive(attached, calls)
    planner = AdaptivePlanner(Q3, alpha=0.05, observe_every=4)
    outside, outside_orders = drive(SituationMatcher(Q3, planner.order), calls, planner)
    assert inside_orders == outside_orders
    assert len({o for _, o in inside_orders}) >= 2  # the shift makes it switch
    assert sorted(map(key, inside)) == sorted(map(key, outside))
    for order in itertools.permutations("ABC"):
        fixed, _ = drive(SituationMatcher(Q3, order), calls)
        assert sorted(map(key, fixed)) == sorted(map(key, inside))
    assert inside  # the pattern does match on this stream


def test_attach_takes_the_planners_order_and_none_detaches() -> None:
    planner = AdaptivePlanner(Q3, observe_every=1)
    m = SituationMatcher(Q3, ("C", "B", "A") if planner.order != ("C", "B", "A") else None)
    m.attach(planner)
    assert m.order == planner.order
    m.attach(None)
    for t, started, finished in shifting_updates(seed=1)[:50]:
        m.update(t, started, finished)
    assert planner.updates == 0
