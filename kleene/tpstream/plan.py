"""The compiled TPStream query: everything the deriver, the matcher and the output need.

The runtime reads only this plan (never the query text or its AST): each situation
definition with its compiled predicate, duration constraint and the aggregates RETURN
reads of it (section 4.3); the temporal pattern (section 4.4); the RETURN items as
compiled functions; the partition attributes. Lengths of time are kept as written
(:class:`Length`) and turned into the stream's time units once the kind of its
timestamps is known (:meth:`TemporalPlan.pattern_for`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kleene.compiler.expr import Expr
from kleene.compiler.returns import STRING, ValueType
from kleene.errors import EventError
from kleene.times import MICROS, TIME_UNITS, time_unit_seconds
from kleene.tpstream.model import Constraint, TemporalPattern, Time

# what a summary aggregate reads of a situation, beside its events' attributes
SITUATION_FIELDS = ("start", "end", "duration")
AGGREGATES = ("first", "last", "min", "max", "avg", "sum", "count", *SITUATION_FIELDS)


@dataclass(frozen=True)
class Length:
    """A length of time as written: ``amount`` in seconds when ``seconds``, else in
    timestamp units; ``text`` is how the query wrote it (``AT LEAST 5 seconds``)."""

    amount: int | float
    seconds: bool
    text: str

    def in_units(self, time_kind: str | None, time_unit: str | None) -> Time:
        """The length in the stream's internal time units: microseconds for datetime
        timestamps, ``time_unit`` units for numeric ones (EventError when a length with
        a unit meets numbers of unknown unit: kleene never guesses)."""
        if time_kind == "datetime":  # seconds, with a unit or without
            return self.amount * MICROS
        if not self.seconds:
            return self.amount
        if time_unit is None:
            raise EventError(
                f"{self.text} has a time unit but the timestamps are plain numbers: say "
                "what one timestamp unit is with time_unit= (one of "
                f"{', '.join(TIME_UNITS)}), or write lengths without a unit, in timestamp units"
            )
        return self.amount / time_unit_seconds(time_unit)


@dataclass(frozen=True)
class AggregatePlan:
    """One aggregate the deriver maintains for a symbol (Algorithm 1's γ): ``func`` of
    attribute ``attr`` (None for count); ``name`` keys it in
    :attr:`~kleene.tpstream.model.Situation.aggregates`."""

    func: str
    attr: str | None
    name: str


@dataclass(frozen=True)
class SymbolPlan:
    """``DEFINE name AS predicate [duration]``: ``holds(e)`` is the compiled predicate
    over an event tuple (values of :attr:`TemporalPlan.attributes` in order), true only
    when the predicate is true (an error is false); ``source`` its generated code;
    ``condition`` the predicate in the expression IR, which the columnar backend
    evaluates over a whole batch (:mod:`kleene.tpstream.batch`)."""

    name: str
    holds: Callable[[tuple[Any, ...]], bool]
    source: str
    text: str
    minimum: Length | None
    maximum: Length | None
    aggregates: tuple[AggregatePlan, ...]
    condition: Expr | None = None


@dataclass(frozen=True)
class ReturnPlan:
    """One RETURN item: ``value(inputs)`` with ``inputs`` mapping (symbol, aggregate
    name) to the finished aggregate (None when it has no value); an error is None.
    ``type`` is the type of its values (:func:`kleene.tpstream.types.return_type`)."""

    name: str
    value: Callable[[Mapping[tuple[str, str], Any]], Any]
    source: str
    reads: tuple[tuple[str, str], ...]
    type: ValueType = STRING


@dataclass(frozen=True)
class TemporalPlan:
    """A compiled TPStream query (EDBT 2018, sections 3-5)."""

    text: str
    stream: str
    attributes: tuple[str, ...]
    partition: tuple[str, ...]
    symbols: tuple[SymbolPlan, ...]
    constraints: tuple[Constraint, ...]
    window: Length
    returns: tuple[ReturnPlan, ...]
    relations_text: tuple[str, ...]

    @property
    def return_names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.returns)

    @property
    def symbol_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.symbols)

    def pattern_for(self, time_kind: str | None, time_unit: str | None) -> TemporalPattern:
        """The temporal pattern with the window and durations in the stream's time units."""
        durations: dict[str, tuple[Time | None, Time | None]] = {}
        for s in self.symbols:
            if s.minimum is None and s.maximum is None:
                continue
            low = None if s.minimum is None else s.minimum.in_units(time_kind, time_unit)
            high = None if s.maximum is None else s.maximum.in_units(time_kind, time_unit)
            durations[s.name] = (low, high)
        return TemporalPattern(
            symbols=self.symbol_names,
            constraints=self.constraints,
            window=self.window.in_units(time_kind, time_unit),
            durations=durations,
        )
