"""Admission of input events: validation and ordering.

Every event a query needs is checked before it reaches the automaton: a readable time,
a type, every attribute the query reads for that type present, and of the kind the query
demands (from the query text where it shows, otherwise the kind first seen for that
type and attribute). A value the query can use is a number, a string, a boolean or a
datetime; any other value (a list, a mapping, an object) is rejected whatever the query
demands. Events that fail are rejected with a reason, never dropped
silently. Events must arrive in time order; with ``allowed_lateness`` they are held in
a reorder buffer and released once no earlier event can still arrive.
"""

from __future__ import annotations

import heapq
import datetime as dt
from typing import Any

from kleene.compiler.plan import Plan
from kleene.events import EventBatch, is_missing


def value_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dt.datetime):
        return "datetime"
    return type(value).__name__


USABLE_KINDS = frozenset({"boolean", "number", "string", "datetime"})


class Validator:
    """Checks one event's fields against what the plan needs."""

    def __init__(self, plan: Plan, learned: dict[int, str]) -> None:
        self.required = plan.required
        self.groups = plan.kind_groups
        self.demanded = plan.group_kinds
        self.learned = learned

    def _learn_from_columns(self, kinds: dict[tuple[str, str], str | None]) -> None:
        """Learn a group's kind when each of its columns, over the events of its type in
        the batch, holds one kind only: the group's first event then has that kind."""
        found: dict[int, set[str | None]] = {}
        for key, kind in kinds.items():
            group = self.groups.get(key)
            if group is not None and group not in self.demanded and group not in self.learned:
                found.setdefault(group, set()).add(kind)
        for group, seen in found.items():
            if len(seen) == 1 and None not in seen:
                self.learned[group] = seen.pop()  # type: ignore[assignment]

    def clean_types(self, batch: EventBatch) -> set[str]:
        """Event types whose every event in this batch passes: each required attribute,
        over the events of that type, holds values of one known kind with nothing
        missing. Checked column-wise, so the per-event check runs only for the other
        types."""
        present = batch.present_types()
        kinds: dict[tuple[str, str], str | None] = {}
        for etype, attrs in self.required.items():
            if etype in present:
                rows = batch.type_mask([etype])
                for attr in attrs:
                    kinds[(etype, attr)] = batch.kind(attr, rows)
        self._learn_from_columns(kinds)
        clean = set()
        for etype, attrs in self.required.items():
            if etype not in present:
                continue
            for attr in attrs:
                kind = kinds[(etype, attr)]
                group = self.groups.get((etype, attr))
                expected = (
                    None if group is None else (self.demanded.get(group) or self.learned.get(group))
                )
                if kind is None or (group is not None and expected != kind):
                    break
            else:
                clean.add(etype)
        return clean

    def problem(self, etype: Any, batch: EventBatch, j: int) -> str | None:
        """The reason to reject event ``j`` of the batch, or None when it is fine."""
        if etype is None:
            return "missing event type"
        for attr in self.required.get(etype, ()):
            value = batch.column(attr)[j]
            if is_missing(value):
                return f"missing attribute {attr!r} for event type {etype!r}"
            kind = value_kind(value)
            if kind not in USABLE_KINDS:
                return (
                    f"attribute {attr!r} of {etype!r} is a {kind} ({value!r}); a value must "
                    "be a number, a string, a boolean or a datetime"
                )
            group = self.groups.get((etype, attr))
            if group is None:
                continue
            expected = self.demanded.get(group) or self.learned.setdefault(group, kind)
            if kind != expected:
                return (
                    f"attribute {attr!r} of {etype!r} is a {kind} ({value!r}), "
                    f"expected a {expected}"
                )
        return None


class ReorderBuffer:
    """Holds events for up to ``lateness`` time units to put them in time order."""

    def __init__(self) -> None:
        self.heap: list[tuple[Any, int, Any]] = []
        self.max_seen: Any = None

    def push(self, time: Any, arrival: int, item: Any) -> None:
        heapq.heappush(self.heap, (time, arrival, item))
        if self.max_seen is None or time > self.max_seen:
            self.max_seen = time

    def release(self, upto: Any | None) -> list[Any]:
        """Items with time <= ``upto`` (all when None), in (time, arrival) order."""
        out = []
        while self.heap and (upto is None or self.heap[0][0] <= upto):
            out.append(heapq.heappop(self.heap)[2])
        return out

    def __len__(self) -> int:
        return len(self.heap)
