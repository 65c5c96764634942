"""The order in which the event-based framework is presented the events (VLDB 2010,
section 4.3 and Appendix C.3).

Every unseen event starts at or after t_emit = now.lower - U_max (the arrival-order
assumption, section 2.2), or at or after a heartbeat τ when the stream gave one
(Appendix C.3, case 2: the framework is then handed max(t_emit, τ)). Events held back
here are not yet seen by the runs, so run pruning must use :meth:`earliest`, which
also covers them (per component: a run missing E_{j-1} before its E_j waits for events
of E_{j-1} only).

* :class:`QueryOrder`, sorting for query order (C.3): events matching E_1 pass at once,
  those matching E_j (j > 1) wait in a buffer per component until it is safe to present
  them: an event e with e.upper < t_emit can be preceded by no unseen event, and it
  also waits while an event of an earlier component that could occur before it
  (lower < e.upper) is still buffered. The paper applies it when each event can match
  one component only; an event matching several components is presented here once per
  component (as E_j after every event that can precede it as E_{j-1}), so the
  query-order method applies to every pattern without Kleene closure.
* :class:`SelectivityOrder`, selectivity order (section 4.3): a buffer per component;
  when every buffer holds an event, the buffered events are presented to the any-state
  method, those of the most selective components first (so the rare events start the
  runs and the frequent ones only extend them). The selectivity of a component is
  measured, never estimated from the predicates: the number of events that matched it
  (its type and single-event predicates) over the stream seen so far, fewest first.
  Only the events that can share a match with an event of the most selective component
  (one presented now, or one a live run holds) are presented; the others stay in their
  buffers, where they would only have started runs waiting for a rarer event that may
  never come (section 5.1 on Fig. 4(d): the method wins by keeping the frequent E_1
  events out of the runs until an E_l arrives). Holding an event back is only a later
  arrival to the any-state method, whose runs do not depend on the order of the events.
  While some buffer is empty, an out-of-date buffered event is dropped (section 5.1,
  on Fig. 4(b) and (d)): one that every unseen event would fall outside the window of
  (e.upper + W < t_emit), when for some empty component k no live run holds an event f
  for E_k that e could join: e matching E_j, j < k, must occur before f (so before
  f's valid upper bound), and j > k within W of the run's first event (so before the
  run's time to live, its smallest valid upper bound plus W, Appendix C.2). Every match
  with e would then need an event for E_k that cannot come. For the same reason the
  runs' time to live is checked against the waiting events partnered as above only
  (:meth:`SelectivityOrder.ttl_floor`): held-back events keep runs alive no longer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from kleene.imprecise.model import IntervalEvent

Presented = list[tuple[IntervalEvent, list[int]]]  # events with the components they match
# the events live runs hold for one component (by id): the earliest valid lower bound
# and the latest valid upper bound of the event in one, the latest time to live of one
Held = dict[int, tuple[float, float, float]]
# computes Held for a component on demand: scanning the runs costs as much as
# presenting an event to them, and most checks are settled by the buffered events
AliveOf = Callable[[int], Held]


class QueryOrder:
    """The buffers of the components after the first."""

    def __init__(self, length: int) -> None:
        self.buffers: list[list[IntervalEvent]] = [[] for _ in range(length)]

    def add(
        self,
        events: Sequence[IntervalEvent],
        components: Sequence[list[int]],
        t_emit: int | None,
        alive: AliveOf,
    ) -> Presented:
        """Take arrived events with the components each matches; return those safe to
        present, in query order, one entry per (event, component). ``t_emit`` None: the
        end of the stream. ``alive`` (unused here) as for :class:`SelectivityOrder`."""
        out: Presented = []
        for e, matched in zip(events, components, strict=True):
            for j in matched:
                if j == 0:
                    out.append((e, [0]))
                else:
                    self.buffers[j].append(e)
        return out + self._release(t_emit)

    def _release(self, t_emit: int | None) -> Presented:
        out: Presented = []
        blocking = math.inf  # the earliest lower bound still buffered for E_2..E_{j-1}
        for j in range(1, len(self.buffers)):
            kept = []
            for e in self.buffers[j]:
                if (t_emit is None or e.upper < t_emit) and not blocking < e.upper:
                    out.append((e, [j]))
                else:
                    kept.append(e)
            self.buffers[j] = kept
            blocking = min([blocking, *(e.lower for e in kept)])
        return out

    def earliest(self, t_emit: int) -> list[int]:
        """Per component, the earliest instant an event not yet presented for it can
        occur at."""
        return [min([t_emit, *(e.lower for e in buffer)]) for buffer in self.buffers]

    def ttl_floor(self, t_emit: int, alive: AliveOf) -> int:
        """The bound for the runs' time to live: the earliest of :meth:`earliest`."""
        return min(self.earliest(t_emit))


