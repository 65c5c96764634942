"""The confidence of a skip-till-next-match signature over its valid intervals (VLDB
2010, section 3, equations 2-4; section 4.1's last paragraph), without listing its
point matches.

A point match t_1 < ... < t_l of the events e_1..e_l is produced by a world iff no
*spoiler* lies strictly between two adjacent points: an other event x that can match
component j (its edge holds on the state vector before j) must not occur in
(t_{j-1}, t_j). Events are independent, so

    C = sum over t_1 < ... < t_l (t_l - t_1 <= W) of
        prod_j P[e_j at t_j] * prod_x P[x outside the gaps of the components x matches].

Equation (3): when x matches one component j only, its factor P[x <= t_{j-1}] +
P[x >= t_j] depends on the two adjacent points only, so the sum is a chain and is
computed as Algorithm 2 computes equation (1): a table per prefix, one row per first
point t_1 (for the window), the step to component j one matrix product with the gap
factors F_j[t_{j-1}, t_j] (the product over j's spoilers, zero where t_j <= t_{j-1}).

Equation (4): an event matching several components would tie the gaps together, so
its point is enumerated, as the paper does: conditioned on the points of these events
the factors are again per gap (0 where a conditioned point lies inside the gap). Points
that lie in none of the event's possible gaps act alike and are merged into one case.
When the cases outnumber ``max_cases``, or enumerating them would cost more than listing
the point matches, the caller lists the point matches instead.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from kleene.imprecise.bounds import Interval
from kleene.imprecise.model import IntervalEvent, Probability

Spoilers = Sequence[tuple[IntervalEvent, Sequence[int]]]  # events with their components
Found = tuple[Probability, int, int] | None
MAX_CASES = 256
_LISTING_RATIO = 1000  # a listed point match costs about this many numpy multiply-adds


class TooManyCases(Exception):
    """Equation (4) would enumerate more joint points than allowed."""


def next_confidence(
    events: Sequence[IntervalEvent],
    valid: Sequence[Interval],
    window: float | None,
    spoilers: Spoilers,
    max_cases: int | None = None,
) -> Found:
    """(confidence, first instant, last instant) of the signature ``events`` whose
    points lie in ``valid`` under skip till next match, or None when no world produces
    it. ``spoilers``: the other events that can be next for components j >= 1 (0-based),
    with those components. TooManyCases when equation (4) would exceed ``max_cases``
    (:data:`MAX_CASES` by default)."""
    exact = any(type(p) is not float for e in [*events, *(x for x, _ in spoilers)] for p in e.pmf)
    times = [np.arange(lo, hi + 1) for lo, hi in valid]
    probs = [
        _array([e.prob(int(t)) for t in ts], exact) for e, ts in zip(events, times, strict=True)
    ]
    gaps = [_gap_factors(times[j - 1], times[j], spoilers, j, exact) for j in range(len(events))]
    several = [(x, comps) for x, comps in spoilers if len(comps) > 1]
    cases = [_cases(x, comps, valid) for x, comps in several]
    count = math.prod(len(c) for c in cases)
    if count > (MAX_CASES if max_cases is None else max_cases) or (
        count > 1 and count * _dp_cells(times) > _LISTING_RATIO * _listing_cost(times, spoilers)
    ):
        raise TooManyCases
    total: np.ndarray | None = None
    for combo in itertools.product(*cases):
        weight: Probability = 1
        for p, _ in combo:
            weight *= p
        fixed = [
            (s, comps) for (_, s), (_, comps) in zip(combo, several, strict=True) if s is not None
        ]
        table = _chain(times, probs, gaps, fixed) * weight
        total = table if total is None else total + table
    assert total is not None
    if window is not None:
        table_mask = times[-1][None, :] - times[0][:, None] <= window
        total = total * table_mask
    rows = np.flatnonzero(total.sum(axis=1) > 0)
    if not len(rows):
        return None
    columns = np.flatnonzero(total.sum(axis=0) > 0)
    confidence = total.sum() if exact else math.fsum(total.ravel())  # correctly rounded
    return confidence, int(times[0][rows[0]]), int(times[-1][columns[-1]])


def _dp_cells(times: list[np.ndarray]) -> int:
    """The multiply-adds of one dynamic program over these valid intervals."""
    return sum(len(times[0]) * len(a) * len(b) for a, b in itertools.pairwise(times))


def _listing_cost(times: list[np.ndarray], spoilers: Spoilers) -> int:
    """At most the point matches to list, times the factors each needs."""
    return math.prod(len(t) for t in times) * (len(spoilers) + 1)


def _chain(
    times: list[np.ndarray],
    probs: list[np.ndarray],
    gaps: list[np.ndarray | None],
    fixed: Sequence[tuple[int, Sequence[int]]],
) -> np.ndarray:
    """T[t_1, t_l]: the weight of the point matches from t_1 to t_l given the points
    ``fixed`` of the events matching several components (those may lie in none of
    their components' gaps)."""
    table = np.diag(probs[0])
    for j in range(1, len(times)):
        factors = gaps[j]
        assert factors is not None
        for s, comps in fixed:
            if j in comps:
                inside = (times[j - 1][:, None] < s) & (s < times[j][None, :])
                factors = factors * ~inside
        table = (table @ factors) * probs[j][None, :]
    return table


def _gap_factors(
    before: np.ndarray, after: np.ndarray, spoilers: Spoilers, j: int, exact: bool
) -> np.ndarray | None:
    """F_j[m, k]: 0 unless before[m] < after[k], else the product over the events
    matching component j only of P[x <= before[m]] + P[x >= after[k]] (equation 3)."""
    if not j:
        return None
    ordered = before[:, None] < after[None, :]
    factors = ordered.astype(object) if exact else ordered.astype(np.float64)
    for x, comps in spoilers:
        if list(comps) == [j]:
            at_most, at_least = _tails(x, exact)
            low = np.clip(before - x.lower + 1, 0, len(x.pmf))
            high = np.clip(after - x.lower, 0, len(x.pmf))
            factors = factors * (at_most[low][:, None] + at_least[high][None, :])
    return factors


def _tails(x: IntervalEvent, exact: bool) -> tuple[np.ndarray, np.ndarray]:
    """P[x at or before lower + k - 1] and P[x at or after lower + k], k = 0..n, as
    running sums from each end (so a tail with no mass is exactly 0)."""
    pmf = _array(list(x.pmf), exact)
    zero = _array([0], exact)
    at_most = np.concatenate([zero, pmf.cumsum()])
    at_least = np.concatenate([pmf[::-1].cumsum()[::-1], zero])
    return at_most, at_least


def _cases(
    x: IntervalEvent, comps: Sequence[int], valid: Sequence[Interval]
) -> list[tuple[Probability, int | None]]:
    """The points of an event matching several components, as (probability, point),
    those that can lie in none of its gaps merged as (their mass, None)."""
    cases: list[tuple[Probability, int | None]] = []
    rest: Probability = 0
    harmless = False
    for k, p in enumerate(x.pmf):
        if not p:
            continue
        s = x.lower + k
        if any(valid[j - 1][0] < s < valid[j][1] for j in comps):
            cases.append((p, s))
        else:
            rest += p
            harmless = True
    if harmless:
        cases.append((rest, None))
    return cases


def _array(values: list[Probability], exact: bool) -> np.ndarray:
    if not exact:
        return np.asarray(values, dtype=np.float64)
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out
