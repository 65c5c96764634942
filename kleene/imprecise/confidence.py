"""The confidence of an event-based match (VLDB 2010, section 4.1 and Appendix C.4).

Skip till any match: the confidence of a signature is the total probability of its
point matches t_1 < ... < t_l with t_l - t_1 <= W (equation 1). Algorithm 2 sums them
without listing them: walking the events in query order, the probability of the point
paths ending at each point of event j is that point's probability times the total of
the paths ending at earlier points of event j-1. The window is checked exactly by
keeping one row of such totals per first point t_1: a table A_j[t_1, t_j] per prefix
(a matrix over the two events' points, computed with numpy, of Python numbers when a
probability is exact). Since t_j < t_l, only the last event's points can break the
window: the prefix tables do not depend on it, are memoized by the prefix's events and
shared by every match extending the prefix (the incremental computation of section
4.1). When the window cuts no path, the last step too is memoized, per prefix and
place of the last event (:func:`_unwindowed`).

Skip till next match: :mod:`kleene.imprecise.next_confidence` (equations 3-4 as a
dynamic program of the same shape); :func:`point_matches` lists the point matches for
its fallback.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from kleene.imprecise.bounds import Interval
from kleene.imprecise.model import IntervalEvent, Probability

# running sums of prefixes, probabilities, last steps (:func:`_unwindowed`)
Memo = dict[tuple[object, ...], Any]


def any_confidence(
    events: Sequence[IntervalEvent],
    bounds: Sequence[Interval],
    window: float | None,
    memo: Memo,
) -> tuple[Probability, int, int] | None:
    """(confidence, first instant, last instant) of the point matches of ``events``
    whose first event lies in its valid interval ``bounds[0]`` (Algorithm 2), or None
    when there is none. A point past a later event's valid upper bound starts no path
    that completes, so only the first event's valid interval is used."""
    first, last = events[0], events[-1]
    if _apart(events, bounds, window):
        return _product(events, memo)
    low = max(bounds[0][0], first.lower)
    rows = slice(low - first.lower, bounds[0][1] - first.lower + 1)
    if len(events) > 1:
        if window is None or last.upper - low <= window:  # the window cuts no path
            by_row, end = _unwindowed(events, memo)
            by_first = by_row[rows]
            nonzero = by_first > 0
            start = int(nonzero.argmax())
            if not nonzero[start]:
                return None
            return _total(by_first), low + start, last.lower + end
        return _last_step(_cumulative(events[:-1], memo)[rows], events[-2], last, low, window, memo)
    by_first = _pmf(first, memo)[rows]
    positive = np.flatnonzero(by_first > 0)
    if not len(positive):
        return None
    return _total(by_first), low + int(positive[0]), low + int(positive[-1])


def _unwindowed(events: Sequence[IntervalEvent], memo: Memo) -> tuple[np.ndarray, int]:
    """The last step of :func:`any_confidence` when the window cuts no path: per first
    point (every row of the prefix's table) the probability of the point matches, and
    the offset in the last event of the last point one can end at. Memoized by the
    prefix, the last event's probabilities (floats; the event itself when they are
    exact) and its place relative to the previous event's points (clamped: an event
    wholly after them, or wholly before, reads the same columns), so the last events
    in the same place share one vector."""
    prev, last = events[-2], events[-1]
    width = last.upper - last.lower + 1
    top = prev.upper - prev.lower
    shift = max(-width, min(last.lower - 1 - prev.lower, top))
    weights = _pmf(last, memo)
    # float probabilities by value; exact ones by the event (0.5 == Fraction(1, 2))
    shape = last.pmf if weights.dtype != object else last.position
    key = ("last", shift, shape, *(e.position for e in events[:-1]))
    found = memo.get(key)
    if found is None:
        columns, hidden = _columns(shift, width, top)
        if hidden:
            weights = weights.copy()
            weights[:hidden] = 0
        end = width - 1 - int((weights[::-1] > 0).argmax())
        vector = _cumulative(events[:-1], memo)[:, columns] @ weights
        found = memo[key] = (vector, end)
    return found


def _last_step(
    before: np.ndarray,
    prev: IntervalEvent,
    last: IntervalEvent,
    low: int,
    window: float | None,
    memo: Memo,
) -> tuple[Probability, int, int] | None:
    """The last step of :func:`any_confidence`: the running sums ``before`` (one row per
    first point from ``low``) times the last event's probabilities, masked by the window
    (t_l - t_1 <= W), one product per row. A row's running sums only grow along it and
    its window cut-off grows with the row, so the last point a path can end at is the
    last point of positive probability after a point of ``prev`` and within the window
    of the last row that has a path."""
    width = last.upper - last.lower + 1
    columns, hidden = _columns(last.lower - 1 - prev.lower, width, prev.upper - prev.lower)
    weights = _pmf(last, memo)
    if hidden:
        weights = weights.copy()
        weights[:hidden] = 0
    table = before[:, columns]
    windowed = window is not None and last.upper - low > window
    if windowed:
        table = table * _within(len(table), width, last.lower - low, window)
    by_first = table @ weights
    positive = by_first > 0
    start = int(positive.argmax())
    if not positive[start]:
        return None
    cut = width
    if windowed:
        final = len(positive) - 1 - int(positive[::-1].argmax())
        cut = min(width, math.floor(low + final + window - last.lower) + 1)  # type: ignore[operator]
    end = cut - 1 - int((weights[:cut][::-1] > 0).argmax())
    return _total(by_first), low + start, last.lower + end


