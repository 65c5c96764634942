"""The confidence of an event-based match (VLDB 2010, section 4.1 and Appendix C.4).

Skip till any match: the confidence of a signature is the total probability of its
point matches t_1 < ... < t_l with t_l - t_1 <= W (equation 1). Algorithm 2 sums them
without listing them: walking the events in query order, the probability of the point
paths ending at each point of event j is that point's probability times the total of
the paths ending at earlier points of event j-1. Only the points of the valid intervals
(:mod:`kleene.imprecise.bounds`) are visited. The window is checked exactly by keeping
one such table per first point t_1 (points of later events beyond t_1 + W are left out).
The tables of a prefix are memoized by its events and valid intervals: matches sharing a
prefix share its tables.

Skip till next match: the point matches within the valid intervals are listed and
weighted as in the point-based framework (section 4.1's last paragraph, equations 2-4
of :mod:`kleene.imprecise.collapse`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import accumulate

from kleene.imprecise.bounds import Interval
from kleene.imprecise.model import IntervalEvent, Probability

Table = dict[int, Probability]  # point of the prefix's last event -> paths ending there
Memo = dict[tuple[object, ...], Table]


def any_confidence(
    events: Sequence[IntervalEvent],
    bounds: Sequence[Interval],
    window: float | None,
    memo: Memo,
) -> tuple[Probability, int, int] | None:
    """(confidence, first instant, last instant) of the point matches of ``events``
    whose first event lies in its valid interval ``bounds[0]`` (Algorithm 2), or None
    when there is none.

    The later events' points are taken from their whole intervals: a point past an
    event's valid upper bound starts no path that completes, so the tables of a prefix
    depend on its events and the first point only, and matches sharing a prefix share
    them. First points t1 whose window t1 + W reaches past the last event's upper bound
    are not constrained by it: their paths are summed in one table."""
    total: Probability = 0
    start = end = None
    first = events[0]
    upper = events[-1].upper
    free: Table = {}
    for t1 in range(bounds[0][0], bounds[0][1] + 1):
        p1 = first.prob(t1)
        if not p1:
            continue
        if window is None or t1 + window >= upper:
            free[t1] = p1
            continue
        table = _table(events, {t1: p1}, int(t1 + window), memo)
        if table:
            start = t1 if start is None else start
            end = max(table) if end is None else max(end, *table)
            total += sum(table.values(), start=0)
    if free:
        table = _table(events, free, None, memo)
        if table:
            reached = next(t1 for t1 in sorted(free) if _reaches(events, t1))
            start = reached if start is None else min(start, reached)
            end = max(table) if end is None else max(end, *table)
            total += sum(table.values(), start=0)
    if start is None or end is None or not total:
        return None
    return total, start, end


def _table(events: Sequence[IntervalEvent], firsts: Table, last: int | None, memo: Memo) -> Table:
    """The paths through all of ``events`` starting at the points of ``firsts`` (with
    their probabilities) and ending at or before ``last``, by the point of the last
    event."""
    key = (tuple(firsts), last, *(e.position for e in events))
    found = memo.get(key)
    if found is not None:
        return found
    table: Table = {}
    if len(events) == 1:
        table = dict(firsts)
    else:
        before = _table(events[:-1], firsts, last, memo)
        if before:
            e = events[-1]
            high = e.upper if last is None else min(e.upper, last)
            points = sorted(before)
            sums = list(accumulate(before[s] for s in points))
            k, n = 0, len(points)  # k: the points of the previous event before t
            pmf, base = e.pmf, e.lower
            for t in range(max(base, points[0] + 1), high + 1):
                while k < n and points[k] < t:
                    k += 1
                p = pmf[t - base]
                if p:
                    table[t] = sums[k - 1] * p
    memo[key] = table
    return table


def _reaches(events: Sequence[IntervalEvent], t1: int) -> bool:
    """Whether some path of positive probability starts at t1 (no window)."""
    t = t1
    for e in events[1:]:
        t = next((u for u in range(max(t + 1, e.lower), e.upper + 1) if e.prob(u)), -1)
        if t < 0:
            return False
    return True


def point_matches(
    events: Sequence[IntervalEvent], bounds: Sequence[Interval], window: float | None
) -> Iterator[tuple[int, ...]]:
    """Every point match t_1 < ... < t_l of the events within their valid intervals and
    the window, over points of nonzero probability."""

    def grow(j: int, times: tuple[int, ...]) -> Iterator[tuple[int, ...]]:
        if j == len(events):
            yield times
            return
        low, high = bounds[j]
        if times:
            low = max(low, times[-1] + 1)
            if window is not None:
                high = min(high, int(times[0] + window))
        e = events[j]
        for t in range(low, high + 1):
            if e.prob(t):
                yield from grow(j + 1, (*times, t))

    yield from grow(0, ())
