"""One adaptive evaluation order for all partitions of a TPStream query (EDBT 2018,
section 5.4.1).

A query's partitions share the pattern and, as a rule, the shape of their data (the
cars of one expressway), so one :class:`~kleene.tpstream.adaptive.AdaptivePlanner`
serves them all: it averages the statistics of every partition's matcher invocations,
which gives the averages many more observations than a planner per partition would
get, and costs one ranking of the orders per query instead of one per key. Each
observation reads the invoked partition's buffer sizes (the sizes its join ran over)
and the constraint counts of all partitions together (each partition's counters are
cumulative; their growth since that partition's previous observation is added to the
pooled totals). With ``observe_every = k`` the updates of all partitions are counted
together and every k-th is observed, as the planner's weight per observation assumes.
A switch hands the new order to every partition's matcher; a new
partition starts with the current order. Results do not depend on the order.

Snapshots do not hold the planner's averages: a resumed matcher re-derives them from
the initial plan (Table 3's selectivities, equal buffer sizes), and every restored
partition takes the fresh planner's order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from kleene.tpstream.adaptive import AdaptivePlanner
from kleene.tpstream.model import TemporalPattern
from kleene.tpstream.optimizer import order_cost

# a partition's cumulative candidates, survivors and range queries per constraint
Counts = tuple[Sequence[int], Sequence[int], Sequence[int]]


class SharedPlanner:
    """Drives the evaluation order of every partition's ``SituationMatcher``."""

    def __init__(self, pattern: TemporalPattern, **options: Any) -> None:
        """``options`` go to :class:`AdaptivePlanner` (alpha, threshold, ...)."""
        self.planner = AdaptivePlanner(pattern, **options)
        width = len(pattern.constraints)
        self.candidates = [0] * width
        self.survivors = [0] * width
        self.queries = [0] * width
        self._seen: dict[int, Counts] = {}
        self._zeros: Counts = ([0] * width, [0] * width, [0] * width)
        self._due = self.planner.observe_every

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(self.planner.order)

    def adopt(self, matcher: Any) -> None:
        """Take a new or restored partition's matcher: the current order, and its
        counters as they stand (only their growth from now on is pooled)."""
        matcher.set_order(self.order)
        _, candidates, survivors, queries = self._counters(matcher)
        self._seen[id(matcher)] = (
            list(candidates),
            list(survivors),
            list(queries or self._zeros[2]),
        )

    def observe(self, matcher: Any, matchers: Iterable[Any]) -> None:
        """After ``matcher``'s update: every ``observe_every``-th call (counted over all
        partitions) pools its statistics; on a switch, hand the new order to all
        ``matchers`` (the next invocation uses it, no migration). A partition's counts
        between its observations are pooled at its next one."""
        self._due -= 1
        if self._due:
            return
        self._due = self.planner.observe_every
        sizes, candidates, survivors, counted = self._counters(matcher)
        queries = self._zeros[2] if counted is None else counted
        before = self._seen.get(id(matcher), self._zeros)
        if candidates != before[0] or survivors != before[1] or queries != before[2]:
            pooled = (self.candidates, self.survivors, self.queries)
            for now, then, total in zip(
                (candidates, survivors, queries), before, pooled, strict=True
            ):
                for i, (a, b) in enumerate(zip(now, then, strict=True)):
                    total[i] += a - b
            self._seen[id(matcher)] = (list(candidates), list(survivors), list(queries))
        if self.planner.observe_counts(
            sizes,
            self.candidates,
            self.survivors,
            queries=None if counted is None else self.queries,
        ):
            for m in matchers:
                m.set_order(self.order)

    def _counters(
        self, matcher: Any
    ) -> tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int] | None]:
        """The buffer sizes in symbol order and the cumulative counters: live from a
        ``SituationMatcher`` (``counters``), else from its ``statistics`` (range
        queries None when it does not count them: samples then weigh as before)."""
        counters = getattr(matcher, "counters", None)
        if counters is not None:
            sizes, candidates, survivors = counters()
            return sizes, candidates, survivors, matcher.query_counts()
        stats = matcher.statistics()
        sizes = [stats.buffer_sizes.get(x, 0) for x in self.planner.pattern.symbols]
        return sizes, stats.candidates, stats.survivors, getattr(stats, "queries", None) or None

    def explanation(self) -> str:
        return self.planner.explanation()


def fixed_order_explanation(pattern: TemporalPattern, order: Sequence[str]) -> str:
    """The explanation of an order fixed by the ``order`` option: its estimated cost
    under the initial statistics the planner would start from."""
    planner = AdaptivePlanner(pattern)
    cost = order_cost(pattern, tuple(order), planner.snapshot, planner.model)
    best, best_cost = planner.ranking.best
    return "\n".join(
        [
            f"evaluation order: {' -> '.join(order)} (fixed by the order option; "
            f"estimated cost {cost:.4g}, equation 2, {planner.model.value} form)",
            f"  the planner's initial choice would be {' -> '.join(best)} at {best_cost:.4g}",
        ]
    )
