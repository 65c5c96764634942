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
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from kleene.compiler.plan import Plan
from kleene.errors import EventError
from kleene.events import EVENT_TIME, EventBatch, EventFields, is_missing, value_kind
from kleene.runtime.snapshot import (
    Shapes,
    boolean,
    fail,
    integer,
    number,
    optional_number,
    sequence,
)
from kleene.times import MICROS, missing_time_unit, time_unit_seconds

USABLE_KINDS = frozenset({"boolean", "number", "string", "datetime"})


class Requirements(Protocol):
    """What admission checks: a plan's, or another kind of query's (event sets)."""

    @property
    def required(self) -> dict[str, tuple[str, ...]]: ...
    @property
    def kind_groups(self) -> dict[tuple[str, str], int]: ...
    @property
    def group_kinds(self) -> dict[int, str]: ...


class Validator:
    """Checks one event's fields against what the plan needs."""

    def __init__(self, plan: Requirements, learned: dict[int, str]) -> None:
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
            unusable = attribute_problem(etype, attr, value)
            if unusable is not None:
                return unusable
            kind = value_kind(value)
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


def attribute_problem(etype: Any, attr: str, value: Any) -> str | None:
    """Why an event of type ``etype`` cannot give ``value`` for ``attr`` (missing, or not
    a number, a string, a boolean or a datetime); None when it can."""
    if is_missing(value):
        return f"missing attribute {attr!r} for event type {etype!r}"
    kind = value_kind(value)
    if kind not in USABLE_KINDS:
        return (
            f"attribute {attr!r} of {etype!r} is a {kind} ({value!r}); a value must "
            "be a number, a string, a boolean or a datetime"
        )
    return None


def window_size(plan: Plan, time_kind: str | None, time_unit: str | None) -> float | None:
    """The WITHIN size in the stream's internal time units: a window with a unit is in
    seconds, turned into microseconds for datetimes and into timestamp units for
    numeric times by ``time_unit`` (EventError when it is not given: kleene never
    guesses the unit of a number); a window without a unit is in timestamp units
    (seconds for datetimes)."""
    w = plan.window
    if w is None:
        return None
    if time_kind == "datetime":
        return w * MICROS
    if time_kind == "number" and plan.window_has_unit:
        if time_unit is None:
            raise EventError(missing_time_unit(plan.within))
        return w / time_unit_seconds(time_unit)
    return w


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

    # --- snapshots (kleene.runtime.snapshot) ------------------------------------------

    def to_data(self) -> Any:
        """Plain data: (time, arrival, (event, useful)) items and the latest time."""
        return (self.heap, self.max_seen)

    @classmethod
    def from_data(cls, data: Any, shapes: Shapes) -> ReorderBuffer:
        heap, max_seen = sequence(data, "the reorder buffer", tuple, 2)
        buffer = cls()
        for item in sequence(heap, "the reorder buffer"):
            time, arrival, held = sequence(item, "a held event", tuple, 3)
            e, useful = sequence(held, "a held event", tuple, 2)
            number(time, "a held event's time")
            integer(arrival, "a held event's arrival", 0)
            if shapes.event(e)[EVENT_TIME] != time:
                fail("a held event's time")
            boolean(useful, "a held event's flag")
        buffer.max_seen = optional_number(max_seen, "the reorder buffer's latest time")
        buffer.heap = sorted(heap, key=lambda x: (x[0], x[1]))  # a sorted list is a heap
        return buffer


def check_columns(
    plans: Iterable[Plan], events: Any, fields: EventFields, derived: frozenset[str] = frozenset()
) -> None:
    """Refuse, before a run, a typed input (pyarrow table, pandas DataFrame) that cannot
    hold what the queries read: a missing type or time column, a missing column of an
    attribute read for some event type, or a categorical type column whose categories
    lack a type of the pattern. Each would otherwise reject every event concerned, or
    silently match nothing. ``derived`` names the event types a program defines (not
    in the input)."""
    described = _describe(events)
    if described is None:
        return
    columns, rows = described
    if rows:
        categories = _type_categories(events, fields.type_field)
        check_column_names(plans, columns, fields, derived, categories)


def check_column_names(
    plans: Iterable[Plan],
    columns: Sequence[str],
    fields: EventFields,
    derived: frozenset[str] = frozenset(),
    categories: Sequence[Any] | None = None,
) -> None:
    """:func:`check_columns` on an input's column names (and type categories)."""
    for name, role, option in (
        (fields.type_field, "event type", "type_field"),
        (fields.time_field, "time", "time_field"),
    ):
        if name not in columns:
            raise EventError(
                f"the input has no {name!r} column for the {role} (columns: "
                f"{_listing(columns)}); name the column with {option}= "
                f"(--{option.replace('_', '-')})"
            )
    for plan in plans:
        for etype, attrs in plan.required.items():
            for attr in attrs:
                if attr not in columns and etype not in derived:
                    raise EventError(
                        f"the query reads attribute {attr!r} of {etype} events but the input "
                        f"has no {attr!r} column (columns: {_listing(columns)})"
                    )
        if categories is not None:
            for state in plan.states:
                if state.event_type not in categories and state.event_type not in derived:
                    raise EventError(
                        f"the input's {fields.type_field!r} column is categorical without "
                        f"{state.event_type!r} among its categories ({_listing(categories)}): "
                        f"no {state.event_type} event can occur, so the query cannot match"
                    )


def _describe(events: Any) -> tuple[list[str], int] | None:
    """(column names, row count) of a typed input; None for schema-less input."""
    import pyarrow as pa

    if isinstance(events, pa.RecordBatch):
        events = pa.Table.from_batches([events])
    if isinstance(events, pa.Table):
        return events.column_names, events.num_rows
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(events, pd.DataFrame):
        return [str(c) for c in events.columns], len(events)
    return None


def _type_categories(events: Any, type_field: str) -> list[Any] | None:
    """The declared values of a categorical / dictionary type column, else None."""
    import pyarrow as pa

    if isinstance(events, pa.RecordBatch):
        events = pa.Table.from_batches([events])
    if isinstance(events, pa.Table):
        if type_field not in events.column_names:
            return None
        col = events.column(type_field)
        if not pa.types.is_dictionary(col.type):
            return None
        found: dict[Any, None] = {}
        for chunk in col.chunks:
            found.update(dict.fromkeys(chunk.dictionary.to_pylist()))
        return list(found)
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(events, pd.DataFrame) and type_field in events.columns:
        col = events[type_field]
        if isinstance(col.dtype, pd.CategoricalDtype):
            return list(col.cat.categories)
    return None


def _listing(names: Iterable[Any]) -> str:
    shown = [repr(n) for n in names]
    return ", ".join(shown[:20]) + (", ..." if len(shown) > 20 else "") if shown else "none"


def schema_gaps(plans: Iterable[Plan], rows: Sequence[Any], fields: EventFields) -> list[str]:
    """For schema-less input (mappings): each attribute a query reads for an event type
    that no event of that type carries, as "Type.attr"."""
    required: dict[str, set[str]] = {}
    for plan in plans:
        for etype, attrs in plan.required.items():
            required.setdefault(etype, set()).update(attrs)
    seen: dict[str, set[str]] = {}
    for row in rows:
        if not isinstance(row, Mapping):
            continue
        kind = row.get(fields.type_field)
        if isinstance(kind, str) and kind in required:
            present = seen.setdefault(kind, set())
            present.update(k for k, v in row.items() if not is_missing(v))
    return [
        f"{etype}.{attr}"
        for etype, present in seen.items()
        for attr in sorted(required[etype] - present)
    ]
