"""The non-overlap output format (SIGMOD 2008, sections 2 and 5.2.1).

Per partition, matches are ordered by (last position, first position, positions, then
each variable's positions in pattern order to tell apart selections of the same events); the
first is output and every match starting at or before its last position is dropped.
Matches arrive in order of their last event, except those held back by a trailing
negation, so a candidate is released only when no undecided candidate precedes it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kleene.runtime.snapshot import boolean, integer, mapping, partition_key, sequence

Order = tuple[Any, ...]  # (last position, first position, positions, per variable)


class NonOverlapState:
    """Per-partition candidates and the last output match's end (picklable)."""

    def __init__(self) -> None:
        # partition -> list of [order, decided, accepted, payload]
        self.candidates: dict[tuple[Any, ...], list[list[Any]]] = {}
        self.last_end: dict[tuple[Any, ...], int] = {}

    def offer(self, partition: tuple[Any, ...], order: Order, payload: Any, decided: bool) -> None:
        """Add a candidate (decided now, or pending a trailing negation); call
        :meth:`release` once all candidates of the current event are offered."""
        self.candidates.setdefault(partition, []).append([order, decided, decided, payload])

    def decide(self, partition: tuple[Any, ...], payload: Any, accepted: bool) -> list[Any]:
        for entry in self.candidates.get(partition, []):
            if entry[3] is payload:
                entry[1], entry[2] = True, accepted
        return self.release(partition)

    def release(self, partition: tuple[Any, ...]) -> list[Any]:
        entries = self.candidates.get(partition)
        if not entries:
            return []
        entries.sort(key=lambda x: x[0])
        out = []
        while entries and entries[0][1]:
            order, _, accepted, payload = entries.pop(0)
            if accepted and order[1] > self.last_end.get(partition, -1):
                self.last_end[partition] = order[0]
                out.append(payload)
        if not entries:
            del self.candidates[partition]
        return out

    # --- snapshots (kleene.runtime.snapshot) ------------------------------------------

    def to_data(self, ref: Callable[[Any], int]) -> Any:
        """Plain data; ``ref`` names a payload (the matcher writes them once, with
        their order)."""
        candidates = {
            key: [(decided, accepted, ref(payload)) for _order, decided, accepted, payload in e]
            for key, e in self.candidates.items()
        }
        return (candidates, self.last_end)

    @classmethod
    def from_data(cls, data: Any, payload: Callable[[Any], tuple[Order, Any]]) -> NonOverlapState:
        """The state of :meth:`to_data`; ``payload`` turns a reference back into the
        payload's order and the payload."""
        candidates, last_end = sequence(data, "the non-overlap state", tuple, 2)
        st = cls()
        for key, entries in mapping(candidates, "non-overlap candidates").items():
            st.candidates[partition_key(key)] = [
                _entry(entry, payload) for entry in sequence(entries, "non-overlap candidates")
            ]
        for key, end in mapping(last_end, "non-overlap ends").items():
            st.last_end[partition_key(key)] = integer(end, "a non-overlap end", -1)
        return st


def _entry(x: Any, payload: Callable[[Any], tuple[Order, Any]]) -> list[Any]:
    decided, accepted, ref = sequence(x, "a non-overlap candidate", tuple, 3)
    order, found = payload(ref)
    return [order, boolean(decided, "a flag"), boolean(accepted, "a flag"), found]
