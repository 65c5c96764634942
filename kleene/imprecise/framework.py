"""The point-based evaluation framework (VLDB 2010, section 3 and Figure 2(a)): stream
expansion, pattern matching over point events, match collapsing."""

from __future__ import annotations

from collections.abc import Iterator

from kleene.compiler.plan import Plan
from kleene.imprecise.budget import RunBudget
from kleene.imprecise.collapse import Collapser, Threshold
from kleene.imprecise.expansion import StreamExpansion
from kleene.imprecise.model import IntervalEvent
from kleene.imprecise.points import PointMatching, Steps
from kleene.imprecise.result import Framework, ImpreciseMatch
from kleene.vocabulary import Strategy


class PointFramework(Framework):
    """Admitted interval events in, collapsed results out, as soon as they are final.

    ``max_runs`` bounds the runs together with the point matches waiting to be
    collapsed (:mod:`kleene.imprecise.budget`). :meth:`results` and
    :meth:`final_results` give the results lazily, collapsing one signature per result
    taken (consume one before the next call); :meth:`push` and :meth:`flush` list
    them."""

    def __init__(
        self,
        plan: Plan,
        window: float | None,
        u_max: int,
        keep: Threshold,
        *,
        max_runs: int | None = None,
    ) -> None:
        next_match = plan.strategy is Strategy.SKIP_TILL_NEXT_MATCH
        self.u_max = u_max
        self.expansion = StreamExpansion(u_max)
        steps = Steps(plan)
        budget = RunBudget(max_runs, "runs and point matches held")
        self.matching = PointMatching(steps, window, use_nelt=next_match, budget=budget)
        self.collapser = Collapser(plan, steps, window, next_match, self.matching.candidates, keep)
        # events ending this long before t_emit can matter to no run or pending result
        self.horizon = None if window is None else 2 * window + u_max + 1

    def results(
        self, events: list[IntervalEvent], now_lower: int | None
    ) -> Iterator[ImpreciseMatch]:
        """:meth:`push`, the results as an iterator that does the matching."""
        for e in events:
            self.expansion.add(e)
            self.matching.arrive(e)
        if now_lower is None:
            return iter(())
        return self._advance(self.expansion.t_emit(now_lower))

    def final_results(self) -> Iterator[ImpreciseMatch]:
        """:meth:`flush`, the results as an iterator that does the matching."""
        return self._advance(None)

    def _advance(self, t_emit: int | None) -> Iterator[ImpreciseMatch]:
        collapser = self.collapser
        for t, points in self.expansion.emit(t_emit):
            for pm in self.matching.step(t, points, collapser.held):
                collapser.add(pm)
        yield from collapser.due(t_emit)
        if t_emit is not None and self.horizon is not None:
            self.matching.forget(int(t_emit - self.horizon))
