"""The matcher's time-ordered situation buffers (TPStream, EDBT 2018, section 5.2).

One buffer per situation stream holds its finished situations in arrival order. A
stream's situations are disjoint (Definition 8), so that order sorts both the starts
and the ends, and the buffer answers the range queries of Figure 3 by binary search.
Purging by the window drops a prefix; the buffer keeps an offset into its arrays
(array-backed, like the paper's ring buffers) and compacts them now and then.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator

from kleene.tpstream.model import Situation, Time
from kleene.tpstream.ranges import Bound, Ranges


class SituationBuffer:
    """The finished situations of one symbol, ordered by start (and end)."""

    __slots__ = ("_dropped", "_ends", "_head", "_items", "_starts")

    def __init__(self) -> None:
        self._items: list[Situation] = []
        self._starts: list[Time] = []
        self._ends: list[Time] = []
        self._head = 0
        self._dropped = 0  # situations compacted away (counted only when compacting)

    def __len__(self) -> int:
        return len(self._items) - self._head

    def __iter__(self) -> Iterator[Situation]:
        return iter(self._items[self._head :])

    def __getitem__(self, index: int) -> Situation:
        """The situation at absolute position ``index`` (as range queries return)."""
        return self._items[index]

    def append(self, s: Situation) -> None:
        assert s.end is not None
        self._items.append(s)
        self._starts.append(s.start)
        self._ends.append(s.end)

    def purge(self, bound: Time) -> None:
        """Drop every situation that starts before ``bound`` (Algorithm 2, line 1)."""
        self._head = bisect_left(self._starts, bound, self._head)
        if self._head > 64 and self._head * 2 > len(self._items):
            del self._items[: self._head], self._starts[: self._head], self._ends[: self._head]
            self._dropped += self._head
            self._head = 0

    @property
    def appended(self) -> int:
        """How many situations were ever appended (read at no cost per append)."""
        return self._dropped + len(self._items)

    def counts(self) -> tuple[int, int]:
        """``(len(self), self.appended)`` in one call (the planner's turn reads both)."""
        held = len(self._items)
        return held - self._head, self._dropped + held

    def span(self) -> tuple[int, int]:
        """The absolute positions of the live situations."""
        return self._head, len(self._items)

    def positions(self, start: Bound, end: Bound) -> tuple[int, int]:
        """The positions whose start lies in ``start`` and end in ``end``: two binary
        searches per interval, then their intersection (Figure 3)."""
        lo1, hi1 = self._search(self._starts, start)
        lo2, hi2 = self._search(self._ends, end)
        return max(lo1, lo2), min(hi1, hi2)

    def starting_in(self, start: Bound) -> Ranges:
        lo, hi = self._search(self._starts, start)
        return [(lo, hi)] if lo < hi else []

    def _search(self, keys: list[Time], b: Bound) -> tuple[int, int]:
        b_lo, lo_closed, b_hi, hi_closed = b
        lo, hi = self._head, len(keys)
        if b_lo is not None:
            lo = (bisect_left if lo_closed else bisect_right)(keys, b_lo, lo, hi)
        if b_hi is not None:
            hi = (bisect_right if hi_closed else bisect_left)(keys, b_hi, lo, hi)
        return lo, hi
