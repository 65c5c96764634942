"""What a matcher produces: matches and rejected events, the same for every kind.

Every kind's match speaks :class:`MatchLike` (``ids()``, ``start``, ``end``,
``partition``, ``returned`` and ``values()``) and adds its own fields (``confidence``
over interval events; ``situations`` and ``detected`` of a TPStream match). A whole run
of any kind gives one :class:`RunResult`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

from kleene.errors import RejectedEventsWarning


@runtime_checkable
class MatchLike(Protocol):
    """What every match has, whatever its kind."""

    @property
    def start(self) -> Any:
        """The time of its first event (as given in the input)."""

    @property
    def end(self) -> Any:
        """The time of its last event."""

    @property
    def partition(self) -> tuple[Any, ...]:
        """Its partition key's values, () when the query has none."""

    @property
    def returned(self) -> Mapping[str, Any]:
        """The RETURN values by name."""

    def ids(self) -> dict[str, tuple[Any, ...]]:
        """Each variable -> the ids of its events, in stream order."""

    def values(self) -> dict[str, Any]:
        """The RETURN values by name (a copy)."""


@dataclass(frozen=True)
class Match:
    """One pattern match.

    ``variables`` maps each positive variable to the ids of its events in stream order
    (a 1-tuple for a single variable). ``positions`` holds the same events' 0-based
    positions in stream order. ``start`` and ``end`` are the timestamps of the first and
    last selected events, as given in the input (numbers or datetimes). ``partition`` is
    the match's partition: the values of its equivalence tests' attributes
    (docs/semantics.md, "Partitions"), or ``()`` when the query has none or under strict
    contiguity (one partition).
    """

    variables: Mapping[str, tuple[Any, ...]]
    positions: Mapping[str, tuple[int, ...]]
    start: Any
    end: Any
    partition: tuple[Any, ...] = ()
    returned: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        variables: Mapping[str, tuple[Any, ...]],
        positions: Mapping[str, tuple[int, ...]],
        start: Any,
        end: Any,
        partition: tuple[Any, ...],
        returned: Mapping[str, Any],
    ) -> Match:
        """The same Match as the constructor builds, without the frozen dataclass's
        per-field ``object.__setattr__`` (result construction makes many)."""
        m = object.__new__(cls)
        fields = m.__dict__
        fields["variables"] = variables
        fields["positions"] = positions
        fields["start"] = start
        fields["end"] = end
        fields["partition"] = partition
        fields["returned"] = returned
        return m

    def ids(self) -> dict[str, tuple[Any, ...]]:
        """Each positive variable -> the ids of its events, in order."""
        return dict(self.variables)

    def values(self) -> dict[str, Any]:
        """The RETURN values by name (empty without a RETURN clause)."""
        return dict(self.returned)

    @property
    def first_position(self) -> int:
        return min(p for ps in self.positions.values() for p in ps)

    @property
    def last_position(self) -> int:
        return max(p for ps in self.positions.values() for p in ps)

    def key(self) -> tuple[tuple[str, tuple[Any, ...]], ...]:
        """A hashable identity of the match: its variables and event ids."""
        return tuple(sorted((k, tuple(v)) for k, v in self.variables.items()))


M = TypeVar("M")


@dataclass(frozen=True)
class RunResult(Generic[M]):
    """Everything one run over a finite input produced: its matches (of the query's
    kind) and the events it rejected, each with its reason."""

    matches: list[M]
    rejected: list[RejectedEvent] = field(default_factory=list)


@dataclass(frozen=True)
class RejectedEvent:
    """An input event that was not matched, and why. ``record`` is the event as read."""

    id: Any
    position: int | None
    reason: str
    record: Mapping[str, Any] = field(default_factory=dict)


def rejected_warning(rejected: list[RejectedEvent]) -> RejectedEventsWarning:
    """The warning of a run that rejected events: their count and the first reason."""
    n = len(rejected)
    return RejectedEventsWarning(
        f"{n} event{'s' if n != 1 else ''} rejected (first: {rejected[0].reason}); "
        "run_detailed() returns each with its reason"
    )


def late_reason(time: Any, current: Any, lateness: float = 0) -> str:
    """Why an event is rejected as late, in the one wording of every engine (datetimes as
    ISO-8601 UTC, numbers as written). ``current`` is the stream's current time, or with
    an allowed lateness the latest time seen so far, which the event trails by more."""
    if not lateness:
        return (
            f"late event: time {_time_text(time)} is before the stream's current time "
            f"{_time_text(current)}"
        )
    return (
        f"late event: time {_time_text(time)} is more than the allowed lateness "
        f"({lateness!r}) before the latest time so far, {_time_text(current)}"
    )


def _time_text(value: Any) -> str:
    if isinstance(value, dt.datetime):
        moment = value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value
        return moment.astimezone(dt.UTC).isoformat()
    return repr(value)
