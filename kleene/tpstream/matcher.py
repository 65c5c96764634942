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
decided, which is the earliest time of section 5.3.1 (:mod:`kleene.tpstream.latency`);
the window bounds that time, so both modes report the same matches.

Matches are enumerated lazily (:meth:`SituationMatcher.matches` is a generator over
the joins of performMatch), so a caller that counts them against ``max_matches``
(:class:`~kleene.runtime.output.Output`) stops the join at the limit instead of
building every configuration first. Time passing without events
(:meth:`SituationMatcher.advance_to`) detects nothing, since a match is detected only
at a situation's start or end, both at events (section 5.3.2), but lets the window
purge the buffers.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kleene.errors import KleeneError
from kleene.tpstream.buffers import SituationBuffer
from kleene.tpstream.join import Join, JoinPlan, plan_join
from kleene.tpstream.latency import end_triggers, oriented, start_triggers, within_window
from kleene.tpstream.model import Allen, Situation, TemporalMatch, TemporalPattern, Time
from kleene.tpstream.ranges import decided, prefix_group

STATE_VERSION = 1


@dataclass(frozen=True)
class MatcherStatistics:
    """What the optimizer reads (section 5.4.1): the live size of each symbol's buffer
    and, per constraint (by index in the pattern), how many buffered situations its
    range queries ran over (``candidates``), how many satisfied it (``survivors``) and
    how many range queries over a non-empty buffer it took (``queries``: those that
    measured its selectivity), cumulative since the matcher was made."""

    buffer_sizes: Mapping[str, int]
    candidates: tuple[int, ...]
    survivors: tuple[int, ...]
    queries: tuple[int, ...] = ()

    def selectivity(self, constraint: int) -> float | None:
        """Observed survivors per candidate of one constraint; None before any query."""
        n = self.candidates[constraint]
        return self.survivors[constraint] / n if n else None


def _counts(value: Any, name: str, width: int) -> list[int]:
    """A saved counter: one non-negative integer per constraint."""
    if not (
        isinstance(value, list)
        and len(value) == width
        and all(type(v) is int and v >= 0 for v in value)
    ):
        raise KleeneError(f"the matcher's {name} must be {width} counts, not {value!r}")
    return value


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


