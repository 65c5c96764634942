"""Matches from the boolean edge columns, for all partitions at once.

Under contiguity a run is fixed by its start row and, per Kleene component, where it
ends: every row in between must be taken (SIGMOD 2008, section 3.1; the run splits at
each row where both the take and the proceed edge hold, section 5.2). The search keeps
one array entry per partial match and moves all of them one component on at a time: a
single component needs its begin column at the next row; a Kleene component reaches as
far as its take column stays true (the next false row, by ``searchsorted``), and may end
at every row of that stretch where its end column and the next component's begin column
hold, which ``searchsorted`` over those rows enumerates without visiting the others.
The window (inclusive) bounds the last row's time. Partial matches that reach the end
of their partition's rows are *alive*: later events may still extend them.

The partial matches of a batch are held at once, so :func:`search` takes a limit on their
number (the matcher's ``max_runs``) and raises :class:`TooMany` rather than exceed it;
the vectorized core then evaluates that batch event by event, where ``max_runs`` bounds
the runs alive at one time as in every other core.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kleene.runtime.vector.frame import Frame
from kleene.runtime.vector.masks import Masks


class TooMany(Exception):
    """A batch holds more partial matches than the limit given to :func:`search`."""


@dataclass
class Found:
    """Matches as rows: ``first[j]`` and ``last[j]`` bound component j."""

    start: np.ndarray
    first: list[np.ndarray]
    last: list[np.ndarray]
    alive: np.ndarray  # start rows of partial matches later events may extend

    @property
    def end(self) -> np.ndarray:
        return self.last[-1]


def search(
    frame: Frame,
    masks: Masks,
    kleene: list[bool],
    window: float | None,
    limit: int | None = None,
) -> Found:
    n = frame.n
    if not n:
        empty = np.zeros(0, dtype=np.int64)
        return Found(empty, [empty] * len(kleene), [empty] * len(kleene), empty)
    times = frame.times
    seg_end = frame.seg_end
    start = np.flatnonzero(masks.begin[0])
    first: list[np.ndarray] = []
    last: list[np.ndarray] = []
    alive: list[np.ndarray] = []
    end = start - 1  # the row before the next component's first element
    k = len(kleene)
    for j in range(k):
        if j:
            waiting = end == seg_end[end]
            alive.append(start[waiting])
            p = end + 1
            p[waiting] = 0
            keep = ~waiting & masks.begin[j][np.minimum(p, n - 1)]
            start, p = start[keep], p[keep]
            first, last = [f[keep] for f in first], [x[keep] for x in last]
        else:
            p = start
        if not kleene[j]:
            first.append(p)
            last.append(p)
            end = p
        else:
            take, stop = masks.take[j], masks.end[j]
            assert take is not None and stop is not None
            breaks = np.append(np.flatnonzero(~take), n)
            reach = breaks[np.searchsorted(breaks, p, side="right")] - 1
            alive.append(start[reach == seg_end[p]])
            cap = reach if window is None else np.minimum(reach, _window_cap(frame, start, window))
            ends = stop.copy()
            if j + 1 < k:
                ends[:-1] &= masks.begin[j + 1][1:]
                ends[-1] = False
            rows = np.flatnonzero(ends)
            lo = np.searchsorted(rows, p, side="left")
            hi = np.searchsorted(rows, cap, side="right")
            count = np.maximum(hi - lo, 0)
            if limit is not None and int(count.sum()) > limit:
                raise TooMany
            pick = np.repeat(np.arange(len(p)), count)
            offset = np.arange(len(pick)) - np.repeat(np.cumsum(count) - count, count)
            q = rows[lo[pick] + offset]
            start = start[pick]
            first = [f[pick] for f in first] + [p[pick]]
            last = [x[pick] for x in last] + [q]
            end = q
        if window is not None:
            ok = times[end] - times[start] <= window
            start, end = start[ok], end[ok]
            first, last = [f[ok] for f in first], [x[ok] for x in last]
    live = np.concatenate(alive) if alive else np.zeros(0, dtype=np.int64)
    if window is not None and len(live):
        live = live[times[seg_end[live]] - times[live] <= window]
    return Found(start, first, last, live)


def _window_cap(frame: Frame, start: np.ndarray, window: float) -> np.ndarray:
    """The last row of each start's partition within ``window`` of its time."""
    times = frame.times
    uniq, rank = np.unique(times, return_inverse=True)
    stride = len(uniq) + 1
    seg = frame.seg
    composite = seg * stride + rank  # increasing along the rows
    bound = np.searchsorted(uniq, times[start] + window, side="right") - 1
    return np.searchsorted(composite, seg[start] * stride + bound, side="right") - 1
