"""Adaptive evaluation orders: EMA statistics and re-planning (EDBT 2018, section 5.4.1).

After each matcher update the planner folds the matcher's buffer sizes and observed
constraint selectivities into exponential moving averages,
``EMA_i = alpha * x_i + (1 - alpha) * EMA_(i-1)``. The active plan keeps a snapshot of
the averages it was computed from; once any average differs from its snapshot by more
than the threshold (relatively), the order is recomputed from the current averages.
The matcher keeps no intermediate results, so a new order takes effect at its next
invocation at no migration cost (``SituationMatcher.set_order``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Protocol

from kleene.errors import KleeneError
from kleene.tpstream.model import Constraint, TemporalPattern
from kleene.tpstream.optimizer import (
    CostModel,
    Order,
    OrderSearch,
    Ranking,
    Statistics,
    describe_constraint,
    initial_statistics,
    order_cost,
)

# Section 6.4.2's settings: smoothing factor 0.01, migration threshold 0.2.
ALPHA = 0.01
THRESHOLD = 0.2
# The equal buffer size the initial plan assumes (section 5.4 gives none; with equal
# sizes the choice rarely depends on it).
INITIAL_BUFFER_SIZE = 100.0
# Below these, values count as these when measuring drift: a buffer of 0.3 situations
# on average is no different from one of 0.1, and an average decaying towards zero must
# not trigger re-planning forever.
SIZE_FLOOR = 1.0
SELECTIVITY_FLOOR = 1e-4


class MatcherStatistics(Protocol):
    """What the planner reads from the matcher after an update: each symbol's buffer
    size and, per constraint (by index in the pattern), cumulative counts of the
    buffered situations its range queries ran over (``candidates``) and of those that
    satisfied it (``survivors``). Their growth over one update is the selectivity the
    constraint showed in it (the fraction of the pairs checked that satisfied it).
    A matcher may also count the range queries that measured each constraint
    (``queries``, read when present): a sample then weighs as the queries behind it."""

    @property
    def buffer_sizes(self) -> Mapping[str, int]: ...

    @property
    def candidates(self) -> Sequence[int]: ...

    @property
    def survivors(self) -> Sequence[int]: ...


class Replannable(Protocol):
    """A matcher as the planner drives it (``SituationMatcher``)."""

    def statistics(self) -> MatcherStatistics: ...

    def set_order(self, order: Sequence[str]) -> None: ...


def ema(previous: float, value: float, alpha: float) -> float:
    """One step of the exponential moving average (section 5.4.1)."""
    return alpha * value + (1 - alpha) * previous


def drift(before: float, now: float, floor: float) -> float:
    """The relative difference of ``now`` from ``before``, values under ``floor``
    counting as ``floor``. A statistic has drifted past threshold ``t`` when ``now``
    (at least ``floor``) leaves ``[B * (1 - t), B * (1 + t)]``, ``B = max(before,
    floor)``: the planner checks these bounds, this figure is for the explanation."""
    return abs(max(now, floor) - max(before, floor)) / max(before, floor)


class AdaptivePlanner:
    """The evaluation order of one temporal pattern, kept cheapest as the stream changes.

    ``after_update(matcher)`` after each matcher update (or ``observe(statistics)``
    and, when it returns True, ``matcher.set_order(order)``). The paper observes after
    every update (``observe_every=1``); observing every k-th spares the statistics'
    cost where updates are cheap, each observation then weighing
    ``1 - (1 - alpha)^k`` (k updates of weight ``alpha`` on a value held in between), so
    that ``alpha`` keeps its time scale in updates. ``replanned``
    counts the recomputations drift triggered, ``switches`` those that changed the
    order.
    """

    def __init__(
        self,
        pattern: TemporalPattern,
        *,
        alpha: float = ALPHA,
        threshold: float = THRESHOLD,
        initial_buffer_size: float = INITIAL_BUFFER_SIZE,
        size_floor: float = SIZE_FLOOR,
        selectivity_floor: float = SELECTIVITY_FLOOR,
        observe_every: int = 1,
        model: CostModel = CostModel.SEARCHES,
    ) -> None:
        if not 0 < alpha < 1:
            raise KleeneError(f"the smoothing factor alpha must be in (0, 1), not {alpha}")
        if threshold < 0:
            raise KleeneError(f"the re-planning threshold must be >= 0, not {threshold}")
        if initial_buffer_size <= 0:
            raise KleeneError(f"the initial buffer size must be > 0, not {initial_buffer_size}")
        if observe_every < 1:
            raise KleeneError(f"observe_every must be a positive count, not {observe_every}")
        self.pattern = pattern
        self.alpha = alpha
        # k updates of weight alpha on a value held constant between observations
        self.weight = 1 - (1 - alpha) ** observe_every
        self._keep = 1 - self.weight
        self.threshold = threshold
        self.size_floor = size_floor
        self.selectivity_floor = selectivity_floor
        self.observe_every = observe_every
        self.model = model
        self._calls = 0
        prior = initial_statistics(pattern, initial_buffer_size)
        # One average per buffer, then one per distinct constraint, in flat lists (the
        # planner runs between matcher updates and must stay cheap next to them).
        unique = list(dict.fromkeys(pattern.constraints))
        self._keys: list[str | Constraint] = [*pattern.symbols, *unique]
        self._avg = [*prior.buffer_sizes.values(), *(prior.selectivities[c] for c in unique)]
        self._floors = [size_floor] * len(pattern.symbols) + [selectivity_floor] * len(unique)
        slot = {c: len(pattern.symbols) + j for j, c in enumerate(unique)}
        self._slots = [slot[c] for c in pattern.constraints]
        # the counters as last read, and which averages have seen an observation
        self._counted_c = [0] * len(self._slots)
        self._counted_s = [0] * len(self._slots)
        self._counted_q = [0] * len(self._slots)
        self._queried = [False] * len(self._avg)
        self.updates = 0
        self.replanned = 0
        self.switches = 0
        # why the active plan: None for the initial one, else (observation, the
        # averages of the previous plan, those of this one), worded only when asked
        self._why: tuple[int, list[float], list[float]] | None = None
        self._search = OrderSearch(pattern, model)
        self._plan(initial=True)

    @property
    def sizes(self) -> dict[str, float]:
        """The average size of each symbol's buffer."""
        return dict(zip(self.pattern.symbols, self._avg, strict=False))

    @property
    def selectivities(self) -> dict[Constraint, float]:
        """The average selectivity of each constraint (Table 3's until observed)."""
        n = len(self.pattern.symbols)
        return {c: self._avg[n + j] for j, c in enumerate(self._keys[n:])}  # type: ignore[misc]

    @property
    def statistics(self) -> Statistics:
        """The current averages."""
        return Statistics(self.sizes, self.selectivities)

    @property
    def order(self) -> Order:
        """The active evaluation order."""
        return self._order

    @property
    def plan(self) -> tuple[Order, float]:
        """The active order and its estimated cost (equation 2) under the snapshot."""
        return self.order, order_cost(self.pattern, self.order, self.snapshot, self.model)

    def after_update(self, matcher: Replannable) -> bool:
        """Call after each ``matcher.update``: every ``observe_every``-th call observes
        the matcher's statistics and hands it the new order on a switch (which takes
        effect at its next update, at no migration cost). Returns whether it switched."""
        self._calls += 1
        if self._calls % self.observe_every or not self.observe(matcher.statistics()):
            return False
        matcher.set_order(self._order)
        return True

    def observe(self, stats: MatcherStatistics) -> bool:
        """Fold one update's statistics into the averages; re-plan if one drifted past
        the threshold. Returns whether the order changed."""
        sizes = stats.buffer_sizes
        queries = getattr(stats, "queries", None)
        return self.observe_counts(
            [sizes.get(x, 0) for x in self.pattern.symbols],
            list(stats.candidates),
            list(stats.survivors),
            queries=list(queries) if queries else None,
        )

    def observe_counts(
        self,
        sizes: Sequence[float],
        candidates: list[int],
        survivors: list[int],
        updates: int | None = None,
        queries: Sequence[int] | None = None,
    ) -> bool:
        """:meth:`observe` from plain sequences, as a matcher holds them: the buffer
        sizes in the pattern's symbol order, the cumulative counts per constraint (read
        now, not kept), and how many updates the observation stands for
        (``observe_every`` when None; it then weighs ``1 - (1 - alpha)^updates``).
        With ``queries``, each constraint's cumulative count of range queries, a
        selectivity sample weighs as the updates that queried its constraint, at most
        one per range query: ``1 - (1 - alpha)^min(queries, updates)`` (section 5.4.1
        folds one sample per update that measured it; a sample behind a handful of
        queries must not move the average as far as one behind hundreds).
        Returns whether the order changed.

        Only the averages that move are checked against their drift bounds: one that
        did not move since the plan was computed is inside them (the bounds are set
        around the values at that moment)."""
        self.updates += 1
        avg, low, high = self._avg, self._low, self._high
        if updates is None or updates == self.observe_every:
            weight, keep = self.weight, self._keep
        else:
            if updates < 0:
                raise KleeneError(f"an observation stands for >= 0 updates, not {updates}")
            keep = (1 - self.alpha) ** updates
            weight = 1 - keep
        moved = False
        for i, x in enumerate(sizes):
            value = avg[i] = weight * x + keep * avg[i]
            if value < low[i] or value > high[i]:
                moved = True
        if (candidates != self._counted_c or survivors != self._counted_s) and (
            self._fold_selectivities(
                candidates,
                survivors,
                weight,
                queries,
                self.observe_every if updates is None else updates,
            )
        ):
            moved = True
        if not moved:
            return False
        before = self._snapshot
        self.replanned += 1
        changed = self._plan(initial=False)
        self._why = (self.updates, before, self._snapshot)
        return changed

    @property
    def reason(self) -> str:
        """Why the active plan was computed."""
        if self._why is None:
            return "initial plan: equal buffer sizes, Table 3 selectivities"
        update, before, now = self._why
        index, amount = self._largest_drift(before, now)
        return f"re-planned after update {update}: {self._name(index)} drifted by {amount:.0%}"

    def _fold_selectivities(
        self,
        candidates: Sequence[int],
        survivors: Sequence[int],
        weight: float,
        queries: Sequence[int] | None,
        updates: int,
    ) -> bool:
        """Average in each constraint's survivors per candidate since the previous
        observation (constraints not queried since keep their average; counters that
        went back, as after a restore, count from zero), weighing ``weight``, or by
        the queries behind the sample when they are counted. Returns whether an
        average left its drift bounds."""
        before_c, before_s, before_q = self._counted_c, self._counted_s, self._counted_q
        avg, low, high, queried = self._avg, self._low, self._high, self._queried
        # per slot: candidates, survivors, range queries since the previous observation
        grown: dict[int, list[int]] = {}
        for i, slot in enumerate(self._slots):
            dc, ds = candidates[i] - before_c[i], survivors[i] - before_s[i]
            dq = 0 if queries is None else queries[i] - before_q[i]
            if dc < 0 or ds < 0 or dq < 0:
                dc, ds = candidates[i], survivors[i]
                dq = 0 if queries is None else queries[i]
            if dc > 0:
                total = grown.get(slot)
                if total is None:
                    grown[slot] = [dc, ds, dq]
                else:
                    total[0] += dc
                    total[1] += ds
                    total[2] += dq
        moved = False
        keep = 1 - self.alpha
        for slot, (dc, ds, dq) in grown.items():
            # no query counted behind candidates: counters restored without them
            w = weight if queries is None or not dq else 1 - keep ** min(dq, updates)
            value = avg[slot] = ema(avg[slot], ds / dc, w)
            queried[slot] = True
            if value < low[slot] or value > high[slot]:
                moved = True
        before_c[:] = candidates
        before_s[:] = survivors
        if queries is not None:
            before_q[:] = queries
        return moved

    @property
    def observed(self) -> set[Constraint]:
        """The constraints whose selectivity has been observed (the others keep
        Table 3's)."""
        return {k for k, q in zip(self._keys, self._queried, strict=True) if q}  # type: ignore[misc]

    def largest_drift(self) -> tuple[str, float]:
        """The statistic that moved most (relatively) since the plan was computed."""
        index, amount = self._largest_drift(self._snapshot, self._avg)
        return self._name(index), amount

    def _largest_drift(self, before: list[float], now: list[float]) -> tuple[int, float]:
        moves = zip(now, before, self._floors, strict=True)
        return max(((i, drift(b, v, f)) for i, (v, b, f) in enumerate(moves)), key=lambda m: m[1])

    def _name(self, index: int) -> str:
        k = self._keys[index]
        return f"buffer {k}" if isinstance(k, str) else f"selectivity of {describe_constraint(k)}"

    def _plan(self, initial: bool) -> bool:
        """Recompute the ranking from the current averages and snapshot them; keep the
        active order when it is as cheap as the best (no switch on a tie). Returns
        whether the order changed."""
        # a buffer averaging below the floor ranks as the floor: near-empty buffers
        # would otherwise scale every order's cost towards 0 and hide their differences
        sizes = {x: max(v, self.size_floor) for x, v in self.sizes.items()}
        self.snapshot = Statistics(sizes, self.selectivities)
        self._snapshot = list(self._avg)
        self._queried_at_plan = list(self._queried)
        # drifted past the threshold: outside [B (1 - t), B (1 + t)], B the snapshot
        # (a value under its floor counts as the floor: it is below ``low`` only when
        # the floor is, so a ``low`` not above the floor never triggers)
        bases = [max(b, f) for b, f in zip(self._avg, self._floors, strict=True)]
        self._low = [
            b * (1 - self.threshold) if b * (1 - self.threshold) > f else -math.inf
            for b, f in zip(bases, self._floors, strict=True)
        ]
        self._high = [b * (1 + self.threshold) for b in bases]
        self.ranking: Ranking = self._search.rank(self.snapshot)
        best, best_cost = self.ranking.best
        if initial:
            self._order = best
            return False
        if self._order == best:
            return False
        size = [sizes[x] for x in self.pattern.symbols]
        sel = [self.snapshot.selectivities[c] for c in self.pattern.constraints]
        if self._search.cost(self._order, size, sel) <= best_cost * (1 + 1e-9):
            return False
        self._order = best
        self.switches += 1
        return True

    def explanation(self) -> str:
        """Why the active order: its cost, the runner-up, the statistics behind it."""
        order, cost = self.plan
        lines = [
            f"evaluation order: {' -> '.join(order)} (estimated cost {cost:.4g}, "
            f"equation 2, {self.model.value} form)"
        ]
        others = [(o, c) for o, c in self.ranking.orders if o != order]
        n = self.ranking.candidates
        if others:
            other, other_cost = others[0]
            lines.append(
                f"  cheapest of {n} orders without cross products; next best "
                f"{' -> '.join(other)} at {other_cost:.4g}"
                + (" (a tie)" if other_cost <= cost * (1 + 1e-9) else "")
            )
        else:
            lines.append(f"  the only order without cross products (of {n})")
        lines.append(f"  {self.reason}")
        lines.append(
            f"  {self.updates} observations, {self.replanned} re-plans, {self.switches} switches"
        )
        every = "update" if self.observe_every == 1 else f"{self.observe_every} updates"
        lines.append(
            f"  statistics (EMA, alpha {self.alpha} per update, observed every {every}; "
            f"re-plan past {self.threshold:.0%} drift):"
        )
        for s in self.pattern.symbols:
            lines.append(f"    buffer {s}: {self.snapshot.buffer_sizes[s]:.4g} situations")
        for c, slot in zip(self.pattern.constraints, self._slots, strict=True):
            source = "observed" if self._queried_at_plan[slot] else "Table 3"
            sel = self.snapshot.selectivities[c]
            lines.append(f"    {describe_constraint(c)}: selectivity {sel:.4g} ({source})")
        return "\n".join(lines)