class Planner(Protocol):
    """What the matcher consults between updates (an
    :class:`~kleene.tpstream.adaptive.AdaptivePlanner`)."""

    observe_every: int

    @property
    def order(self) -> tuple[str, ...]: ...

    def observe_counts(
        self,
        sizes: Sequence[float],
        candidates: list[int],
        survivors: list[int],
        updates: int | None = None,
        queries: Sequence[int] | None = None,
    ) -> bool: ...


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
        self._in_symbol_order = tuple(self._buffers.values())
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
        self._queries = [0] * len(pattern.constraints)
        self._idle = [0] * len(pattern.constraints)  # range queries over an empty buffer
        self._counts = (self._candidates, self._survivors, self._queries, self._idle)
        self.order: tuple[str, ...] = ()
        self.set_order(default_order(pattern) if order is None else order)
        self._planner: Planner | None = None
        self._mark: Time = math.inf

    # -- the interface -------------------------------------------------------------

    def set_order(self, order: Sequence[str]) -> None:
        """Switch the evaluation order; the buffers do not depend on it (section 5.4.1)."""
        if sorted(order) != sorted(self.pattern.symbols):
            raise KleeneError(
                f"evaluation order {list(order)} must name each of the pattern's symbols "
                f"{list(self.pattern.symbols)} once"
            )
        if tuple(order) != self.order:
            self.order = tuple(order)
            self._plans: dict[frozenset[str], JoinPlan] = {}

    def update(
        self, time: Time, started: Sequence[Situation], finished: Sequence[Situation]
    ) -> list[TemporalMatch]:
        """Take the situations that became visible (``started``, end None) or ended
        (``finished``) at ``time``, times increasing, and return the matches found now
        (:meth:`matches`, all of them)."""
        return list(self.matches(time, started, finished))

    def matches(
        self, time: Time, started: Sequence[Situation], finished: Sequence[Situation]
    ) -> Iterable[TemporalMatch]:
        """:meth:`update`'s matches, enumerated lazily: the join runs as far as they are
        taken. Take them all before the next call (the enumeration reads the buffers;
        with low latency the buffers are updated before, without it each ended
        situation joins its buffer just before its join, as Algorithm 2 does).

        Both modes need ``started``: it bounds how far back a later match can reach.
        A situation with a minimum duration only is expected in ``started`` at the
        first update at least that long after its start, while it runs (section 5.3)."""
        if self.low_latency:
            found = self._update_low_latency(time, started, finished)
        else:
            found = self._update_on_end(time, started, finished)
        if found is None:
            self._turn(time)
            return ()
        return self._then_turn(found, time)

    def _then_turn(self, found: Iterator[TemporalMatch], time: Time) -> Iterator[TemporalMatch]:
        yield from found
        self._turn(time)

    def _turn(self, time: Time) -> None:
        # the planner's turn comes by time (infinitely far without a planner), so an
        # update does the same one comparison with or without one
        if time >= self._mark:
            self._consult(time)

    def held(self) -> int:
        """The situations this matcher holds: buffered (finished, within the window)
        and running (section 5.3's separate buffer)."""
        return sum(map(len, self._in_symbol_order)) + len(self._running)

    def advance_to(self, time: Time, going_on: Time | None) -> None:
        """No update before ``time`` will come, and every situation still to come
        starts at ``going_on`` (the earliest start of a situation going on in the
        deriver) or at ``time`` or later: purge what no later update can match. A later
        update at t >= ``time`` purges by at least min(t - slack, the starts of the
        situations it sees), and those situations are going on now or start at
        ``time`` or later, so this bound is never above that one. No match is
        detected: matches are found at situations' starts and ends (section 5.3.2)."""
        bound = time - self._slack
        if going_on is not None and going_on < bound:
            bound = going_on
        self._purge(bound - self.pattern.window)

    def attach(self, planner: Planner | None) -> None:
        """Let ``planner`` choose the order from inside :meth:`update` (section 5.4.1),
        None detaches. No update is counted: the planner observes when the update's
        time reaches a mark set about ``planner.observe_every`` units of the matcher's
        work ahead (an ended situation or a range query each, at the rate of work of
        the previous interval or half the rate before it, whichever is more), so its
        turns cost a bounded share of the matcher's time, and come sooner when an
        order turns expensive. Each observation weighs as the situations that ended
        since the previous one (one updateMatcher call of Algorithm 2 each), a
        selectivity at most as the range queries that measured it (over a non-empty
        buffer). The sizes it folds in are the means of those at the interval's two
        ends, so that one sample of a small buffer's jitter does not count for the
        whole interval.
        On a switch the matcher takes the planner's order for its next update.
        (``observe_every`` then counts units of work, not the updates its
        explanation names.)"""
        self._planner = planner
        self._mark = -math.inf if planner is not None else math.inf
        self._since: Time | None = None
        self._step: Time = 0
        self._rate = 0.0
        self._ended, self._work = self._progress()
        self._sizes_then: list[int] | None = None
        if planner is not None:
            self.set_order(planner.order)

    def _progress(self) -> tuple[int, int]:
        """Situations ever ended, and the units of work ever done."""
        ended = sum(b.appended for b in self._in_symbol_order)
        return ended, self._units(ended)

    def _units(self, ended: int) -> int:
        """Units of work: ``ended`` situations plus the range queries ever run (over
        empty buffers too)."""
        return ended + sum(self._queries) + sum(self._idle)

    def _consult(self, time: Time) -> None:
        """The planner's turn: it reads the mean buffer sizes over the interval and
        the live counters (without the copies :meth:`statistics` makes), weighted by
        the situations that ended in the interval (a selectivity by the range queries
        that measured it); then the next mark. No copies: the turn must stay cheap
        next to the updates."""
        planner = self._planner
        assert planner is not None
        sizes: list[int] = []
        ended = 0
        for b in self._in_symbol_order:
            live, appended = b.counts()
            sizes.append(live)
            ended += appended
        work = self._units(ended)
        queries = self._queries
        count, self._ended = ended - self._ended, ended
        done, self._work = work - self._work, work
        since, self._since = self._since, time
        if count > 0:
            then, self._sizes_then = self._sizes_then, sizes
            mean: list[float] = list(sizes)
            if then is not None:
                mean = [(a + b) / 2 for a, b in zip(sizes, then, strict=True)]
            if planner.observe_counts(mean, self._candidates, self._survivors, count, queries):
                self.set_order(planner.order)
        if since is not None and time > since:
            # observe_every units of work ahead at the interval's rate of work, or at
            # half the previous rate if that is more (work comes in bursts: one start
            # may run dozens of range queries, the next interval none); twice as far
            # when no work was done at all
            elapsed = time - since
            rate = self._rate = max(done / elapsed, self._rate / 2)
            self._step = planner.observe_every / rate if rate else 2 * elapsed
        self._mark = time + self._step

    def flush(self, time: Time) -> list[TemporalMatch]:
        """End of stream: a situation still running never ends (Definition 7), so no
        further match can appear; the buffers are emptied."""
        self._running.clear()
        for buf in self._buffers.values():
            buf.purge(float("inf"))
        return []

    def counters(self) -> tuple[list[int], list[int], list[int]]:
        """The buffer sizes in the pattern's symbol order and the live cumulative
        counters of :meth:`statistics`, without its copies (read them now, do not
        keep them: the next update changes the counters in place)."""
        return list(map(len, self._in_symbol_order)), self._candidates, self._survivors

    def query_counts(self) -> list[int]:
        """The live cumulative count of range queries per constraint (as
        :meth:`counters`: read now, do not keep)."""
        return self._queries

    def statistics(self) -> MatcherStatistics:
        return MatcherStatistics(
            {x: len(b) for x, b in self._buffers.items()},
            tuple(self._candidates),
            tuple(self._survivors),
            tuple(self._queries),
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
            "queries": list(self._queries),
            "idle": list(self._idle),
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
        width = len(pattern.constraints)
        saved = {"queries": [0] * width, "idle": [0] * width, **data}  # older states lack them
        names = ("candidates", "survivors", "queries", "idle")
        for name, counter in zip(names, m._counts, strict=True):
            counter[:] = _counts(saved.get(name), name, width)  # in place: the join's lists
        return m

    # -- Algorithms 2 and 4 --------------------------------------------------------

    def _update_on_end(
        self, time: Time, started: Sequence[Situation], finished: Sequence[Situation]
    ) -> Iterator[TemporalMatch] | None:
        """Algorithm 2: each ended situation joins its buffer, then the join runs with
        it fixed, so a configuration of several ended now is found once (by the last).
        None when nothing ended (no join to run)."""
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
        if not finished:
            return None
        return self._joins_on_end(finished, _Found(self.pattern, time, low_latency=False))

    def _joins_on_end(
        self, finished: Sequence[Situation], found: _Found
    ) -> Iterator[TemporalMatch]:
        for s in finished:
            self._buffers[s.symbol].append(s)
            yield from self._perform({s.symbol: s}, found)

    def _update_low_latency(
        self, time: Time, started: Sequence[Situation], finished: Sequence[Situation]
    ) -> Iterator[TemporalMatch] | None:
        """Algorithm 4 (see the module docstring): the buffers updated now, the joins
        when the matches are taken; None when no situation triggers a join."""
        running = self._running
        before = dict(running) if finished else running
        visible: list[Situation] = []
        ended: list[Situation] = []
        ended_now: dict[str, Situation] = {}
        for s in started:
            running[s.symbol] = s
            visible.append(s)
        for s in finished:
            was = before.get(s.symbol)
            self._stop_running(s)
            ended_now[s.symbol] = s
            (ended if was is not None and was.start == s.start else visible).append(s)
        # A match found from now on is established at the detection time or, when a
        # duration constraint deferred it, no earlier than that situation's start.
        bound = time - self._slack
        for s in visible:
            if s.start < bound:
                bound = s.start
        self._purge(bound - self.pattern.window)
        for s in finished:
            self._buffers[s.symbol].append(s)
        triggers = [
            s
            for s in visible
            # a start that can never be the detection time does not trigger (Table 2)
            if s.end is not None or s.start != time or s.symbol in self._start_triggers
        ]
        if not triggers and not ended:
            return None
        return self._joins_low_latency(time, triggers, ended, before, ended_now)

    def _joins_low_latency(
        self,
        time: Time,
        triggers: list[Situation],
        ended: list[Situation],
        before: Mapping[str, Situation],
        ended_now: Mapping[str, Situation],
    ) -> Iterator[TemporalMatch]:
        """Algorithm 4's performMatch calls: each trigger situation fixed, then each
        situation that ended with a running partner it is constrained to."""
        running = self._running
        found = _Found(self.pattern, time, low_latency=True)
        for s in triggers:
            yield from self._perform({s.symbol: s}, found)
        for s in ended:
            for i in self._end_triggers[s.symbol]:
                c = self.pattern.constraints[i]
                other = c.right if c.left == s.symbol else c.left
                prev = before.get(other)
                if prev is None or prefix_group(s.start, prev.start) <= oriented(c, s.symbol):
                    continue  # no partner running, or decided when both started
                partner = ended_now.get(other, running.get(other))
                if partner is not None and partner.start == prev.start:
                    yield from self._perform({s.symbol: s, other: partner}, found)

    def _stop_running(self, s: Situation) -> None:
        r = self._running.get(s.symbol)
        if r is not None and r.start == s.start:
            del self._running[s.symbol]

    def _purge(self, bound: Time) -> None:
        for buf in self._buffers.values():
            buf.purge(bound)

    # -- Algorithm 3 ---------------------------------------------------------------

    def _perform(self, ws: dict[str, Situation], found: _Found) -> Iterator[TemporalMatch]:
        """performMatch with the situations of ``ws`` fixed: its matches, one by one."""
        for c in self.pattern.constraints:
            if c.left in ws and c.right in ws and not decided(c.relations, ws[c.left], ws[c.right]):
                return
        fixed = frozenset(ws)
        plan = self._plans.get(fixed)
        if plan is None:
            plan = self._plans[fixed] = plan_join(self.order, fixed, self._links)
        running = self._running if self.low_latency else {}
        publish = found.publish
        for config in Join(self._buffers, running, self.pattern.window, self._counts).run(plan, ws):
            m = publish(config)
            if m is not None:
                yield m


class _Found:
    """The matches of one update (publishResult): the window checked, each
    configuration once (with low latency several trigger situations can find one)."""

    def __init__(self, pattern: TemporalPattern, time: Time, low_latency: bool) -> None:
        self.pattern = pattern
        self.time = time
        self.seen: set[tuple[Time, ...]] | None = set() if low_latency else None

    def publish(self, ws: Mapping[str, Situation]) -> TemporalMatch | None:
        """The match of a complete working set, None if the window refuses it or it
        was published already."""
        symbols = self.pattern.symbols
        starts = tuple([ws[x].start for x in symbols])
        # a configuration already published now passed the window check then (several
        # triggers of one update can find it): skip it before building anything
        seen = self.seen
        if seen is not None and starts in seen:
            return None
        config = {x: ws[x] for x in symbols}
        # established by now at the latest: within the window if now is (within_window)
        if self.time - min(starts) > self.pattern.window and not within_window(
            self.pattern, config
        ):
            return None
        if seen is not None:
            seen.add(starts)
        # Found when its last situation ends, or earlier while one still runs: the
        # update's time is its largest end when every end is known.
        partition = config[symbols[0]].key
        return TemporalMatch(partition, config, self.time, self.time)


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
        "ids": [s.first_id, s.last_id],
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
        *d["ids"],
    )
