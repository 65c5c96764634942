"""Algorithm 2 for many matches at once (VLDB 2010, Appendix C.4), in floating point.

:func:`kleene.imprecise.confidence.any_confidence` computes one match's confidence with
a few dozen numpy calls, so at small intervals the calls' fixed cost, not the
arithmetic, is the time. Here the matches a push completes are stacked (intervals
padded with points of probability 0 to the batch's widest one; each distinct event's
probabilities are read once) and each step of Algorithm 2 is one stacked matrix
product over the whole batch: the paths ending at each point of event j-1, summed up to
the latest point before each point of event j (a 0/1 matrix that depends only on the
shift between the two events, :func:`_sums`), times P[e_j at t_j]. The first event's
points outside its valid interval start no path.

Only the window needs Algorithm 2's table A[t_1, t_j] (one row per first point): where
no path can break it (the last event's upper bound is within W of the first valid
point), the rows are summed from the start and a vector per match is carried instead
(:func:`_paths`); the time range's start, the first valid point from which a chain of
points of nonzero probability reaches the last event, comes from one backward pass
over those points (:func:`_starts`). The other matches carry the table, masked by the
window at the last step (t_l - t_1 <= W; :func:`_table`). Each match's products and
sums are its own and padded points add zeros, so its confidence is the one it gets
alone, equal up to rounding: the batch's width can change the summation order. Exact
probabilities stay with the per-match path, which keeps them exact.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from kleene.imprecise.bounds import Interval
from kleene.imprecise.model import IntervalEvent

Found = tuple[float, int, int] | None
_CELLS = 2_000_000  # table cells per array operation (memory bound of a batch)
# per match: confidence, first instant, last instant, whether a point match exists
Values = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


class _Stack:
    """The batch as arrays: per match and component, the event's lower bound and
    probabilities (padded to ``width`` points), and the first event's valid points as
    offsets ``[lo, hi]`` into it."""

    def __init__(
        self, matches: Sequence[Sequence[IntervalEvent]], valid: Sequence[Sequence[Interval]]
    ) -> None:
        n, length = len(matches), len(matches[0])
        flat = [e for events in matches for e in events]
        distinct = list(dict.fromkeys(flat))  # events hash by identity
        number = {e: k for k, e in enumerate(distinct)}
        index = np.fromiter(map(number.__getitem__, flat), np.intp, len(flat))
        self.width = width = max(len(e.pmf) for e in distinct)
        pmfs = np.zeros((len(distinct), width))
        for k, e in enumerate(distinct):
            pmfs[k, : len(e.pmf)] = e.pmf
        self.p = pmfs[index].reshape(n, length, width)
        self.lowers = np.array([e.lower for e in distinct], np.int64)[index].reshape(n, length)
        last = np.array([distinct[k].upper for k in index[length - 1 :: length]], np.int64)
        first = np.array([b[0] for b in valid], np.int64).reshape(n, 2)
        low = np.maximum(first[:, 0], self.lowers[:, 0])
        self.lo, self.hi = low - self.lowers[:, 0], first[:, 1] - self.lowers[:, 0]
        self.reach = last - low  # the longest span t_l - t_1 of a path

    def part(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Probabilities, lower bounds and the first valid offsets of some matches."""
        return self.p[rows], self.lowers[rows], self.lo[rows], self.hi[rows]


