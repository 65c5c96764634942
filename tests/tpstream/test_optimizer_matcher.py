"""A matcher driven by the adaptive planner (section 5.4.1) finds what it finds with any
fixed evaluation order: the same matches, each at the same detection time."""

from __future__ import annotations

import itertools
import random
from typing import Any

from hypothesis import event, given, settings

from kleene.tpstream.adaptive import AdaptivePlanner
from kleene.tpstream.matcher import SituationMatcher
from kleene.tpstream.model import Allen, Constraint, Situation, TemporalMatch, TemporalPattern
from tests.tpstream.test_matcher import cases, ident, reference, run


class Planned:
    """A matcher whose planner observes it after every update and switches its order
    between updates."""

    def __init__(self, pattern: TemporalPattern, **options: Any) -> None:
        self.planner = AdaptivePlanner(pattern, **options)
        self.matcher = SituationMatcher(pattern, self.planner.order)

    def update(
        self, time: int, started: list[Situation], finished: list[Situation]
    ) -> list[TemporalMatch]:
        out = self.matcher.update(time, started, finished)
        self.planner.after_update(self.matcher)
        return out

    def flush(self, time: int) -> list[TemporalMatch]:
        return self.matcher.flush(time)


def found(matches: list[TemporalMatch]) -> dict[Any, Any]:
    got = {ident(m.situations): m.detected for m in matches}
    assert len(got) == len(matches), "duplicate match"
    return got


@settings(max_examples=40, deadline=None)
@given(cases())
def test_planned_matcher_equals_every_fixed_order(case: Any) -> None:
    pattern, streams, ticks = case
    # a jumpy planner (heavy weight, low threshold) re-plans and switches often
    planned = Planned(pattern, alpha=0.7, threshold=0.05, initial_buffer_size=1)
    got = found(run(planned, pattern, streams, ticks))
    event(f"switches: {min(planned.planner.switches, 3)}")
    assert set(got) == set(reference(pattern, streams))
    for order in itertools.permutations(pattern.symbols):
        assert found(run(SituationMatcher(pattern, order), pattern, streams, ticks)) == got


def test_switches_under_a_shifting_ratio_change_no_match() -> None:
    """Q3 over streams whose occurrence ratio shifts 1:1:1 -> 1:5:5 -> 5:1:5: the
    planner switches orders, and the matches are those of every fixed order."""
    before = frozenset({Allen.BEFORE})
    pairs = (("A", "B"), ("A", "C"), ("B", "C"))
    q3 = TemporalPattern(("A", "B", "C"), tuple(Constraint(a, b, before) for a, b in pairs), 60)
    rng = random.Random(7)
    streams: dict[str, list[Situation]] = {x: [] for x in "ABC"}
    for k, ratio in enumerate(((1, 1, 1), (1, 5, 5), (5, 1, 5))):
        for x, share in zip("ABC", ratio, strict=True):
            period = 400 / (4 * share)
            for i in range(4 * share):
                start = k * 400 + int(i * period)
                end = start + max(1, int(period * rng.uniform(0.2, 0.5)))
                streams[x].append(Situation(x, (), start, end, 0, 0))
    ticks: list[int] = []  # events only where situations start or end
    planned = Planned(q3, alpha=0.3, threshold=0.2)
    got = found(run(planned, q3, streams, ticks))
    assert planned.planner.switches >= 2
    assert got and set(got) == set(reference(q3, streams))
    for order in itertools.permutations("ABC"):
        assert found(run(SituationMatcher(q3, order), q3, streams, ticks)) == got
