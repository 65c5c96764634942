"""Stream expansion (VLDB 2010, section 3, step 1): interval events become point events,
one per instant of the interval, emitted in time order.

The arrival-order assumption (section 2.2) bounds how early an unseen event can start:
with ``now.lower`` the largest lower bound seen and ``U_max`` the largest
``upper - lower``, every unseen event has ``lower >= now.lower - U_max = t_emit``
(its upper is at least now.lower). So every point before t_emit can be emitted: no
unseen event will add a point before it.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from itertools import groupby

from kleene.imprecise.model import IntervalEvent

PointGroup = tuple[int, list[IntervalEvent]]  # an instant and the events with a point there


class StreamExpansion:
    """The buffer of point events not yet emitted."""

    def __init__(self, u_max: int) -> None:
        self.u_max = u_max
        self.heap: list[tuple[int, int, IntervalEvent]] = []
        self.now_lower: int | None = None

    def add(self, event: IntervalEvent) -> None:
        """Buffer every possible point of ``event`` (those of probability > 0)."""
        for k, p in enumerate(event.pmf):
            if p:
                heapq.heappush(self.heap, (event.lower + k, event.position, event))

    def t_emit(self, now_lower: int) -> int:
        """The time before which every point is known: now.lower - U_max."""
        return now_lower - self.u_max

    def emit(self, before: int | None) -> Iterator[PointGroup]:
        """The buffered points before ``before`` (all when None), grouped by instant in
        time order; within an instant, in arrival order."""
        heap = self.heap
        out: list[tuple[int, int, IntervalEvent]] = []
        while heap and (before is None or heap[0][0] < before):
            out.append(heapq.heappop(heap))
        for t, items in groupby(out, key=lambda item: item[0]):
            yield t, [e for _, _, e in items]