class SelectivityOrder:
    """The buffered events, in arrival order, and the per-component counts."""

    def __init__(self, length: int, window: float | None) -> None:
        self.window = window
        self.waiting: Presented = []
        self.held = [0] * length  # buffered events per component
        self.counts = [0] * length  # events that matched each component so far

    def add(
        self,
        events: Sequence[IntervalEvent],
        components: Sequence[list[int]],
        t_emit: int | None,
        alive: AliveOf,
    ) -> Presented:
        """Take arrived events with the components each matches; return every buffered
        event, most selective components first, once each buffer holds one (or at the
        end of the stream, ``t_emit`` None). ``alive``: computes, for a component, the
        events live runs hold for it (called at most once per component, and only when
        an event's fate depends on the runs)."""
        for e, matched in zip(events, components, strict=True):
            if matched:
                self.waiting.append((e, matched))
                for j in matched:
                    self.held[j] += 1
                    self.counts[j] += 1
        if t_emit is None:
            return self._release(self.waiting)
        if all(self.held):
            return self._release(self._partnered(alive))
        self._drop(t_emit, alive)
        return []

    def order(self) -> list[int]:
        """The components, most selective (fewest events matched so far) first."""
        return sorted(range(len(self.counts)), key=lambda j: (self.counts[j], j))

    def _partnered(self, alive: AliveOf) -> Presented:
        """The waiting events that can share a match with an event of the most
        selective component: one waiting, or one a live run holds (the runs are
        consulted only for events no waiting one settles)."""
        rare = self.order()[0]
        partners = [e for e, matched in self.waiting if rare in matched]
        held = _Once(alive)
        return [
            (e, matched)
            for e, matched in self.waiting
            if self._has_partner(e, matched, rare, partners, held)
        ]

    def _has_partner(
        self,
        e: IntervalEvent,
        matched: list[int],
        rare: int,
        partners: list[IntervalEvent],
        alive: AliveOf,
    ) -> bool:
        """Whether ``e`` matches the rare component or can share a match with one of
        its waiting ``partners`` or with an event a live run holds for it."""
        return (
            rare in matched
            or any(self._joins(e, matched, rare, f) for f in partners)
            or not _stranded(e, matched, rare, alive(rare), self.window)
        )

    def _joins(self, e: IntervalEvent, matched: list[int], k: int, f: IntervalEvent) -> bool:
        """Whether ``e`` can be in one match with ``f`` matching component k: in
        pattern order (strictly) and within the window."""
        window = math.inf if self.window is None else self.window
        return any(
            e.lower < f.upper and f.lower - e.upper <= window
            if j < k
            else f.lower < e.upper and e.lower - f.upper <= window
            for j in matched
        )

    def _release(self, presented: Presented) -> Presented:
        rank = {j: r for r, j in enumerate(self.order())}
        out = sorted(presented, key=lambda item: min(rank[j] for j in item[1]))
        chosen = {id(e) for e, _ in presented}
        self.waiting = [item for item in self.waiting if id(item[0]) not in chosen]
        self.held = [0] * len(self.held)
        for _, matched in self.waiting:
            for j in matched:
                self.held[j] += 1
        return out

    def _drop(self, t_emit: int, alive: AliveOf) -> None:
        """Forget the buffered events no match can hold (see the module docstring)."""
        if self.window is None or not self.waiting:
            return
        empty = [k for k, n in enumerate(self.held) if not n]
        held = _Once(alive)
        kept: Presented = []
        for e, matched in self.waiting:
            if e.upper + self.window < t_emit and any(
                _stranded(e, matched, k, held(k), self.window) for k in empty
            ):
                for j in matched:
                    self.held[j] -= 1
            else:
                kept.append((e, matched))
        self.waiting = kept

    def earliest(self, t_emit: int) -> list[int]:
        """Per component, the earliest instant an event not yet presented for it can
        occur at."""
        out = [t_emit] * len(self.held)
        for e, matched in self.waiting:
            for j in matched:
                out[j] = min(out[j], e.lower)
        return out

    def ttl_floor(self, t_emit: int, alive: AliveOf) -> int:
        """The earliest instant of an event not yet presented that can extend a run
        whose time to live has passed t_emit: a waiting event that can share a match with
        no event of the most selective component k (waiting, or held by a live run)
        needs one still to come, at or after t_emit, out of such a run's window."""
        rare = self.order()[0]
        partners = [e for e, matched in self.waiting if rare in matched]
        held = _Once(alive)
        for e, matched in sorted(self.waiting, key=lambda item: item[0].lower):
            if e.lower >= t_emit:
                break
            if self._has_partner(e, matched, rare, partners, held):
                return e.lower
        return t_emit


class _Once:
    """Calls a function once per argument, then returns the value it gave."""

    def __init__(self, compute: AliveOf) -> None:
        self.compute = compute
        self.values: dict[int, Held] = {}

    def __call__(self, k: int) -> Held:
        if k not in self.values:
            self.values[k] = self.compute(k)
        return self.values[k]


def _stranded(
    e: IntervalEvent, matched: list[int], k: int, held: Held, window: float | None
) -> bool:
    """Whether no live run holds an event f for component k that ``e`` could join: e
    matching j < k must occur before f and within the window of it, j > k within the
    window of the run's first event (before its time to live)."""
    reach = math.inf if window is None else window
    return not any(
        e.lower < vub and vlb - e.upper <= reach if j < k else e.lower <= ttl
        for vlb, vub, ttl in held.values()
        for j in matched
    )
