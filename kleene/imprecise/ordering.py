"""The order in which the event-based framework is presented the events (VLDB 2010,
section 4.3 and Appendix C.3).

Every unseen event starts at or after t_emit = now.lower - U_max (the arrival-order
assumption, section 2.2), or at or after a heartbeat τ when the stream gave one
(Appendix C.3, case 2: the framework is then handed max(t_emit, τ)). Events held back
here are not yet seen by the runs, so run pruning must use :meth:`earliest`, which
also covers them.

* :class:`QueryOrder`, sorting for query order (C.3): events matching E_1 pass at once,
  those matching E_j (j > 1) wait in a buffer per component until it is safe to present
  them: an event e with e.upper < t_emit can be preceded by no unseen event, and it
  also waits while an event of an earlier component that could occur before it
  (lower < e.upper) is still buffered. The paper applies it when each event can match
  one component only; an event matching several components is presented here once per
  component (as E_j after every event that can precede it as E_{j-1}), so the
  query-order method applies to every pattern without Kleene closure.
* :class:`SelectivityOrder`, selectivity order (section 4.3): a buffer per component;
  when every buffer holds an event, all buffered events are presented to the any-state
  method, those of the most selective components first (so the rare events start the
  runs and the frequent ones only extend them). The selectivity of a component is
  measured, never estimated from the predicates: the number of events that matched it
  (its type and single-event predicates) over the stream seen so far, fewest first.
  While some buffer is empty, an out-of-date buffered event is dropped (section 5.1,
  on Fig. 4(b) and (d)): one that every unseen event would fall outside the window of
  (e.upper + W < t_emit), when for some empty component k no live run holds an event f
  for E_k that e could join: e matching E_j, j < k, must occur before f (so before
  f's valid upper bound), and j > k within W of the run's first event (so before the
  run's time to live, its smallest valid upper bound plus W, Appendix C.2). Every match
  with e would then need an event for E_k that cannot come.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from kleene.imprecise.model import IntervalEvent

Presented = list[tuple[IntervalEvent, list[int]]]  # events with the components they match
# per component matched in a live run: the latest valid upper bound of its event in one,
# and the latest time to live of one
Alive = dict[int, tuple[float, float]]


class QueryOrder:
    """The buffers of the components after the first."""

    def __init__(self, length: int) -> None:
        self.buffers: list[list[IntervalEvent]] = [[] for _ in range(length)]

    def add(
        self,
        events: Sequence[IntervalEvent],
        components: Sequence[list[int]],
        t_emit: int | None,
        alive: Alive,
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

    def earliest(self, t_emit: int) -> int:
        """The earliest instant an event not yet presented can occur at."""
        lowers = [e.lower for buffer in self.buffers for e in buffer]
        return min([t_emit, *lowers])


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
        alive: Alive,
    ) -> Presented:
        """Take arrived events with the components each matches; return every buffered
        event, most selective components first, once each buffer holds one (or at the
        end of the stream, ``t_emit`` None). ``alive``: per component matched in some
        live run, the latest valid upper bound of its event and time to live."""
        for e, matched in zip(events, components, strict=True):
            if matched:
                self.waiting.append((e, matched))
                for j in matched:
                    self.held[j] += 1
                    self.counts[j] += 1
        if t_emit is None or all(self.held):
            return self._release()
        self._drop(t_emit, alive)
        return []

    def order(self) -> list[int]:
        """The components, most selective (fewest events matched so far) first."""
        return sorted(range(len(self.counts)), key=lambda j: (self.counts[j], j))

    def _release(self) -> Presented:
        rank = {j: r for r, j in enumerate(self.order())}
        out = sorted(self.waiting, key=lambda item: min(rank[j] for j in item[1]))
        self.waiting = []
        self.held = [0] * len(self.held)
        return out

    def _drop(self, t_emit: int, alive: Alive) -> None:
        """Forget the buffered events no match can hold (see the module docstring)."""
        if self.window is None or not self.waiting:
            return
        empty = [k for k, n in enumerate(self.held) if not n]
        kept: Presented = []
        for e, matched in self.waiting:
            if e.upper + self.window < t_emit and any(
                _stranded(e, matched, k, alive) for k in empty
            ):
                for j in matched:
                    self.held[j] -= 1
            else:
                kept.append((e, matched))
        self.waiting = kept

    def earliest(self, t_emit: int) -> int:
        """The earliest instant an event not yet presented can occur at."""
        return min([t_emit, *(e.lower for e, _ in self.waiting)])


def _stranded(e: IntervalEvent, matched: list[int], k: int, alive: Alive) -> bool:
    """Whether no live run holds an event for component k that ``e`` could join."""
    if k not in alive:
        return True
    latest_vub, latest_ttl = alive[k]
    return all(e.lower >= latest_vub if j < k else e.lower > latest_ttl for j in matched)
