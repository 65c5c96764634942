"""The event-based evaluation framework (VLDB 2010, section 4 and Appendix C): runs
select whole interval events, never their points, keeping each selected event's valid
interval (:mod:`kleene.imprecise.bounds`).

Three methods:

* ``"query"``, the query-order method (section 4.1, one pass as in Appendix C.1): runs
  are prefixes of the pattern and events are presented in query order by the sorting of
  Appendix C.3 (:class:`kleene.imprecise.ordering.QueryOrder`; an event matching
  several components is presented once per component).
* ``"any"``, the any-state method (section 4.2, Appendix C.2): events in arrival order;
  an event may start a run at any component and a run clones itself to select it into
  any of its unmatched components.
* ``"selectivity"``, selectivity order (section 4.3): the any-state method over events
  buffered per component and presented, once every buffer holds one, most selective
  component first, the selectivity being the number of events that matched each
  component over the stream seen so far
  (:class:`kleene.imprecise.ordering.SelectivityOrder`).

Predicates are those of the compiled plan: an event must pass the single-event
properties of a component to be selected there (:mod:`kleene.imprecise.properties`),
and the plan's edges, which relate it to the earlier variables, run in pattern order as
soon as the components before it are matched (Appendix C.2, step 1). Times are never
read: queries over intervals cannot refer to them (:mod:`kleene.imprecise.rules`).

Runs are pruned by both rules of Appendix C.2, with t_emit = now.lower - U_max the
earliest instant of an unseen event (lowered to the earliest buffered event while an
order holds events back): a run whose smallest valid upper bound plus W is
before t_emit (its time to live has passed; selectivity order lowers t_emit only to
the buffered events that can join some run, ``ttl_floor``), and one with a matched
component j whose predecessor j-1 is unmatched while e_j.upper is before every event
still to come for component j-1 (nothing can come before it). The first rule is also
applied when a run would be created: a run whose time to live is before every event
still to come for the components it misses (later in the same push, held back by the
order, or unseen) is not created at all. Live runs are kept grouped by the set of
components they match, so an event visits only the runs it can extend.

A complete run is a signature. Skip till any match: its confidence by Algorithm 2
(:mod:`kleene.imprecise.confidence`), emitted at once. Skip till next match: its
confidence by equations (3)-(4) over the valid intervals, as a dynamic program with the
spoilers' factors (:mod:`kleene.imprecise.next_confidence`), once every event that
could fall between its events has arrived (t_emit past the last valid upper bound).

Results come out lazily (the iterators of :meth:`EventFramework.results` and
:meth:`EventFramework.final_results`, each consumed before the next call; ``push`` and
``flush`` list them): the completed matches are
given their confidence every :data:`_CONFIDE_EVERY` of them, so a consumer that stops
at ``max_matches`` stops the evaluation. ``max_runs`` bounds the runs, the completed
matches awaiting their confidence and the pending signatures
(:mod:`kleene.imprecise.budget`), checked as they grow.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, NamedTuple

from kleene.compiler.plan import Plan
from kleene.imprecise import bounds
from kleene.imprecise.batch import any_confidences
from kleene.imprecise.budget import RunBudget
from kleene.imprecise.collapse import (
    Collapser,
    Group,
    Threshold,
    make_result,
    spoilers,
    vectors_before,
)
from kleene.imprecise.confidence import Memo, any_confidence, floats, point_matches
from kleene.imprecise.model import IntervalEvent
from kleene.imprecise.next_confidence import TooManyCases, next_confidence
from kleene.imprecise.ordering import Held, Presented, QueryOrder, SelectivityOrder
from kleene.imprecise.points import PointMatch, Steps
from kleene.imprecise.properties import Components
from kleene.imprecise.result import Framework, ImpreciseMatch, Labels
from kleene.vocabulary import Strategy

METHODS = ("any", "query", "selectivity")
# per component, the earliest lower bound of an event still to be presented for it
Later = tuple[int, ...] | None
_MEMO_CELLS = 5_000_000  # memoized Algorithm 2 tables hold at most about this many cells
_BATCH = 16  # from this many matches with float probabilities, Algorithm 2 goes batched
# ... if their intervals hold at most this many points: wider tables (11 at δ = 5, 21 at
# δ = 10, 101 at δ = 50) gain more from the per-match path's shared prefix tables
_BATCH_WIDTH = 16
# completed matches are given their confidence (and handed out) once this many wait
_CONFIDE_EVERY = 4096
# a match completed under skip till any match: its events, valid intervals, bindings
Completed = tuple[tuple[IntervalEvent, ...], tuple[bounds.Interval, ...], tuple[Any, ...]]


class EventRun(NamedTuple):
    """A run: the event selected per component (None where unmatched; a prefix only
    under the query-order method), their valid intervals, how many leading components
    have passed the plan's edges, the state vector after them and the run's key."""

    events: tuple[IntervalEvent | None, ...]
    slots: bounds.Slots
    done: int
    vector: tuple[Any, ...]
    key: tuple[Any, ...] | None


class Signature(NamedTuple):
    """A complete run under skip till next match, waiting until every event that could
    fall between its events has arrived (t_emit past its last valid upper bound)."""

    events: tuple[IntervalEvent, ...]
    valid: tuple[bounds.Interval, ...]
    vector: tuple[Any, ...]
    key: Any


def exclusive_components(plan: Plan) -> bool:
    """Whether every event can match one component at most (distinct event types)."""
    types = [s.event_type for s in plan.states]
    return len(set(types)) == len(types)


class EventFramework(Framework):
    """Admitted interval events in, results out as soon as they are final."""

    def __init__(
        self,
        plan: Plan,
        window: float | None,
        u_max: int,
        keep: Threshold,
        method: str = "any",
        *,
        max_runs: int | None = None,
    ) -> None:
        if method not in METHODS:
            raise ValueError(f"unknown method {method!r}")
        self.plan = plan
        self.budget = RunBudget(max_runs, "runs, completed matches and pending signatures")
        self.window = window
        self.u_max = u_max
        self.keep = keep
        self.steps = Steps(plan)
        self.length = len(plan.states)
        self.full = (1 << self.length) - 1  # the mask of a complete run
        self.components = Components(plan)
        self.prefixes = method == "query"  # runs are prefixes of the pattern
        self.order: QueryOrder | SelectivityOrder | None = None
        if method == "query":
            self.order = QueryOrder(self.length)
        elif method == "selectivity":
            self.order = SelectivityOrder(self.length, window)
        self.next_match = plan.strategy is Strategy.SKIP_TILL_NEXT_MATCH
        # live runs by the set of components they match (bit j set: E_j matched), so an
        # event visits only the runs it can extend
        self.groups: dict[int, list[EventRun]] = {}
        self.created = 0  # runs created so far (a statistic)
        self.memo: Memo = {}
        self.memo_limit = max(100, _MEMO_CELLS // (u_max + 1) ** 2)  # tables of that size
        self.labels = Labels()  # the events' id and position tuples results share
        self.seen: dict[Any, list[IntervalEvent]] = {}  # arrived events by type
        self.completed: list[Completed] = []  # skip till any match: to confide
        self.pending: list[Signature] = []  # skip till next match: signatures not yet final
        self.collapser = Collapser(plan, self.steps, window, True, self.candidates, keep)
        self.horizon = None if window is None else 2 * window + u_max + 1
        empty = (None,) * self.length
        self.start = EventRun(empty, () if self.prefixes else empty, 0, self.steps.initial, None)

    def results(
        self, events: list[IntervalEvent], now_lower: int | None
    ) -> Iterator[ImpreciseMatch]:
        """:meth:`push`, the results as an iterator that does the matching."""
        if self.next_match:  # the candidates of the NELTs and equations (2)-(4)
            for e in events:
                self.seen.setdefault(e.type, []).append(e)
        if now_lower is None:  # nothing admitted yet
            assert not events
            return iter(())
        return self._advance(events, now_lower - self.u_max)

    def final_results(self) -> Iterator[ImpreciseMatch]:
        """:meth:`flush`, the results as an iterator that does the matching."""
        yield from self._advance([], None)
        self.groups = {}

    @property
    def runs(self) -> list[EventRun]:
        """The live runs."""
        return [run for runs in self.groups.values() for run in runs]

    @runs.setter
    def runs(self, runs: list[EventRun]) -> None:
        self.groups = {}
        for run in runs:
            mask = sum(1 << j for j, e in enumerate(run.events) if e is not None)
            self.groups.setdefault(mask, []).append(run)

    def candidates(self, etype: Any) -> list[IntervalEvent]:
        """The arrived events of a type (for the confidence of skip till next match)."""
        return self.seen.get(etype, [])

    def _advance(self, events: list[IntervalEvent], t_emit: int | None) -> Iterator[ImpreciseMatch]:
        components = self.components.of(events)
        if self.order is not None:
            presented = self.order.add(events, components, t_emit, self._alive)
        else:
            presented = list(zip(events, components, strict=True))
        for (e, matched), later in zip(presented, self._later(presented, t_emit), strict=True):
            if matched:
                self._select(e, matched, later)
                if len(self.completed) >= _CONFIDE_EVERY:
                    yield from self._confide()
        yield from self._confide()
        if t_emit is not None:
            if self.order is None:
                self._prune([t_emit] * self.length, t_emit)
            else:
                floor = self.order.ttl_floor(t_emit, self._alive)
                self._prune(self.order.earliest(t_emit), floor)
        ready = [g for g in self.pending if t_emit is None or t_emit > g.valid[-1][1]]
        if ready:
            self.pending = [
                g for g in self.pending if not (t_emit is None or t_emit > g.valid[-1][1])
            ]
            for g in ready:
                result = self._next_result(g)
                if result is not None:
                    yield result
        if t_emit is not None and self.horizon is not None:
            # a signature still to complete holds an event not yet presented
            first = t_emit if self.order is None else min(self.order.earliest(t_emit))
            self._forget(int(first - self.horizon))

    def _later(self, presented: Presented, t_emit: int | None) -> list[Later]:
        """Per presented event, per component, the earliest lower bound of an event that
        can still be presented for the component after it: later in this push, held
        back by the order, or unseen (at or after t_emit). None at the end of the stream
        or without a window (nothing is known to be out of reach)."""
        if t_emit is None or self.window is None:
            return [None] * len(presented)
        floor = [t_emit] * self.length if self.order is None else self.order.earliest(t_emit)
        out: list[Later] = []
        for e, matched in reversed(presented):
            out.append(tuple(floor))
            for j in matched:
                floor[j] = min(floor[j], e.lower)
        out.reverse()
        return out

    def _alive(self, k: int) -> Held:
        """The events live runs hold for component k, each with the loosest valid
        interval and the latest time to live of a run holding it (for
        :class:`SelectivityOrder`)."""
        held: Held = {}
        window = math.inf if self.window is None else self.window
        for mask, runs in self.groups.items():
            if not mask >> k & 1:
                continue
            for run in runs:
                s = run.slots[k]
                assert s is not None
                ttl = min(x[1] for x in run.slots if x is not None) + window
                key = id(run.events[k])
                old = held.get(key)
                if old is None:
                    held[key] = (s[0], s[1], ttl)
                else:
                    held[key] = (min(old[0], s[0]), max(old[1], s[1]), max(old[2], ttl))
        return held

    def _select(self, e: IntervalEvent, matched: list[int], later: Later) -> None:
        """Clone every run that can select ``e`` (the original run skips it), and start
        new runs with it. Only the runs missing a component ``e`` matches are visited
        (under query order, those missing it next). ``max_runs`` is checked as runs,
        completed matches and pending signatures grow."""
        key = self.steps.key(e.at(e.lower))
        if key is None:
            return
        grown: list[tuple[int, EventRun]] = []
        limit = self.budget.limit
        live = sum(len(runs) for runs in self.groups.values()) if limit is not None else 0
        # an event presented for one of several components may be in a run already
        check = self.prefixes or len(matched) > 1
        interval, window, prefixes = (e.lower, e.upper), self.window, self.prefixes
        for mask, runs in [*self.groups.items(), (0, [self.start])]:
            if prefixes:
                targets = [j for j in matched if mask == (1 << j) - 1]
            else:
                targets = [j for j in matched if not mask >> j & 1]
            if not targets:
                continue
            for run in runs:
                if run.key is not None and run.key != key:
                    continue
                for j in targets:
                    if prefixes:
                        slots = bounds.extend(run.slots, interval, window)
                    else:
                        slots = bounds.place(run.slots, j, interval, window)
                    if slots is None:
                        continue
                    new = self._take(run, e, j, slots, mask | 1 << j, key, later, check)
                    if new is not None:
                        grown.append((mask | 1 << j, new))
                    if limit is not None:
                        self.budget.check(
                            live + len(grown) + len(self.completed) + len(self.pending)
                        )
        for mask, run in grown:
            self.groups.setdefault(mask, []).append(run)
        self.created += len(grown)

    def _take(
        self,
        run: EventRun,
        e: IntervalEvent,
        j: int,
        slots: bounds.Slots,
        mask: int,
        key: Any,
        later: Later,
        check: bool,
    ) -> EventRun | None:
        """The run after selecting ``e`` for component j, whose valid intervals are then
        ``slots``, matching the components of ``mask`` (None when it cannot, when it
        completes, or when it would be pruned before any event could extend it).
        ``check``: ``e`` may be in the run already (the same-id check, made once the
        valid intervals admit ``e``, which most visited runs do not; events compare by
        identity)."""
        if check and e in run.events:
            return None
        complete = mask == self.full
        if not complete and later is not None:
            # Appendix C.2's time-to-live rule, applied before the run exists: every
            # event that could extend it lies past its window
            if self.prefixes:  # valid intervals in pattern order: the first vub is least
                # and the components still missing are those after j
                if slots[0][1] + self.window < min(later[j + 1 :]):  # type: ignore[index,operator]
                    return None
            else:
                ttl = min(s[1] for s in slots if s is not None) + self.window  # type: ignore[operator]
                if all(ttl < later[k] for k in range(self.length) if not mask >> k & 1):
                    return None
        events = list(run.events)
        events[j] = e
        done, vector = run.done, run.vector
        while done < self.length and events[done] is not None:
            x = events[done]
            assert x is not None
            after = self.steps.take(done, x.at(x.lower), key, vector)
            if after is None:
                return None
            done, vector = done + 1, after
        if not complete:
            return EventRun(tuple(events), slots, done, vector, key)
        self._complete(tuple(events), slots, vector, key)  # type: ignore[arg-type]
        return None

    def _complete(
        self,
        events: tuple[IntervalEvent, ...],
        slots: bounds.Slots,
        vector: tuple[Any, ...],
        key: Any,
    ) -> None:
        valid = bounds.finish(slots, self.window)
        if valid is None:
            return
        if self.next_match:
            self.pending.append(Signature(events, valid, vector, key))
            return
        self.completed.append((events, valid, vector))

    def _confide(self) -> Iterator[ImpreciseMatch]:
        """The results of the matches completed since the last call, in the order they
        completed: their confidences by Algorithm 2, as one array operation over all of
        them when there are enough with float probabilities and narrow intervals
        (:mod:`kleene.imprecise.batch`), else one by one, memoized."""
        done, self.completed = self.completed, []
        if len(self.memo) > self.memo_limit:
            self.memo.clear()
        found = self._batched(done)
        plan, keep, labels = self.plan, self.keep, self.labels
        for (events, valid, vector), result in zip(done, found, strict=True):
            if result is False:
                if len(self.memo) > self.memo_limit:
                    self.memo.clear()
                result = any_confidence(events, valid, self.window, self.memo)
            if result is not None and keep(result[0]):
                confidence, start, end = result
                yield make_result(plan, events, vector, start, end, confidence, labels)

    def _batched(self, done: list[Completed]) -> list[Any]:
        """Per completed match, its Algorithm 2 result from the batch, or False where it
        goes one by one: too few matches, or an event with exact probabilities or a wide
        interval."""
        if len(done) < _BATCH:
            return [False] * len(done)
        events = {e for m in done for e in m[0]}
        slow = {e for e in events if e.upper - e.lower >= _BATCH_WIDTH or not floats(e, self.memo)}
        rough = [m for m in done if slow.isdisjoint(m[0])] if slow else done
        if len(rough) < _BATCH:
            return [False] * len(done)
        found = any_confidences([m[0] for m in rough], [m[1] for m in rough], self.window)
        if not slow:
            return found
        by_match = {id(m): f for m, f in zip(rough, found, strict=True)}
        return [by_match.get(id(m), False) for m in done]

    def _next_result(self, sig: Signature) -> ImpreciseMatch | None:
        """Skip till next match: the signature's confidence over its valid intervals,
        narrowed by the NELTs, by equations (3)-(4) as a dynamic program
        (:mod:`kleene.imprecise.next_confidence`); its point matches are listed and
        weighted one by one only when equation (4) would enumerate too many cases."""
        valid = self._nelt_bounds(sig)
        if valid is None:
            return None
        spans = [(0, 0)] + [(valid[j - 1][0], valid[j][1]) for j in range(1, len(valid))]
        found = spoilers(self.steps, sig.events, sig.key, self.candidates, spans)
        try:
            result = next_confidence(sig.events, valid, self.window, found)
        except TooManyCases:
            return self._listed_result(sig, valid)
        if result is None or not self.keep(result[0]):
            return None
        return make_result(self.plan, sig.events, sig.vector, result[1], result[2], result[0])

    def _listed_result(
        self, sig: Signature, valid: tuple[bounds.Interval, ...]
    ) -> ImpreciseMatch | None:
        """The signature's point matches within ``valid``, weighted one by one by the
        point-based equations (2)-(4) (:class:`kleene.imprecise.collapse.Collapser`)."""
        matches = [
            PointMatch(sig.events, times, sig.vector, sig.key)
            for times in point_matches(sig.events, valid, self.window)
        ]
        if not matches:
            return None
        return self.collapser.collapse(Group(sig.events, valid[-1][1], matches))

    def _nelt_bounds(self, sig: Signature) -> tuple[bounds.Interval, ...] | None:
        """The valid intervals lowered by the NELT (section 3, Appendix B.2): an event x
        that can match component j and starts after e_{j-1}'s valid upper bound lies
        strictly between t_{j-1} and t_j in every world where t_j > x.upper, so e_j is
        next only at t_j <= x.upper."""
        events, key = sig.events, sig.key
        vectors = vectors_before(self.steps, events, key)
        valid = list(sig.valid)
        for j in range(1, len(events)):
            after = valid[j - 1][1]
            nelt = valid[j][1]
            for x in self.candidates(self.plan.states[j].event_type):
                if (
                    x.lower > after
                    and x.upper < nelt
                    and all(x is not e for e in events)
                    and self.steps.take(j, x.at(x.lower), key, vectors[j]) is not None
                ):
                    nelt = x.upper
            valid[j] = (valid[j][0], nelt)
        for j in range(len(valid) - 2, -1, -1):
            valid[j] = (valid[j][0], min(valid[j][1], valid[j + 1][1] - 1))
        if any(lo > hi for lo, hi in valid):
            return None
        return tuple(valid)

    def _prune(self, earliest: list[int], floor: int) -> None:
        """Appendix C.2's two pruning rules; ``earliest[j]`` bounds every event still to
        come for component j, ``floor`` every one that could extend a run past its time
        to live."""
        window = self.window
        for mask, runs in list(self.groups.items()):
            # the matched components whose predecessor is unmatched (the second rule)
            gaps = [j for j in range(1, self.length) if mask >> j & 1 and not mask >> j - 1 & 1]
            kept = []
            for run in runs:
                if window is not None:
                    ttl = min(s[1] for s in run.slots if s is not None) + window
                    if ttl < floor:
                        continue
                events = run.events
                if any(events[j].upper < earliest[j - 1] for j in gaps):  # type: ignore[union-attr]
                    continue
                kept.append(run)
            if kept:
                self.groups[mask] = kept
            else:
                del self.groups[mask]

    def _forget(self, before: int) -> None:
        """Drop the arrived events no pending or future signature can be spoiled by."""
        for etype, events in self.seen.items():
            if events and events[0].upper < before:
                self.seen[etype] = [e for e in events if e.upper >= before]
