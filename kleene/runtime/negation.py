"""Negation as a nested query over candidate events (SIGMOD 2008, section 3.1; SIGMOD
2014, section 2.1 for negation of a whole sequence).

The positive pattern is matched first; each negated component then searches for an
event of its type, between its neighbouring positive components and within the window
of the match, that satisfies the conjuncts mentioning it. A negated sequence
``~SEQ(B b, C c)`` searches depth first for b, then for c after b, each member checked
against the conjuncts whose last negated identifier it is. Candidates are kept per
negated variable (per partition when the key covers it) in position order, pruned by
the window.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any

from kleene.compiler.plan import NegatedEvent, Negation
from kleene.events import EVENT_TIME
from kleene.runtime.snapshot import Shapes, fail, integer, partition_key, sequence


class CandidateList:
    """Events of one negated type in one partition, in stream order."""

    __slots__ = ("events", "positions", "times")

    def __init__(self) -> None:
        self.positions: list[int] = []
        self.times: list[Any] = []
        self.events: list[tuple[Any, ...]] = []

    def add(self, position: int, e: tuple[Any, ...]) -> None:
        self.positions.append(position)
        self.times.append(e[EVENT_TIME])
        self.events.append(e)

    def prune(self, oldest_time: Any) -> None:
        cut = bisect_left(self.times, oldest_time)
        if cut:
            del self.positions[:cut], self.times[:cut], self.events[:cut]

    def between(self, low: int, high: int) -> zip[tuple[int, tuple[Any, ...]]]:
        """(position, event) of the events with low < position < high."""
        lo = bisect_right(self.positions, low)
        hi = bisect_left(self.positions, high)
        return zip(self.positions[lo:hi], self.events[lo:hi], strict=True)


class NegationState:
    """Candidate lists of every negated variable (picklable)."""

    def __init__(self) -> None:
        self.lists: dict[tuple[str, tuple[Any, ...]], CandidateList] = {}

    def add(
        self, member: NegatedEvent, partition: tuple[Any, ...], position: int, e: tuple[Any, ...]
    ) -> None:
        key = (member.var, partition if member.keyed else ())
        self.lists.setdefault(key, CandidateList()).add(position, e)

    def prune(self, oldest_time: Any) -> None:
        for key in list(self.lists):
            lst = self.lists[key]
            lst.prune(oldest_time)
            if not lst.positions:
                del self.lists[key]

    # --- snapshots (kleene.runtime.snapshot) ------------------------------------------

    def to_data(self) -> Any:
        return [(var, part, lst.positions, lst.events) for (var, part), lst in self.lists.items()]

    @classmethod
    def from_data(cls, data: Any, shapes: Shapes) -> NegationState:
        """The candidate lists of :meth:`to_data`, checked: negated variables of the
        plan, events in position order."""
        negated = {m.var for n in shapes.plan.negations for m in n.members}
        st = cls()
        for item in sequence(data, "the negation candidates"):
            var, part, positions, events = sequence(item, "a negation candidate list", tuple, 4)
            if var not in negated:
                fail("negation candidates of a variable the query does not negate")
            lst = CandidateList()
            for p in sequence(positions, "negation candidate positions"):
                integer(p, "a negation candidate's position", 0)
            for e in sequence(events, "negation candidates"):
                shapes.event(e)
            if len(positions) != len(events) or positions != sorted(set(positions)):
                fail("negation candidates out of position order")
            lst.positions, lst.events = positions, events
            lst.times = [e[EVENT_TIME] for e in events]
            st.lists[(var, partition_key(part))] = lst
        return st


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
    """Whether some candidate events rule the match out.

    ``bounds[k]`` is (first position, last position, first time, last time) of positive
    component k.
    """
    low, high = -1, 1 << 62
    if negation.before is not None:
        _first, low, _first_time, _last_time = bounds[negation.before]
    if negation.after is not None:
        high, _last, _first_time, _last_time = bounds[negation.after]
    search = _Search(negation.members, st, partition, vector, window, high)
    return search.found(0, low, first_time, last_time, ())


class _Search:
    """Depth-first search for events of a negated sequence, in order, in one gap."""

    def __init__(
        self,
        members: tuple[NegatedEvent, ...],
        st: NegationState,
        partition: tuple[Any, ...],
        vector: tuple[Any, ...],
        window: float | None,
        high: int,
    ) -> None:
        self.members = members
        self.lists = [st.lists.get((m.var, partition if m.keyed else ())) for m in members]
        self.vector = vector
        self.window = window
        self.high = high

    def found(
        self, k: int, low: int, first: Any, last: Any, chosen: tuple[tuple[Any, ...], ...]
    ) -> bool:
        if k == len(self.members):
            return True
        lst = self.lists[k]
        if lst is None:
            return False
        check = self.members[k].check
        for position, e in lst.between(low, self.high):
            t = e[EVENT_TIME]
            lo, hi = min(first, t), max(last, t)
            if self.window is not None and hi - lo > self.window:
                continue
            if check(e, self.vector, chosen) and self.found(k + 1, position, lo, hi, (*chosen, e)):
                return True
        return False
