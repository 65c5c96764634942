"""Algorithm 2 for many matches at once (VLDB 2010, Appendix C.4), in floating point.

:func:`kleene.imprecise.confidence.any_confidence` computes one match's confidence with
a few dozen numpy calls on tables of (interval size)^2 cells, so at small intervals the
calls' fixed cost, not the arithmetic, is the time. Here the tables of all the matches a
push completes are stacked into one array A[n, t_1, t_j] (intervals padded with points
of probability 0 to the batch's widest one), and each step of Algorithm 2 is one array
operation over the whole batch: the running sums along t_j, the column of the previous
event's latest point before each point of event j, times P[e_j at t_j]; the window
masks the last table (t_l - t_1 <= W); the first event's points outside its valid
interval start no path. Sums are running sums (sequential), so a match's confidence
does not depend on the others in its batch or on the padding. Exact probabilities stay
with the per-match path, which keeps them exact.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kleene.imprecise.bounds import Interval
from kleene.imprecise.model import IntervalEvent

Found = tuple[float, int, int] | None
_CELLS = 2_000_000  # table cells per array operation (memory bound of a batch)


def any_confidences(
    batch: Sequence[tuple[Sequence[IntervalEvent], Sequence[Interval]]],
    window: float | None,
) -> list[Found]:
    """Per (events, valid bounds) of equal length with float probabilities, what
    ``any_confidence`` gives: (confidence, first instant, last instant), or None when
    no point match lies in the first event's valid interval."""
    found: list[Found] = [None] * len(batch)
    by_width: dict[int, list[int]] = {}
    for n, (events, _) in enumerate(batch):
        width = max(e.upper - e.lower for e in events) + 1
        by_width.setdefault(width, []).append(n)
    for width, members in by_width.items():
        step = max(1, _CELLS // (width * width))
        for k in range(0, len(members), step):
            part = members[k : k + step]
            values = _compute([batch[n] for n in part], width, window)
            for n, value in zip(part, values, strict=True):
                found[n] = value
    return found


def _compute(
    batch: Sequence[tuple[Sequence[IntervalEvent], Sequence[Interval]]],
    width: int,
    window: float | None,
) -> list[Found]:
    """:func:`any_confidences` for matches whose intervals hold at most ``width`` points."""
    n, length = len(batch), len(batch[0][0])
    padded: dict[int, list[float]] = {}
    probs: list[list[float]] = []
    low: list[int] = []
    valid: list[tuple[int, int]] = []
    for events, bounds in batch:
        for e in events:
            row = padded.get(id(e))
            if row is None:
                row = padded[id(e)] = [float(p) for p in e.pmf] + [0.0] * (width - len(e.pmf))
            probs.append(row)
            low.append(e.lower)
        valid.append((max(bounds[0][0], events[0].lower), bounds[0][1]))
    lowers = np.array(low, dtype=np.int64).reshape(n, length)
    p = np.array(probs, dtype=np.float64).reshape(n, length, width)
    points = np.arange(width)
    # the first event's valid points, as offsets
    first = np.array(valid, dtype=np.int64) - lowers[:, :1]
    starts = p[:, 0, :] * ((points >= first[:, :1]) & (points <= first[:, 1:]))
    table = np.zeros((n, width, width))
    table[:, points, points] = starts
    rows = (np.arange(n * width) * width).reshape(n, width, 1)  # each row's first cell
    for j in range(1, length):
        # the offset in event j-1 of the instant before each point of event j
        before = (lowers[:, j] - 1 - lowers[:, j - 1])[:, None] + points
        columns = np.minimum(np.maximum(before, 0), width - 1)[:, None, :]
        sums = table.cumsum(axis=2).ravel()[rows + columns]
        table = sums * (p[:, j, :] * (before >= 0))[:, None, :]
    if window is not None:
        span = (lowers[:, -1] - lowers[:, 0])[:, None, None] + points - points[:, None]
        table = table * (span <= window)
    by_first = table.cumsum(axis=2)[:, :, -1]
    confidence = by_first.cumsum(axis=1)[:, -1]
    starting = by_first > 0
    ending: np.ndarray = np.any(table > 0, axis=1)
    start = starting.argmax(axis=1)
    first_at = (lowers[:, 0] + start).tolist()
    last_at = (lowers[:, -1] + width - 1 - ending[:, ::-1].argmax(axis=1)).tolist()
    some = starting[np.arange(n), start].tolist()
    return [
        (c, s, e) if ok else None
        for c, s, e, ok in zip(confidence.tolist(), first_at, last_at, some, strict=True)
    ]