def _apart(
    events: Sequence[IntervalEvent], bounds: Sequence[Interval], window: float | None
) -> bool:
    """Whether every choice of points is a point match: each event's interval ends
    before the next one's begins, the window spans them all, and the first event's
    valid interval is its whole interval."""
    first, last = events[0], events[-1]
    if window is not None and last.upper - first.lower > window:
        return False
    if bounds[0][0] > first.lower or bounds[0][1] < first.upper:
        return False
    upper = first.upper
    for e in events[1:]:
        if upper >= e.lower:
            return False
        upper = e.upper
    return True


def _product(events: Sequence[IntervalEvent], memo: Memo) -> tuple[Probability, int, int] | None:
    """Algorithm 2 when its table factorizes (:func:`_apart`): the confidence is the
    product of the events' total probabilities, the time range runs from the first
    event's first point of nonzero probability to the last event's last one."""
    confidence: Probability = 1
    for e in events:
        total = _sum(e, memo)
        if not total:
            return None
        confidence = confidence * total
    first, last = events[0], events[-1]
    start = next(k for k, p in enumerate(first.pmf) if p)
    end = next(k for k, p in enumerate(reversed(last.pmf)) if p)
    return confidence, first.lower + start, last.upper - end


def _sum(e: IntervalEvent, memo: Memo) -> Probability:
    """The event's total probability, as :func:`_total` sums it (memoized)."""
    key = ("sum", e.position)
    found = memo.get(key)
    if found is None:
        found = memo[key] = _total(_pmf(e, memo))
    return found


def _total(values: np.ndarray) -> Probability:
    """The sum of ``values``: a float, or a Python number when they are exact."""
    total = values.sum()
    return total if values.dtype == object else float(total)


@functools.lru_cache(maxsize=4096)
def _within(rows: int, width: int, offset: int, window: float) -> np.ndarray:
    """1 where the last event's point ``offset + k`` (from the first row's instant) lies
    within ``window`` of the first event's point ``i``, else 0."""
    gap = np.arange(offset, offset + width)[None, :] - np.arange(rows)[:, None]
    mask = (gap <= window).astype(np.int8)
    mask.setflags(write=False)
    return mask


@functools.lru_cache(maxsize=4096)
def _columns(shift: int, width: int, last: int) -> tuple[np.ndarray, int]:
    """For an event of ``width`` points whose lower bound is at index ``shift + 1`` of
    the previous event (of ``last + 1`` points): per point, the index in the previous
    event of the latest instant before it (clamped to the previous event's points), and
    how many leading points have no earlier point of the previous event."""
    idx = np.minimum(np.arange(shift, shift + width), last)
    idx = np.maximum(idx, 0)
    idx.setflags(write=False)
    return idx, min(max(-shift, 0), width)


def _cumulative(events: Sequence[IntervalEvent], memo: Memo) -> np.ndarray:
    """C[i, k]: the probability of the paths t_1 < ... < t_j through ``events`` from
    the first event's point lower_1 + i to a point of the last one at or before
    lower_j + k (the running sums of Algorithm 2's table, memoized by the prefix)."""
    key = tuple(e.position for e in events)
    found = memo.get(key)
    if found is None:
        if len(events) == 1:
            table = np.diag(_pmf(events[0], memo))
        else:
            table = _step(_cumulative(events[:-1], memo), events[-2], events[-1], memo)
        found = memo[key] = table.cumsum(axis=1)
    return found


def _step(before: np.ndarray, prev: IntervalEvent, e: IntervalEvent, memo: Memo) -> np.ndarray:
    """The table through event ``e`` from the running sums ``before`` through ``prev``:
    the paths ending at a point of ``prev`` before t, times P[e at t], per point t."""
    width = e.upper - e.lower + 1
    shift = e.lower - 1 - prev.lower  # the index in ``prev`` of the instant before e.lower
    columns, hidden = _columns(shift, width, prev.upper - prev.lower)
    out = before[:, columns] * _pmf(e, memo)
    if hidden:  # e's points no point of ``prev`` precedes
        out[:, :hidden] = 0
    return out


def floats(e: IntervalEvent, memo: Memo) -> bool:
    """Whether the event's probabilities are all floats (none exact)."""
    return bool(_pmf(e, memo).dtype != object)


def _pmf(e: IntervalEvent, memo: Memo) -> np.ndarray:
    """The event's probabilities as floats, or as Python numbers when one is exact."""
    key = ("pmf", e.position)
    found = memo.get(key)
    if found is None:
        if all(type(p) is float for p in e.pmf):
            found = np.asarray(e.pmf, dtype=np.float64)
        else:
            found = np.empty(len(e.pmf), dtype=object)
            found[:] = list(e.pmf)
        memo[key] = found
    return found


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
