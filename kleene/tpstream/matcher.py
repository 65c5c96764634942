"""The TPStream matcher (EDBT 2018, sections 5.2 and 5.3, Algorithms 2, 3 and 4).

One time-ordered buffer per situation stream holds the finished situations, purged by
the window. Matching is a multi-way join of the buffers in an *evaluation order*
(Algorithm 3): each step finds its partners by range queries per relation (Figure 3,
:mod:`kleene.tpstream.ranges`), a union over a constraint's alternatives, an
intersection over the constraints to symbols already joined; a step without such a
constraint ranges over the situations the window still allows, never more.

Without low latency a match is searched when a situation ends, with that situation
fixed in the working set (Algorithms 2-3). With low latency (Algorithm 4) the matcher
also sees situations from their (possibly deferred) start: they stay in a buffer of
their own, at most one per symbol, which the range queries never see; a join step may
take its symbol's started situation instead of a finished one, building the
combinations of started situations step by step. A started situation's unknown end
relates to others only as section 5.3.1 allows (:func:`ranges.decided`). Only *trigger*
situations start a join: one that just became visible, and one that just ended while a
partner it is constrained to was running, for a constraint that can be decided at that
end (Table 2; a constraint holding the whole prefix group was decided at the later
start). Each configuration is reported once, at the first update at which it is
decided, which is the earliest time of section 5.3.1 (:mod:`kleene.tpstream.latency`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kleene.errors import KleeneError
from kleene.tpstream.buffers import SituationBuffer
from kleene.tpstream.latency import end_triggers, oriented, start_triggers, within_window
from kleene.tpstream.model import Allen, Situation, TemporalMatch, TemporalPattern, Time
from kleene.tpstream.ranges import (
    Bound,
    decided,
    end_of,
    intersect,
    partner_bounds,
    prefix_group,
    size,
    union,
)

STATE_VERSION = 1


@dataclass(frozen=True)
class MatcherStatistics:
    """What the optimizer reads (section 5.4.1): the live size of each symbol's buffer
    and, per constraint (by index in the pattern), how many buffered situations its
    range queries ran over (``candidates``) and how many satisfied it (``survivors``),
    cumulative since the matcher was made."""

    buffer_sizes: Mapping[str, int]
    candidates: tuple[int, ...]
    survivors: tuple[int, ...]

    def selectivity(self, constraint: int) -> float | None:
        """Observed survivors per candidate of one constraint; None before any query."""
        n = self.candidates[constraint]
        return self.survivors[constraint] / n if n else None


def default_order(pattern: TemporalPattern) -> tuple[str, ...]:
    """The symbols in pattern order, except that each next one is, where possible,
    constrained to one already taken (no cross product, section 5.4)."""
    order: list[str] = []
    rest = list(pattern.symbols)
    while rest:
        linked = [
            x
            for x in rest
            for c in pattern.constraints
            if (c.left == x and c.right in order) or (c.right == x and c.left in order)
        ]
        pick = linked[0] if linked else rest[0]
        order.append(pick)
        rest.remove(pick)
    return tuple(order)


class SituationMatcher:
    """Matches one partition's situation streams against a temporal pattern."""

    def __init__(
        self,
        pattern: TemporalPattern,
        order: Sequence[str] | None = None,
        *,
        low_latency: bool = True,
    ) -> None:
        self.pattern = pattern
        self.low_latency = low_latency
        self._buffers = {x: SituationBuffer() for x in pattern.symbols}
        self._running: dict[str, Situation] = {}
        # Per symbol: (constraint index, partner, relations as ``partner R symbol``).
        self._links: dict[str, list[tuple[int, str, frozenset[Allen]]]] = {
            x: [] for x in pattern.symbols
        }
        for i, c in enumerate(pattern.constraints):
            self._links[c.right].append((i, c.left, c.relations))
            self._links[c.left].append((i, c.right, oriented(c, c.right)))
        self._start_triggers = start_triggers(pattern)
        self._end_triggers = end_triggers(pattern)
        self._slack = _duration_slack(pattern)
        self._candidates = [0] * len(pattern.constraints)
        self._survivors = [0] * len(pattern.constraints)
        self.order: tuple[str, ...] = ()
        self.set_order(default_order(pattern) if order is None else order)

    # -- the interface -------------------------------------------------------------

    def set_order(self, order: Sequence[str]) -> None:
        """Switch the evaluation order; the buffers do not depend on it (section 5.4.1)."""
        if sorted(order) != sorted(self.pattern.symbols):
            raise KleeneError(
                f"evaluation order {list(order)} must name each of the pattern's symbols "
                f"{list(self.pattern.symbols)} once"
            )
        self.order = tuple(order)

    def update(
        self, time: Time, started: Sequence[Situation], finished: Sequence[Situation]
    ) -> list[TemporalMatch]:
        """Take the situations that became visible or ended at ``time`` (in this order
        of time) and return the matches found now."""
        if self.low_latency:
            return self._update_low_latency(time, started, finished)
        return self._update_on_end(time, started, finished)

    def flush(self, time: Time) -> list[TemporalMatch]:
        """End of stream: a situation still running never ends (Definition 7), so no
        further match can appear; the buffers are emptied."""
        self._running.clear()
        for buf in self._buffers.values():
            buf.purge(float("inf"))
        return []

    def statistics(self) -> MatcherStatistics:
        return MatcherStatistics(
            {x: len(b) for x, b in self._buffers.items()},
            tuple(self._candidates),
            tuple(self._survivors),
        )

    def state(self) -> dict[str, Any]:
        """Plain data to rebuild this matcher with :meth:`restore`."""
        return {
            "version": STATE_VERSION,
            "order": list(self.order),
            "low_latency": self.low_latency,
            "buffers": {x: [situation_data(s) for s in b] for x, b in self._buffers.items()},
            "running": {x: situation_data(s) for x, s in self._running.items()},
            "candidates": list(self._candidates),
            "survivors": list(self._survivors),
        }

    @classmethod
    def restore(cls, pattern: TemporalPattern, data: Mapping[str, Any]) -> SituationMatcher:
        if data.get("version") != STATE_VERSION:
            raise KleeneError(f"matcher state version {data.get('version')!r} is not supported")
        m = cls(pattern, data["order"], low_latency=data["low_latency"])
        for x, items in data["buffers"].items():
            for item in items:
                m._buffers[x].append(situation_from(item))
        m._running = {x: situation_from(item) for x, item in data["running"].items()}
        m._candidates = list(data["candidates"])
        m._survivors = list(data["survivors"])
        return m

    # -- Algorithms 2 and 4 --------------------------------------------------------

    def _update_on_end(
        self, time: Time, started: Sequence[Situation], finished: Sequence[Situation]
    ) -> list[TemporalMatch]:
        """Algorithm 2: each ended situation joins its buffer, then the join runs with
        it fixed, so a configuration of several ended now is found once (by the last)."""
        for s in started:
            self._running[s.symbol] = s
        for s in finished:
            self._stop_running(s)
        # A match found later has a situation running now (or not yet started), and
        # it is established no earlier than that one's start.
        bound = min(
            [time - self._slack]
            + [s.start for s in self._running.values()]
            + [s.start for s in finished]
        )
        self._purge(bound - self.pattern.window)
        out: list[TemporalMatch] = []
        for s in finished:
            self._buffers[s.symbol].append(s)
            self._perform({s.symbol: s}, time, out, None)
        return out

    def _update_low_latency(
        self, time: Time, started: Sequence[Situation], finished: Sequence[Situation]
    ) -> list[TemporalMatch]:
        """Algorithm 4 (see the module docstring)."""
        before = dict(self._running)
        visible: list[Situation] = []
        ended: list[Situation] = []
        ended_now: dict[str, Situation] = {}
        for s in started:
            self._running[s.symbol] = s
            visible.append(s)
        for s in finished:
            was = before.get(s.symbol)
            self._stop_running(s)
            ended_now[s.symbol] = s
            (ended if was is not None and was.start == s.start else visible).append(s)
        # A match found from now on is established at the detection time or, when a
        # duration constraint deferred it, no earlier than that situation's start.
        bound = min([time - self._slack] + [s.start for s in visible])
        self._purge(bound - self.pattern.window)
        for s in finished:
            self._buffers[s.symbol].append(s)
        out: list[TemporalMatch] = []
        seen: set[tuple[Time, ...]] = set()
        for s in visible:
            if s.end is None and s.start == time and s.symbol not in self._start_triggers:
                continue  # its start can never be the detection time (Table 2)
            self._perform({s.symbol: s}, time, out, seen)
        for s in ended:
            for i in self._end_triggers[s.symbol]:
                c = self.pattern.constraints[i]
                other = c.right if c.left == s.symbol else c.left
                prev = before.get(other)
                if prev is None or prefix_group(s.start, prev.start) <= oriented(c, s.symbol):
                    continue  # no partner running, or decided when both started
                partner = ended_now.get(other, self._running.get(other))
                if partner is not None and partner.start == prev.start:
                    self._perform({s.symbol: s, other: partner}, time, out, seen)
        return out

    def _stop_running(self, s: Situation) -> None:
        r = self._running.get(s.symbol)
        if r is not None and r.start == s.start:
            del self._running[s.symbol]

    def _purge(self, bound: Time) -> None:
        for buf in self._buffers.values():
            buf.purge(bound)

    # -- Algorithm 3 ---------------------------------------------------------------

    def _perform(
        self,
        ws: dict[str, Situation],
        time: Time,
        out: list[TemporalMatch],
        seen: set[tuple[Time, ...]] | None,
    ) -> None:
        """performMatch with the situations of ``ws`` fixed; ``seen`` (low latency
        only) holds the configurations already reported at this update."""
        for c in self.pattern.constraints:
            if c.left in ws and c.right in ws and not decided(c.relations, ws[c.left], ws[c.right]):
                return
        steps = [x for x in self.order if x not in ws]
        self._step(ws, steps, 0, time, out, seen)

    def _step(
        self,
        ws: dict[str, Situation],
        steps: list[str],
        i: int,
        time: Time,
        out: list[TemporalMatch],
        seen: set[tuple[Time, ...]] | None,
    ) -> None:
        if i == len(steps):
            self._publish(ws, time, out, seen)
            return
        y = steps[i]
        buf = self._buffers[y]
        first = min(s.start for s in ws.values())
        last = max(s.start for s in ws.values())
        window = self.pattern.window
        ranges = buf.starting_in(Bound(last - window, True, first + window, True))
        links = [(ci, ws[x], rels) for ci, x, rels in self._links[y] if x in ws]
        for ci, anchor, rels in links:
            if not ranges:
                break
            a_end = end_of(anchor)
            found = union(buf.positions(*partner_bounds(r, anchor.start, a_end)) for r in rels)
            self._candidates[ci] += len(buf)
            self._survivors[ci] += size(found)
            ranges = intersect(ranges, found)
        for lo, hi in ranges:
            for p in range(lo, hi):
                ws[y] = buf[p]
                self._step(ws, steps, i + 1, time, out, seen)
        r = self._running.get(y) if seen is not None else None
        if (
            r is not None
            and last - window <= r.start <= first + window
            and all(decided(rels, anchor, r) for _, anchor, rels in links)
        ):
            ws[y] = r
            self._step(ws, steps, i + 1, time, out, seen)
        ws.pop(y, None)

    def _publish(
        self,
        ws: dict[str, Situation],
        time: Time,
        out: list[TemporalMatch],
        seen: set[tuple[Time, ...]] | None,
    ) -> None:
        if not within_window(self.pattern, ws):
            return
        config = {x: ws[x] for x in self.pattern.symbols}
        if seen is not None:
            ident = tuple(s.start for s in config.values())
            if ident in seen:
                return
            seen.add(ident)
        ends = [s.end for s in config.values()]
        at = time if None in ends else max(e for e in ends if e is not None)
        key = next(iter(config.values())).key
        out.append(TemporalMatch(key, config, at, time))


def _duration_slack(pattern: TemporalPattern) -> Time:
    """How long a situation may stay invisible to the matcher: its maximum duration, or
    its minimum when only that is set (section 5.3, duration constraints)."""
    slack: Time = 0
    for lo, hi in pattern.durations.values():
        bound = hi if hi is not None else lo
        if bound is not None:
            slack = max(slack, bound)
    return slack


def situation_data(s: Situation) -> dict[str, Any]:
    return {
        "symbol": s.symbol,
        "key": tuple(s.key),
        "start": s.start,
        "end": s.end,
        "first": s.first,
        "last": s.last,
        "aggregates": dict(s.aggregates),
    }


def situation_from(d: Mapping[str, Any]) -> Situation:
    return Situation(
        d["symbol"],
        tuple(d["key"]),
        d["start"],
        d["end"],
        d["first"],
        d["last"],
        dict(d["aggregates"]),
    )
