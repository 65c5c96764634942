"""Situations, Allen's interval relations and temporal patterns (TPStream, EDBT 2018).

The data every part of the TPStream engine shares: the deriver produces
:class:`Situation` values (section 4.3), the matcher relates them by a
:class:`TemporalPattern` (section 4.4, Definitions 9-12), the oracle checks both.

Time is discrete and situations are half-open: ``[start, end)``, ``start < end``, where
``end`` is the timestamp of the first event that no longer satisfies the definition.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

Time = int | float


class Allen(Enum):
    """Allen's 13 interval relations (Table 1), named as the query language spells them."""

    BEFORE = "before"
    AFTER = "after"
    MEETS = "meets"
    MET_BY = "met-by"
    OVERLAPS = "overlaps"
    OVERLAPPED_BY = "overlapped-by"
    STARTS = "starts"
    STARTED_BY = "started-by"
    DURING = "during"
    CONTAINS = "contains"
    FINISHES = "finishes"
    FINISHED_BY = "finished-by"
    EQUALS = "equals"

    @property
    def inverse(self) -> Allen:
        """The relation of B to A when this one holds of A to B (Table 1, second column)."""
        return _INVERSE[self]


_PAIRS = [
    (Allen.BEFORE, Allen.AFTER),
    (Allen.MEETS, Allen.MET_BY),
    (Allen.OVERLAPS, Allen.OVERLAPPED_BY),
    (Allen.STARTS, Allen.STARTED_BY),
    (Allen.DURING, Allen.CONTAINS),
    (Allen.FINISHES, Allen.FINISHED_BY),
    (Allen.EQUALS, Allen.EQUALS),
]
_INVERSE = {a: b for a, b in _PAIRS} | {b: a for a, b in _PAIRS}


def holds(relation: Allen, a_start: Time, a_end: Time, b_start: Time, b_end: Time) -> bool:
    """Whether ``[a_start, a_end) relation [b_start, b_end)`` (Table 1's δ_R)."""
    if relation is Allen.BEFORE:
        return a_end < b_start
    if relation is Allen.MEETS:
        return a_end == b_start
    if relation is Allen.OVERLAPS:
        return a_start < b_start < a_end < b_end
    if relation is Allen.STARTS:
        return a_start == b_start and a_end < b_end
    if relation is Allen.DURING:
        return b_start < a_start and a_end < b_end
    if relation is Allen.FINISHES:
        return a_start > b_start and a_end == b_end
    if relation is Allen.EQUALS:
        return a_start == b_start and a_end == b_end
    return holds(relation.inverse, b_start, b_end, a_start, a_end)


@dataclass(frozen=True, init=False)
class Situation:
    """A derived situation of one DEFINE symbol in one partition (Definition 5).

    ``end`` is None while the situation is still going on (a *started* situation,
    section 5.3). ``aggregates`` holds the finished values the RETURN clause reads, by
    the name the compiler gave each aggregate; ``first``/``last`` are the positions (in
    arrival order) of the situation's first and last event, ``first_id``/``last_id``
    those events' ids (None where no event gave one, as in hand-made situations). A
    situation is the run of all its partition's events from the first to the last
    (Definition 7); the events in between are not kept.
    """

    symbol: str
    key: tuple[Any, ...]
    start: Time
    end: Time | None
    first: int
    last: int
    aggregates: Mapping[str, Any] = field(default_factory=dict)
    first_id: Any = None
    last_id: Any = None

    def __init__(
        self,
        symbol: str,
        key: tuple[Any, ...],
        start: Time,
        end: Time | None,
        first: int,
        last: int,
        aggregates: Mapping[str, Any] | None = None,
        first_id: Any = None,
        last_id: Any = None,
    ) -> None:
        # the fields at once, not through the frozen class's per-field setattr: the
        # deriver builds one per situation start and end (hot path)
        self.__dict__.update(
            symbol=symbol,
            key=key,
            start=start,
            end=end,
            first=first,
            last=last,
            aggregates={} if aggregates is None else aggregates,
            first_id=first_id,
            last_id=last_id,
        )

    @property
    def finished(self) -> bool:
        return self.end is not None

    def ids(self) -> tuple[Any, ...]:
        """The ids of its first and last events, one id when that is one event."""
        if self.first == self.last:
            return (self.first_id,)
        return (self.first_id, self.last_id)


