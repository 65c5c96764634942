"""Sorting for query order evaluation (VLDB 2010, section 4.3 and Appendix C.3).

The query-order method needs every event that can precede another in a match to be
presented before it. When each event can match one pattern component only, events
matching E_1 pass at once and those matching E_j (j > 1) wait in a buffer per component
until it is safe to present them: every unseen event starts at or after
t_emit = now.lower - U_max (the arrival-order assumption, section 2.2), so an event e
with e.upper < t_emit can be preceded by no unseen event; it also waits while an event
of an earlier component that could occur before it (lower < e.upper) is still buffered.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kleene.imprecise.model import IntervalEvent

Presented = list[tuple[IntervalEvent, list[int]]]  # events with the components they match


class QueryOrder:
    """The buffers of the components after the first."""

    def __init__(self, length: int) -> None:
        self.buffers: list[list[IntervalEvent]] = [[] for _ in range(length)]

    def add(
        self, events: Sequence[IntervalEvent], components: Sequence[list[int]], t_emit: int | None
    ) -> Presented:
        """Take arrived events (each matching at most one component); return those safe
        to present, in query order. ``t_emit`` None: the end of the stream."""
        out: Presented = []
        for e, matched in zip(events, components, strict=True):
            if not matched:
                continue
            (j,) = matched
            if j == 0:
                out.append((e, [0]))
            else:
                self.buffers[j].append(e)
        return out + self._release(t_emit)

    def _release(self, t_emit: int | None) -> Presented:
        out: Presented = []
        blocking = math.inf  # the earliest lower bound still buffered for E_2..E_{j-1}
        for j in range(1, len(self.buffers)):
            kept = []
            for e in self.buffers[j]:
                if (t_emit is None or e.upper < t_emit) and not blocking < e.upper:
                    out.append((e, [j]))
                else:
                    kept.append(e)
            self.buffers[j] = kept
            blocking = min([blocking, *(e.lower for e in kept)])
        return out

    def earliest(self, t_emit: int) -> int:
        """The earliest instant an event not yet presented can occur at."""
        lowers = [e.lower for buffer in self.buffers for e in buffer]
        return min([t_emit, *lowers])
