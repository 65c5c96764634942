"""The non-overlap output format (SIGMOD 2008, sections 2 and 5.2.1).

Per partition, matches are ordered by (last position, first position, positions, then
each variable's positions in pattern order to tell apart selections of the same events); the
first is output and every match starting at or before its last position is dropped.
Matches arrive in order of their last event, except those held back by a trailing
negation, so a candidate is released only when no undecided candidate precedes it.
"""

from __future__ import annotations

from typing import Any

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
