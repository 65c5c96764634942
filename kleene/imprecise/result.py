"""What a query over interval events returns (VLDB 2010, section 2.3 and Table 1)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from kleene.compiler.plan import Plan
from kleene.imprecise.model import IntervalEvent, Probability


@dataclass(frozen=True, slots=True)
class ImpreciseMatch:
    """One result: the *signature* (``variables``: each variable's event ids, a 1-tuple
    per single variable, as in :class:`kleene.Match`), the tightest time range
    ``[start, end]`` covering every point match of the signature, and its
    ``confidence``: the total probability of the possible worlds that produce it.
    ``positions`` are the events' 0-based arrival positions; ``returned`` the RETURN
    values by name; ``partition`` the values of the query's partition key (its
    equivalence tests, docs/semantics.md "Partitions") in the input's own types, ``()``
    without one, as in :class:`kleene.Match` (:class:`kleene.match.MatchLike`)."""

    variables: Mapping[str, tuple[Any, ...]]
    positions: Mapping[str, tuple[int, ...]]
    start: int
    end: int
    confidence: Probability
    returned: Mapping[str, Any] = field(default_factory=dict)
    partition: tuple[Any, ...] = ()

    def ids(self) -> dict[str, tuple[Any, ...]]:
        """Each variable -> the ids of its events."""
        return dict(self.variables)

    def values(self) -> dict[str, Any]:
        """The RETURN values by name (empty without a RETURN clause)."""
        return dict(self.returned)

    def key(self) -> tuple[tuple[str, tuple[Any, ...]], ...]:
        """The signature as a hashable value."""
        return tuple(sorted((k, tuple(v)) for k, v in self.variables.items()))


class Labels:
    """Per event, the 1-tuples of its id and position that results hold, built once and
    shared by every result holding the event: a result is then one new object and two
    small dicts, and the garbage collector, which once it has seen a tuple of plain
    values stops tracking it and the dicts holding only such tuples, has little new to
    walk per result. Forgotten wholesale past ``limit`` events."""

    def __init__(self, limit: int = 100_000) -> None:
        self.limit = limit
        self.by_position: dict[int, tuple[tuple[Any], tuple[int]]] = {}

    def of(self, e: Any) -> tuple[tuple[Any], tuple[int]]:
        """(id,), (position,) of an event."""
        found = self.by_position.get(e.position)
        if found is None:
            if len(self.by_position) >= self.limit:
                self.by_position.clear()
            found = self.by_position[e.position] = ((e.values[2],), (e.position,))
        return found


def partition_of(plan: Plan, first: IntervalEvent) -> tuple[Any, ...]:
    """The partition of a result whose first event is ``first``: the leading values of
    its run key (the key routes runs, so every event of the result has them; a wider
    hash key only starts with the partition), () when runs are not routed by one."""
    width = plan.partition_width
    if not width:
        return ()
    index = plan.key_index.get(first.type, plan.common_key_index)
    values = first.values
    return tuple([values[i] for i in index[:width]])


def result_order(m: ImpreciseMatch) -> tuple[Any, ...]:
    """Results of a whole run: by the last event's arrival, then the first's."""
    positions = sorted(p for ps in m.positions.values() for p in ps)
    return (positions[-1], positions[0], tuple(positions))


class Framework(ABC):
    """What the matcher asks of an evaluation framework (point-based, event-based,
    Kleene): its results as iterators that do the matching, so that ``max_matches``
    stops them (:mod:`kleene.runtime.output`); ``push`` and ``flush`` give them as lists."""

    @abstractmethod
    def results(
        self, events: list[IntervalEvent], now_lower: int | None
    ) -> Iterator[ImpreciseMatch]:
        """Take admitted events (``now_lower``: the largest lower bound seen so far);
        the results that became final."""

    @abstractmethod
    def final_results(self) -> Iterator[ImpreciseMatch]:
        """The end of the stream: every buffered event and pending result."""

    def push(self, events: list[IntervalEvent], now_lower: int | None) -> list[ImpreciseMatch]:
        """:meth:`results` as a list."""
        return list(self.results(events, now_lower))

    def flush(self) -> list[ImpreciseMatch]:
        """:meth:`final_results` as a list."""
        return list(self.final_results())
