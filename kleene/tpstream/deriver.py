"""The deriver of one partition (EDBT 2018, section 5.1, Algorithm 1).

For each DEFINE symbol it keeps the situation going on, if any: started on the first
event satisfying the predicate, prolonged (its aggregates updated) by each following
one, and finished by the first event that fails it, at that event's timestamp: the
longest contiguous run of satisfying events, half-open ``[ts, te)`` (Definition 7). A
finished situation is reported when its duration ``te - ts`` satisfies the symbol's
duration constraint.

Situations are also reported when they become visible (section 5.3), ``end`` None:
the matcher matches them with low latency, and without it still needs them to know
how long finished ones must be kept. Section 5.3's duration rules apply: a symbol with
a maximum duration is never reported started (only finished, once the constraint is
known to hold); with only a minimum, it is reported at the first event at which
``t - ts`` reaches the minimum (the deferred start); without a constraint, at its
first event.

An event's timestamp must be later than the previous event's of its partition (the
paper's unique timestamps, section 4.1): admission rejects the others. At the end of
the input a situation still going on has no end (no failing event): it is not a
derived situation and is never reported finished.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kleene.tpstream import aggregates
from kleene.tpstream.model import Situation, TemporalPattern, Time
from kleene.tpstream.plan import SymbolPlan, TemporalPlan


@dataclass
class Ongoing:
    """A situation going on: its start, first and last event positions, whether it was
    reported started, one aggregate state per aggregate of its symbol, and the ids of
    its first and last events."""

    start: Time
    first: int
    last: int
    reported: bool
    states: list[list[Any]]
    first_id: Any = None
    last_id: Any = None

    def to_data(self) -> list[Any]:
        return [
            self.start,
            self.first,
            self.last,
            self.reported,
            self.states,
            self.first_id,
            self.last_id,
        ]


class Deriver:
    """Derives the situations of every symbol in one partition, event by event."""

    def __init__(
        self,
        plan: TemporalPlan,
        pattern: TemporalPattern,
        key: tuple[Any, ...],
    ) -> None:
        self.symbols = plan.symbols
        self.key = key
        self.durations = pattern.durations
        self.attributes = plan.attributes
        self.attr_index = [
            [None if a.attr is None else plan.attributes.index(a.attr) for a in s.aggregates]
            for s in plan.symbols
        ]
        self.ongoing: list[Ongoing | None] = [None] * len(plan.symbols)
        # the runs of the last push_columns (for partial_at): where each began in
        # that batch, and the states of one going on before it
        self._runs: dict[tuple[int, Time], tuple[int, list[list[Any]] | None]] = {}
        self._column: Callable[[int], list[Any]] = lambda i: []
        self._ident: Callable[[int], Any] = lambda i: None

    def push(
        self, time: Time, position: int, values: tuple[Any, ...], ident: Any = None
    ) -> tuple[list[Situation], list[Situation]]:
        """One event of the partition (its id ``ident``, its position if None): the
        situations it makes visible (started, end None) and those it finishes, in
        DEFINE order."""
        started: list[Situation] = []
        finished: list[Situation] = []
        if ident is None:
            ident = position
        for k, symbol in enumerate(self.symbols):
            now = self.ongoing[k]
            if symbol.holds(values):
                if now is None:
                    now = self.ongoing[k] = self._open(k, time, position, values, ident)
                else:
                    self._prolong(k, now, position, values, ident)
                if not now.reported and self._visible(symbol, now, time):
                    now.reported = True
                    started.append(self._situation(symbol, now, None, {}))
            elif now is not None:
                self.ongoing[k] = None
                if self._satisfied(symbol.name, time - now.start):
                    finished.append(self._situation(symbol, now, time, self._results(k, now)))
        return started, finished

    def going_on_since(self) -> Time | None:
        """The earliest start of a situation going on (reported or not), None if none:
        every situation the matcher will still see starts then or at a later event."""
        starts = [now.start for now in self.ongoing if now is not None]
        return min(starts) if starts else None

    def partial(self, symbol: str, start: Time) -> Mapping[str, Any] | None:
        """The aggregates so far of ``symbol``'s situation going on since ``start``."""
        for k, s in enumerate(self.symbols):
            now = self.ongoing[k]
            if s.name == symbol and now is not None and now.start == start:
                return self._results(k, now)
        return None

    def push_columns(
        self,
        times: np.ndarray,
        t: list[Time],
        positions: list[int],
        masks: list[np.ndarray],
        column: Callable[[int], list[Any]],
        ident: Callable[[int], Any] | None = None,
    ) -> list[tuple[int, int, int, Situation]]:
        """Many events of the partition at once, column-wise: ``times`` (increasing,
        ``t`` the same as a list) and ``positions`` of the events, ``masks[k]``
        whether each satisfies symbol k's predicate, ``column(i)`` the values of
        attribute i, ``ident(i)`` the id of event i (its position if None; asked only
        of the events that begin or end a situation). The result is what :meth:`push`
        would report event by event, as ``(event index, 0 started or 1 finished,
        symbol index, situation)`` per situation, unsorted: the runs of each mask are
        found by its differences, not by a Python step
        per event."""
        out: list[tuple[int, int, int, Situation]] = []
        self._runs.clear()
        self._column = column
        self._ident = positions.__getitem__ if ident is None else ident
        n = len(t)
        for k, symbol in enumerate(self.symbols):
            mask = masks[k]
            before = np.empty(n, dtype=bool)
            before[0] = self.ongoing[k] is not None
            before[1:] = mask[:-1]
            opens = np.flatnonzero(mask & ~before).tolist()
            closes = np.flatnonzero(before & ~mask).tolist()
            if mask[-1]:
                closes.append(n)
            if self.ongoing[k] is not None:
                self._run(k, -1, closes[0], times, t, positions, out)
                closes = closes[1:]
            if symbol.aggregates or symbol.name in self.durations:
                for a, b in zip(opens, closes, strict=True):
                    self._run(k, a, b, times, t, positions, out)
            elif opens:
                self._plain_runs(k, opens, closes, t, positions, out)
        return out

    def _plain_runs(
        self,
        k: int,
        opens: list[int],
        closes: list[int],
        t: list[Time],
        positions: list[int],
        out: list[tuple[int, int, int, Situation]],
    ) -> None:
        """The runs of a symbol without aggregates or a duration constraint: each is
        reported started at its first event and finished at its failing one."""
        name, key, n, ident = self.symbols[k].name, self.key, len(t), self._ident
        for a, b in zip(opens, closes, strict=True):
            start, first, first_id = t[a], positions[a], ident(a)
            s = Situation(name, key, start, None, first, first, {}, first_id, first_id)
            out.append((a, 0, k, s))
            if b < n:
                last = positions[b - 1]
                s = Situation(name, key, start, t[b], first, last, {}, first_id, ident(b - 1))
                out.append((b, 1, k, s))
        if closes[-1] == n:
            a = opens[-1]
            self.ongoing[k] = Ongoing(
                t[a], positions[a], positions[-1], True, [], ident(a), ident(n - 1)
            )

    def _run(
        self,
        k: int,
        a: int,
        b: int,
        times: np.ndarray,
        t: list[Any],
        positions: list[int],
        out: list[tuple[int, int, int, Situation]],
    ) -> None:
        """One run of symbol k's events: from event ``a`` (-1: the situation going on
        before these events) to before event ``b`` (the first failing one, or the end
        of the events, when it goes on)."""
        symbol = self.symbols[k]
        now = self.ongoing[k]
        if a < 0:
            assert now is not None
            if symbol.aggregates:
                self._runs[(k, now.start)] = (-1, [list(state) for state in now.states])
            a = 0
            self._add_events(k, now, 0, b)
        else:
            values: tuple[Any, ...] = ()
            if symbol.aggregates:
                values = self._row(k, a)
                self._runs[(k, t[a])] = (a, None)
            now = self._open(k, t[a], positions[a], values, self._ident(a))
            self._add_events(k, now, a + 1, b)
        if a < b:
            now.last, now.last_id = positions[b - 1], self._ident(b - 1)
        if not now.reported and a < b:
            seen = self._first_visible(symbol, now, times[a:b])
            if seen is not None:
                now.reported = True
                at = positions[a + seen]  # the situation's last event when it is seen
                s = Situation(
                    symbol.name,
                    self.key,
                    now.start,
                    None,
                    now.first,
                    at,
                    {},
                    now.first_id,
                    self._ident(a + seen),
                )
                out.append((a + seen, 0, k, s))
        if b == len(t):
            self.ongoing[k] = now
            return
        self.ongoing[k] = None
        if self._satisfied(symbol.name, t[b] - now.start):
            out.append((b, 1, k, self._situation(symbol, now, t[b], self._results(k, now))))

    def _row(self, k: int, a: int) -> tuple[Any, ...]:
        """Event ``a``'s values of the attributes symbol k aggregates (None elsewhere)."""
        used = set(self.attr_index[k])
        return tuple(self._column(j)[a] if j in used else None for j in range(len(self.attributes)))

    def _add_events(self, k: int, now: Ongoing, a: int, b: int) -> None:
        """Fold the events ``a`` to ``b - 1`` into ``now``'s aggregates (Algorithm 1's
        updateAgg)."""
        if a >= b:
            return
        for agg, j, state in zip(
            self.symbols[k].aggregates, self.attr_index[k], now.states, strict=True
        ):
            if j is None:
                for _ in range(a, b):
                    aggregates.add(agg.func, state, None)
            else:
                for value in self._column(j)[a:b]:
                    aggregates.add(agg.func, state, value)

    def _first_visible(self, symbol: SymbolPlan, now: Ongoing, times: np.ndarray) -> int | None:
        """The first of a run's events at which it becomes visible (:meth:`_visible`)."""
        low, high = self.durations.get(symbol.name, (None, None))
        if high is not None:
            return None
        if low is None:
            return 0
        found = np.flatnonzero(times - now.start >= low)
        return int(found[0]) if len(found) else None

    def partial_at(self, symbol: str, start: Time, index: int) -> Mapping[str, Any] | None:
        """The aggregates of ``symbol``'s situation since ``start`` over its events up
        to event ``index`` of the last :meth:`push_columns` batch (:meth:`partial` as
        it was at that event)."""
        k = next(k for k, s in enumerate(self.symbols) if s.name == symbol)
        if not self.symbols[k].aggregates:
            return {}
        run = self._runs.get((k, start))
        if run is None:
            return None
        a, states = run
        if states is None:
            now = self._open(k, start, 0, self._row(k, a))
            a += 1
        else:
            now = Ongoing(start, 0, 0, True, [list(state) for state in states])
            a = 0
        self._add_events(k, now, a, index + 1)
        return self._results(k, now)

    # --- Algorithm 1's cases ------------------------------------------------------

    def _open(
        self, k: int, time: Time, position: int, values: tuple[Any, ...], ident: Any = None
    ) -> Ongoing:
        states = [
            aggregates.start(a.func, None if j is None else values[j])
            for a, j in zip(self.symbols[k].aggregates, self.attr_index[k], strict=True)
        ]
        return Ongoing(time, position, position, False, states, ident, ident)

    def _prolong(
        self, k: int, now: Ongoing, position: int, values: tuple[Any, ...], ident: Any
    ) -> None:
        now.last, now.last_id = position, ident
        for a, j, state in zip(
            self.symbols[k].aggregates, self.attr_index[k], now.states, strict=True
        ):
            aggregates.add(a.func, state, None if j is None else values[j])

    def _visible(self, symbol: SymbolPlan, now: Ongoing, time: Time) -> bool:
        """Section 5.3's duration rules for started situations."""
        low, high = self.durations.get(symbol.name, (None, None))
        if high is not None:
            return False
        return low is None or time - now.start >= low

    def _satisfied(self, symbol: str, duration: Time) -> bool:
        low, high = self.durations.get(symbol, (None, None))
        return (low is None or duration >= low) and (high is None or duration <= high)

    def _results(self, k: int, now: Ongoing) -> dict[str, Any]:
        return {
            a.name: aggregates.result(a.func, state)
            for a, state in zip(self.symbols[k].aggregates, now.states, strict=True)
        }

    def _situation(
        self, symbol: SymbolPlan, now: Ongoing, end: Time | None, values: Mapping[str, Any]
    ) -> Situation:
        return Situation(
            symbol.name,
            self.key,
            now.start,
            end,
            now.first,
            now.last,
            values,
            now.first_id,
            now.last_id,
        )

    # --- snapshots ------------------------------------------------------------------

    def to_data(self) -> list[Any]:
        return [None if now is None else now.to_data() for now in self.ongoing]

    def restore(self, data: list[Any]) -> None:
        """The state of :meth:`to_data` (checked by the caller's snapshot reader)."""
        self.ongoing = [None if d is None else Ongoing(*d) for d in data]