def any_confidences(
    matches: Sequence[Sequence[IntervalEvent]],
    valid: Sequence[Sequence[Interval]],
    window: float | None,
) -> list[Found]:
    """Per match (its events, of one length for all, with float probabilities) and its
    valid bounds, what ``any_confidence`` gives: (confidence, first instant, last
    instant), or None when no point match lies in the first event's valid interval."""
    if not matches:
        return []
    stack = _Stack(matches, valid)
    n = len(matches)
    cut = np.zeros(n, bool) if window is None else stack.reach > window
    found: list[Found] = [None] * n
    step = max(1, _CELLS // (stack.width * stack.width))  # a matrix per match and step
    for windowed in (False, True):
        members = np.flatnonzero(cut == windowed)
        for k in range(0, len(members), step):
            rows = members[k : k + step]
            part = stack.part(rows)
            if windowed and window is not None:  # without a window, cut is all False
                _put(found, rows, _table(*part, window))
            else:
                _put(found, rows, _paths(*part))
    return found


def _put(found: list[Found], rows: np.ndarray, values: Values) -> None:
    confidence, start, end, exists = (v.tolist() for v in values)
    for n, c, s, e, ok in zip(rows.tolist(), confidence, start, end, exists, strict=True):
        if ok:
            found[n] = (c, s, e)


def _first(p: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """P[e_1 at t_1] over the first event's valid points, 0 elsewhere."""
    return p[:, 0, :] * _valid(np.arange(p.shape[-1]), lo, hi)


def _valid(points: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Per match, which of ``points`` (offsets into the first event, one row for all or
    one per match) are valid first points."""
    return (points >= lo[:, None]) & (points <= hi[:, None])


def _ends(lowers: np.ndarray, ending: np.ndarray) -> np.ndarray:
    """Per match, the last instant of the last event at which a path ends (``ending``:
    per point of it, whether one does)."""
    return lowers[:, -1] + ending.shape[1] - 1 - ending[:, ::-1].argmax(axis=1)


def _sums(lowers: np.ndarray, j: int, width: int) -> np.ndarray:
    """Per match, the matrix S[k, t] that turns the probabilities of the paths ending at
    each point k of event j-1 into those of the paths ending before each point t of
    event j (x @ S: the running sum of x up to the latest point of event j-1 before t,
    or 0 when none precedes t). S depends only on the shift between the two events'
    lower bounds, clamped to +-width (:func:`_shifts`)."""
    shift = np.clip(lowers[:, j] - 1 - lowers[:, j - 1], -width, width)
    return _shifts(width)[shift + width]


@functools.lru_cache(maxsize=64)
def _shifts(width: int) -> np.ndarray:
    """S for every shift s from -width to width: S[s][k, t] = 1 where point k of event
    j-1 is at or before the instant before point t of event j (k <= s + t, s being the
    offset in event j-1 of the instant before event j's lower bound)."""
    shift = np.arange(-width, width + 1)[:, None, None]
    k, t = np.arange(width)[:, None], np.arange(width)
    out = (k <= shift + t).astype(np.float64)
    out.setflags(write=False)
    return out


def _paths(p: np.ndarray, lowers: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Values:
    """(confidence, start, end, exists) of matches no path of which can break the
    window. The vector through event j holds, per point of it,
    the probability of the paths t_1 < ... < t_j ending there (Algorithm 2's table
    summed over its rows)."""
    _, length, width = p.shape
    paths = _first(p, lo, hi)[:, None, :]
    for j in range(1, length):
        paths = np.matmul(paths, _sums(lowers, j, width)) * p[:, j, None, :]
    paths = paths[:, 0, :]
    confidence = paths.cumsum(axis=1)[:, -1]
    ending = paths > 0
    start, exists = _starts(p, lowers, lo, hi)
    return confidence, start, _ends(lowers, ending), exists & ending.any(axis=1)


def _starts(
    p: np.ndarray, lowers: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per match, the first instant of the first event's valid points from which a chain
    t_1 < ... < t_l of points of nonzero probability reaches the last event, and whether
    there is one. Backwards: a point of event j leads on when some later instant of
    event j+1 does."""
    n, length, width = p.shape
    points = np.arange(width)
    on = p[:, -1, :] > 0
    for j in range(length - 2, -1, -1):
        # any(on[k:]) per k, then read at the first point of event j+1 after each point
        later = np.logical_or.accumulate(on[:, ::-1], axis=1)[:, ::-1]
        after = (lowers[:, j] + 1 - lowers[:, j + 1])[:, None] + points
        reached = np.take_along_axis(later, np.clip(after, 0, width - 1), axis=1)
        on = (p[:, j, :] > 0) & reached & (after < width)
    on &= _valid(points, lo, hi)
    first = on.argmax(axis=1)
    return lowers[:, 0] + first, on[np.arange(n), first]


def _table(
    p: np.ndarray, lowers: np.ndarray, lo: np.ndarray, hi: np.ndarray, window: float
) -> Values:
    """(confidence, start, end, exists) by Algorithm 2's table A[n, t_1, t_j], one row
    per valid first point (as many rows as the widest valid interval of the part;
    rows past a match's own valid interval start no path), masked by the window at
    the last event."""
    n, length, width = p.shape
    points = np.arange(width)
    starts = lo[:, None] + np.arange(max(1, int((hi - lo).max()) + 1))  # (n, rows)
    rows = starts.shape[1]
    at = np.minimum(starts, width - 1)
    first = np.take_along_axis(p[:, 0, :], at, axis=1) * _valid(starts, lo, hi)
    table = np.zeros((n, rows, width))
    table[np.arange(n)[:, None], np.arange(rows), at] = first
    for j in range(1, length):
        table = np.matmul(table, _sums(lowers, j, width)) * p[:, j, None, :]
    span = (lowers[:, -1] - lowers[:, 0])[:, None, None] + points - starts[:, :, None]
    table = table * (span <= window)
    by_first = table.cumsum(axis=2)[:, :, -1]
    confidence = by_first.cumsum(axis=1)[:, -1]
    starting = by_first > 0
    ending = np.any(table > 0, axis=1)
    start = starting.argmax(axis=1)
    some = starting[np.arange(n), start]
    return confidence, lowers[:, 0] + lo + start, _ends(lowers, ending), some
