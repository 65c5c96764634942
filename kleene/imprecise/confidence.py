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
    with valid intervals ``bounds`` (Algorithm 2), or None when there is none."""
    total: Probability = 0
    start = end = None
    first = events[0]
    for t1 in range(bounds[0][0], bounds[0][1] + 1):
        p1 = first.prob(t1)
        if not p1:
            continue
        last = int(t1 + window) if window is not None else None
        table = _table(events, bounds, t1, p1, last, memo)
        if not table:
            continue
        start = t1 if start is None else start
        high = max(table)
        end = high if end is None else max(end, high)
        total += sum(table.values(), start=0)
    if start is None or end is None or not total:
        return None
    return total, start, end


def _table(
    events: Sequence[IntervalEvent],
    bounds: Sequence[Interval],
    t1: int,
    p1: Probability,
    last: int | None,
    memo: Memo,
) -> Table:
    """The paths of all of ``events`` starting at t1, by the point of the last event."""
    n = len(events)
    key = (t1, last, *((e.position, b) for e, b in zip(events, bounds, strict=True)))
    found = memo.get(key)
    if found is not None:
        return found
    if n == 1:
        table: Table = {t1: p1}
    else:
        before = _table(events[:-1], bounds[:-1], t1, p1, last, memo)
        table = {}
        if before:
            e = events[-1]
            low, high = bounds[-1]
            if last is not None:
                high = min(high, last)
            points = sorted(before)
            sums = list(accumulate(before[s] for s in points))
            k = 0  # the points of the previous event before t
            for t in range(max(low, points[0] + 1), high + 1):
                while k < len(points) and points[k] < t:
                    k += 1
                p = e.prob(t)
                if p and k:
                    table[t] = sums[k - 1] * p
    memo[key] = table
    return table


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
