"""Events in stream order, as the oracle sees them (docs/semantics.md, "Stream and order").

The stream is sorted stably by timestamp, so events with equal timestamps keep their
arrival order; each event gets its 0-based position in that order. An event's id is its
id field when present, else its 0-based index in the input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Attribute names that denote an event's own fields rather than its attributes.
TYPE_ATTR = "type"
TIME_ATTR = "timestamp"
ID_ATTR = "id"


class MissingAttributeError(LookupError):
    """An expression asked an event for an attribute it does not carry."""


@dataclass(frozen=True, eq=False)
class Event:
    """One input event. Identity is the object itself (two events never compare equal)."""

    position: int
    index: int
    id: Any
    type: Any
    time: Any
    record: Mapping[str, Any]

    def has(self, attr: str) -> bool:
        return attr in (TYPE_ATTR, TIME_ATTR, ID_ATTR) or attr in self.record

    def value(self, attr: str) -> Any:
        """``timestamp``, ``type`` and ``id`` are the event's own fields; anything else is
        an attribute of its record."""
        if attr == TIME_ATTR:
            return self.time
        if attr == TYPE_ATTR:
            return self.type
        if attr == ID_ATTR:
            return self.id
        try:
            return self.record[attr]
        except KeyError:
            raise MissingAttributeError(attr) from None

    def __repr__(self) -> str:
        return f"Event(#{self.position} id={self.id!r} {self.type}@{self.time})"


def load_stream(
    events: Sequence[Mapping[str, Any]], *, type_field: str, time_field: str, id_field: str
) -> tuple[Event, ...]:
    """The events in stream order: by timestamp, then by input index."""
    order = sorted(range(len(events)), key=lambda i: events[i][time_field])
    stream = []
    for position, index in enumerate(order):
        record = events[index]
        stream.append(
            Event(
                position=position,
                index=index,
                id=record.get(id_field, index),
                type=record[type_field],
                time=record[time_field],
                record=record,
            )
        )
    return tuple(stream)
