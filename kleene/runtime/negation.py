"""Negation as a nested query over candidate events (SIGMOD 2008, section 3.1).

The positive pattern is matched first; each negated component then searches for an
event of its type, between its neighbouring positive components and within the window
of the match, that satisfies the conjuncts mentioning it. Candidates are kept per
negated variable (per partition when the key covers it) in position order, pruned by
the window.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any

from kleene.compiler.plan import Negation


class CandidateList:
    """Events of one negated type in one partition, in stream order."""

    __slots__ = ("events", "positions", "times")

    def __init__(self) -> None:
        self.positions: list[int] = []
        self.times: list[Any] = []
        self.events: list[tuple[Any, ...]] = []

    def add(self, position: int, e: tuple[Any, ...]) -> None:
        self.positions.append(position)
        self.times.append(e[1])
        self.events.append(e)

    def prune(self, oldest_time: Any) -> None:
        cut = bisect_left(self.times, oldest_time)
        if cut:
            del self.positions[:cut], self.times[:cut], self.events[:cut]

    def between(self, low: int, high: int) -> list[tuple[Any, ...]]:
        """Events with low < position < high."""
        lo = bisect_right(self.positions, low)
        hi = bisect_left(self.positions, high)
        return self.events[lo:hi]


class NegationState:
    """Candidate lists of every negated variable (picklable)."""

    def __init__(self) -> None:
        self.lists: dict[tuple[str, tuple[Any, ...]], CandidateList] = {}

    def add(
        self, negation: Negation, partition: tuple[Any, ...], position: int, e: tuple[Any, ...]
    ) -> None:
        key = (negation.var, partition if negation.keyed else ())
        self.lists.setdefault(key, CandidateList()).add(position, e)

    def prune(self, oldest_time: Any) -> None:
        for key in list(self.lists):
            lst = self.lists[key]
            lst.prune(oldest_time)
            if not lst.positions:
                del self.lists[key]


def violated(
    negation: Negation,
    st: NegationState,
    partition: tuple[Any, ...],
    bounds: list[tuple[int, int, Any, Any]],
    vector: tuple[Any, ...],
    window: float | None,
    first_time: Any,
    last_time: Any,
) -> bool:
    """Whether some candidate event rules the match out.

    ``bounds[k]`` is (first position, last position, first time, last time) of positive
    component k.
    """
    lst = st.lists.get((negation.var, partition if negation.keyed else ()))
    if lst is None:
        return False
    low = bounds[negation.before][1] if negation.before is not None else -1
    high = bounds[negation.after][0] if negation.after is not None else 1 << 62
    for e in lst.between(low, high):
        if window is not None and (max(last_time, e[1]) - min(first_time, e[1]) > window):
            continue
        if negation.check(e, vector):
            return True
    return False