@dataclass(frozen=True)
class Constraint:
    """A temporal constraint between two symbols: at least one relation holds
    (Definition 10). ``left`` is the relation's A, ``right`` its B."""

    left: str
    right: str
    relations: frozenset[Allen]

    def holds(self, a: Situation, b: Situation) -> bool:
        assert a.end is not None and b.end is not None
        return any(holds(r, a.start, a.end, b.start, b.end) for r in self.relations)


@dataclass(frozen=True)
class TemporalPattern:
    """A conjunction of constraints over the DEFINE symbols (Definition 11), with the
    window in the events' time units. The window bounds the moment a match becomes
    certain: t_d(P) - min start <= window, t_d(P) being section 5.3.1's detection time.
    Where a match cannot be known before its last end this is Definition 12's
    max end - min start <= window (printed reversed in the paper); where low latency
    detects a match earlier, it is what lets an early report never be retracted
    (docs/semantics.md, "Situations and temporal patterns").
    ``durations`` holds each symbol's duration constraint (AT LEAST / AT MOST /
    BETWEEN) as (minimum, maximum), None where a side is unbounded; symbols without
    one are absent."""

    symbols: tuple[str, ...]
    constraints: tuple[Constraint, ...]
    window: Time
    durations: Mapping[str, tuple[Time | None, Time | None]] = field(default_factory=dict)


@dataclass(frozen=True, init=False)
class TemporalMatch:
    """One temporal configuration that matches (Definition 12), per partition.

    It speaks :class:`kleene.match.MatchLike`: ``partition`` holds the partition key's
    values (``()`` without PARTITION BY), ``start`` is the earliest situation start,
    ``end`` Definition 12's output time ``time``, the largest end (or, for a match
    reported while a situation still runs, the detection time); ``ids()`` maps each
    symbol to the ids of its situation's first and last events (:meth:`Situation.ids`).
    ``detected`` is when the matcher could first know the match (section 5.3), never
    later than ``time``. ``returned`` holds the RETURN values by name (filled by the
    query's runtime).
    """

    partition: tuple[Any, ...]
    situations: Mapping[str, Situation]
    time: Time
    detected: Time
    returned: Mapping[str, Any] = field(default_factory=dict)

    def __init__(
        self,
        partition: tuple[Any, ...],
        situations: Mapping[str, Situation],
        time: Time,
        detected: Time,
        returned: Mapping[str, Any] | None = None,
    ) -> None:
        # as Situation's: one match per configuration found (hot path)
        self.__dict__.update(
            partition=partition,
            situations=situations,
            time=time,
            detected=detected,
            returned={} if returned is None else returned,
        )

    @property
    def start(self) -> Time:
        """The earliest start of its situations."""
        return min(s.start for s in self.situations.values())

    @property
    def end(self) -> Time:
        """Definition 12's output time: :attr:`time`."""
        return self.time

    def ids(self) -> dict[str, tuple[Any, ...]]:
        """Each symbol -> the ids of its situation's first and last events."""
        return {name: s.ids() for name, s in self.situations.items()}

    def values(self) -> dict[str, Any]:
        """The RETURN values by name (empty without a RETURN clause)."""
        return dict(self.returned)

    def key(self) -> tuple[Any, ...]:
        """A hashable identity of the match: its partition and each symbol's situation
        start (a symbol's situations in one partition never overlap, Definition 8)."""
        return (self.partition, tuple(sorted((x, s.start) for x, s in self.situations.items())))
