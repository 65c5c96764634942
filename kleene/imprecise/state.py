"""The state of an interval matcher as snapshot data (``IntervalMatcher.snapshot``).

The tree is written in :mod:`kleene.runtime.snapshot`'s tagged data format, never
pickled, framed with the kind's tag (``snapshot.INTERVAL``) and a fingerprint of the
query and every option that changes what the state means (:func:`fingerprint`, the one
recipe of every kind: :func:`kleene.runtime.snapshot.kind_fingerprint`). Events are written once,
in a table, and referred to by number everywhere else: the frameworks tell events apart
by identity (the same-id check, the NELTs of runs sharing a last event), so a restored
matcher gets one object per event, shared as before.

What is saved, per part of the matcher (the rest is rebuilt from the plan):

* admission: the largest lower and upper bound so far, the ids seen, and the shared
  stream time (:class:`~kleene.runtime.stream_time.StreamTime`): the arrivals, the
  latest heartbeat, the rejected events not yet taken and how many were rejected;
* the events held until flush (U_max measured over the input);
* the framework (:mod:`kleene.imprecise.choice`) with its U_max: the point-based
  framework's point buffer, runs, arrived events, NELTs and signature groups; the
  event-based framework's runs, arrived events, pending signatures and sorting buffers
  (its memo of Algorithm 2 tables and its labels of results' events are caches and
  start empty; the count of point matches held is recounted); the Kleene framework's
  events.

Loading checks every type, length and reference against the plan, so a malformed
payload is refused with a :class:`~kleene.errors.SnapshotError`, never later.
"""

from __future__ import annotations

import heapq
import math
from fractions import Fraction
from itertools import pairwise
from typing import Any, Protocol

from kleene.compiler.plan import Plan
from kleene.imprecise.admission import Admission
from kleene.imprecise.collapse import Collapser, Group
from kleene.imprecise.events import EventFramework, EventRun, Signature
from kleene.imprecise.expansion import StreamExpansion
from kleene.imprecise.framework import PointFramework
from kleene.imprecise.kleene_dp import KleeneFramework
from kleene.imprecise.model import IntervalEvent, IntervalFields, Probability
from kleene.imprecise.ordering import QueryOrder, SelectivityOrder
from kleene.imprecise.points import PointMatch, PointMatching, Run
from kleene.imprecise.result import Labels
from kleene.runtime.snapshot import (
    INTERVAL,
    fail,
    fields_of,
    integer,
    kind_fingerprint,
    mapping,
    sequence,
)
from kleene.runtime.stream_time import StreamTime

Framework = PointFramework | EventFramework | KleeneFramework


class IntervalMatcher(Protocol):
    """What this module reads and sets of :class:`kleene.imprecise.matcher.IntervalMatcher`."""

    plan: Plan
    interval: IntervalFields
    admission: Admission
    held: list[IntervalEvent]
    evaluator: Framework | None
    chosen: str | None
    u_max: int | None

    def start(self, u_max: int) -> None: ...


LAYOUT = 5  # the layout of this module's tree (part of the fingerprint)

# the attributes of each framework object: those this module saves (the event-based
# framework's memo and labels, caches, are restored empty; the collapser's count of
# point matches held is recounted), and those rebuilt from the plan and options
# (tests/imprecise/test_snapshot.py keeps the lists complete)
SAVED: dict[type, tuple[str, ...]] = {
    PointFramework: ("expansion", "matching", "collapser"),
    StreamExpansion: ("heap",),
    PointMatching: ("runs", "seen", "log", "log_base", "nelts"),
    EventFramework: (
        *("groups", "memo", "labels", "seen", "pending", "collapser", "order", "created"),
    ),
    QueryOrder: ("buffers",),
    SelectivityOrder: ("waiting", "held", "counts"),
    KleeneFramework: ("events",),
    Collapser: ("groups", "held"),
}
REBUILT: dict[type, tuple[str, ...]] = {
    PointFramework: ("horizon", "u_max"),
    StreamExpansion: ("now_lower", "u_max"),
    PointMatching: ("budget", "steps", "use_nelt", "window"),
    EventFramework: (
        *("components", "horizon", "keep", "length", "next_match"),
        *("plan", "start", "steps", "u_max", "window", "prefixes", "memo_limit", "full"),
        "budget",
        "completed",  # empty between pushes
    ),
    QueryOrder: (),
    SelectivityOrder: ("window",),
    KleeneFramework: ("budget", "components", "keep", "plan", "steps", "window"),
    Collapser: ("candidates", "keep", "next_match", "plan", "steps", "window"),
}


def fingerprint(facts: list[Any]) -> bytes:
    """What an interval matcher's state means, by the one recipe of every kind: this
    module's layout, the query's canonical text and the options (``facts``, from
    :class:`kleene.imprecise.query.IntervalQuery`)."""
    return kind_fingerprint(INTERVAL, [LAYOUT, *facts])


# --- writing ------------------------------------------------------------------------------


class _Writer:
    """The event table, filled as events are referred to."""

    def __init__(self) -> None:
        self.table: dict[int, int] = {}
        self.events: list[Any] = []

    def ref(self, e: IntervalEvent) -> int:
        n = self.table.get(id(e))
        if n is None:
            n = self.table[id(e)] = len(self.events)
            pmf = tuple((p.numerator, p.denominator) if type(p) is Fraction else p for p in e.pmf)
            self.events.append((e.values, e.lower, e.upper, pmf, e.position))
        return n

    def refs(self, events: Any) -> list[Any]:
        return [None if e is None else self.ref(e) for e in events]


def to_data(m: IntervalMatcher) -> Any:
    """The matcher's state as a tree of plain values."""
    w = _Writer()
    a = m.admission
    admission = {
        "bounds": (a.now_lower, a.now_upper),
        "ids": set(a.seen_ids),
        "stream": a.time.to_data(),
    }
    held = w.refs(m.held)
    framework = None
    if m.evaluator is not None:
        framework = (m.chosen, m.u_max, _framework_data(m.evaluator, w))
    return {"admission": admission, "held": held, "framework": framework, "events": w.events}


def _framework_data(fw: Framework, w: _Writer) -> Any:
    if isinstance(fw, KleeneFramework):
        return {"events": w.refs(fw.events)}
    if isinstance(fw, PointFramework):
        pm = fw.matching
        runs = [
            (r.next, r.vector, w.refs(r.events), r.times, r.key)
            for by_last in pm.runs.values()
            for runs in by_last.values()
            for r in runs
        ]
        nelts = [
            (j, key, vector, None if math.isinf(nelt) else nelt, read, w.ref(last))
            for (_, j, key, vector), (nelt, read, last) in pm.nelts.items()
        ]
        return {
            "points": [(t, w.ref(e)) for t, _, e in fw.expansion.heap],
            "runs": runs,
            "seen": {k: w.refs(v) for k, v in pm.seen.items()},
            "log": (pm.log_base, w.refs(pm.log)),
            "nelts": nelts,
            "groups": _groups_data(fw.collapser, w),
        }
    return {
        "runs": [(w.refs(r.events), r.slots, r.done, r.vector, r.key) for r in fw.runs],
        "seen": {k: w.refs(v) for k, v in fw.seen.items()},
        "pending": [(w.refs(s.events), s.valid, s.vector, s.key) for s in fw.pending],
        "groups": _groups_data(fw.collapser, w),
        "order": _order_data(fw.order, w),
        "created": fw.created,
    }


def _order_data(order: QueryOrder | SelectivityOrder | None, w: _Writer) -> Any:
    """The sorting buffers (query order) or the waiting events and counts (selectivity
    order, section 4.3)."""
    if order is None:
        return None
    if isinstance(order, QueryOrder):
        return ("query", [w.refs(b) for b in order.buffers])
    waiting = [(w.ref(e), list(matched)) for e, matched in order.waiting]
    return ("selectivity", waiting, list(order.held), list(order.counts))


def _groups_data(c: Collapser, w: _Writer) -> list[Any]:
    return [
        (w.refs(g.events), [(p.times, p.vector, p.key) for p in g.matches])
        for g in c.groups.values()
    ]


# --- reading ------------------------------------------------------------------------------


class _Reader:
    """Checks values against the plan while rebuilding; events by their table number."""

    def __init__(self, plan: Plan, events: Any) -> None:
        self.plan = plan
        self.length = len(plan.states)
        self.types = frozenset(s.event_type for s in plan.states)
        self.width = 3 + len(plan.attributes)
        self.vector_length = len(plan.initial_vector)
        self.events = [self._event(x) for x in sequence(events, "the event table")]

    def _event(self, x: Any) -> IntervalEvent:
        values, lower, upper, pmf, position = sequence(x, "an event", tuple, 5)
        sequence(values, "an event's values", tuple, self.width)
        if values[0] not in self.types or values[1] is not None:
            fail("an event of a type the query does not read")
        hash(values[2])
        integer(lower, "a lower bound")
        integer(upper, "an upper bound", lower)
        points = sequence(pmf, "an event's probabilities", tuple, upper - lower + 1)
        probs = tuple(_probability(p) for p in points)
        return IntervalEvent(values, lower, upper, probs, integer(position, "a position", 0))

    def ref(self, x: Any) -> IntervalEvent:
        return self.events[integer(x, "an event reference", 0, len(self.events))]

    def refs(self, x: Any, what: str) -> list[IntervalEvent]:
        return [self.ref(n) for n in sequence(x, what)]

    def vector(self, x: Any) -> tuple[Any, ...]:
        return sequence(x, "a state vector", tuple, self.vector_length)

    def key(self, x: Any) -> tuple[Any, ...]:
        hash(sequence(x, "a run key", tuple))
        return x

    def times(self, x: Any, events: list[IntervalEvent]) -> tuple[int, ...]:
        sequence(x, "the instants of a run", tuple, len(events))
        for t, e in zip(x, events, strict=True):
            integer(t, "an instant", e.lower, e.upper + 1)
        if any(a >= b for a, b in pairwise(x)):
            fail("instants of a run that do not increase")
        return x

    def intervals(self, x: Any, what: str) -> tuple[Any, ...]:
        for item in sequence(x, what, tuple):
            if item is not None:
                lo, hi = sequence(item, "an interval", tuple, 2)
                integer(lo, "a bound")
                integer(hi, "a bound")
        return x

    def by_type(self, x: Any) -> dict[Any, list[IntervalEvent]]:
        out = {}
        for etype, refs in mapping(x, "the arrived events").items():
            events = self.refs(refs, "arrived events")
            if any(e.type != etype for e in events):
                fail("an arrived event filed under another type")
            out[etype] = events
        return out


def _probability(p: Any) -> Probability:
    if type(p) is tuple:
        num, den = sequence(p, "a fraction", tuple, 2)
        return Fraction(integer(num, "a numerator", 0), integer(den, "a denominator", 1))
    if type(p) is int:
        return integer(p, "a probability", 0, 2)
    if type(p) is not float or not 0 <= p <= 1:
        fail("a probability")
    return p


def restore(m: IntervalMatcher, data: Any) -> None:
    """Put the state of :func:`to_data` into a new matcher of the same query."""
    admission, held, framework, events = fields_of(
        data, "the interval matcher state", "admission", "held", "framework", "events"
    )
    r = _Reader(m.plan, events)
    _restore_admission(m.admission, admission)
    m.held = r.refs(held, "the held events")
    m.evaluator = None
    if framework is not None:
        chosen, u_max, fw_data = sequence(framework, "the framework", tuple, 3)
        m.start(integer(u_max, "U_max", 0))
        if m.chosen != chosen:
            fail("a framework other than the query chooses")
        assert m.evaluator is not None
        _restore_framework(m.evaluator, fw_data, r)
    elif m.interval.u_max is not None:
        fail("no framework although U_max is declared")


def _restore_admission(a: Admission, data: Any) -> None:
    bounds, ids, stream = fields_of(data, "the admission", "bounds", "ids", "stream")
    now_lower, now_upper = sequence(bounds, "the bounds so far", tuple, 2)
    if (now_lower is None) != (now_upper is None):
        fail("the bounds so far")
    if now_lower is not None:
        integer(now_lower, "the largest lower bound")
        integer(now_upper, "the largest upper bound", now_lower)
    if type(ids) is not set:
        fail("the ids seen")
    a.now_lower, a.now_upper, a.seen_ids = now_lower, now_upper, ids
    time = StreamTime.from_data(stream)
    if time.time_kind != "number" or time.zoned or time.position:
        fail("the stream time of interval events")
    if time.clock is not None:
        integer(time.clock, "the latest heartbeat")
    a.time = time


def _restore_framework(fw: Framework, data: Any, r: _Reader) -> None:
    if isinstance(fw, KleeneFramework):
        (events,) = fields_of(data, "the Kleene framework", "events")
        fw.events = r.refs(events, "the Kleene framework's events")
    elif isinstance(fw, PointFramework):
        _restore_points(fw, data, r)
    else:
        _restore_events(fw, data, r)


def _restore_points(fw: PointFramework, data: Any, r: _Reader) -> None:
    points, runs, seen, log, nelts, groups = fields_of(
        data, "the point-based framework", "points", "runs", "seen", "log", "nelts", "groups"
    )
    heap = []
    for item in sequence(points, "the point buffer"):
        t, ref = sequence(item, "a buffered point", tuple, 2)
        e = r.ref(ref)
        heap.append((integer(t, "a point's instant", e.lower, e.upper + 1), e.position, e))
    heapq.heapify(heap)
    fw.expansion.heap = heap
    pm = fw.matching
    pm.runs = {}
    for item in sequence(runs, "the runs"):
        nxt, vector, refs, times, key = sequence(item, "a run", tuple, 5)
        events = r.refs(refs, "a run's events")
        if not events or integer(nxt, "a run's next state", 1, r.length) != len(events):
            fail("a run's length")
        run = Run(nxt, r.vector(vector), tuple(events), r.times(times, events), r.key(key))
        by_last = pm.runs.setdefault((run.next, run.key, run.vector), {})
        by_last.setdefault(id(events[-1]), []).append(run)
    pm.seen = r.by_type(seen)
    base, refs = sequence(log, "the arrival log", tuple, 2)
    pm.log_base, pm.log = integer(base, "the log's start", 0), r.refs(refs, "the log")
    pm.nelts = {}
    end = pm.log_base + len(pm.log)
    for item in sequence(nelts, "the NELTs"):
        j, key, vector, nelt, read, ref = sequence(item, "a NELT", tuple, 6)
        last = r.ref(ref)
        entry = [
            math.inf if nelt is None else integer(nelt, "a NELT"),
            integer(read, "a count", 0, end + 1),
            last,
        ]
        pm.nelts[(id(last), integer(j, "a state", 1, r.length), r.key(key), r.vector(vector))] = (
            entry
        )
    _restore_groups(fw.collapser, groups, r)


def _restore_events(fw: EventFramework, data: Any, r: _Reader) -> None:
    runs, seen, pending, groups, order, created = fields_of(
        data, "the event-based framework", "runs", "seen", "pending", "groups", "order", "created"
    )
    restored = []
    for item in sequence(runs, "the runs"):
        refs, slots, done, vector, key = sequence(item, "a run", tuple, 5)
        events = _slots(refs, r)
        r.intervals(sequence(slots, "a run's intervals", tuple), "a run's intervals")
        if not fw.prefixes:
            fits = len(slots) == r.length and all(
                (s is None) == (e is None) for s, e in zip(slots, events, strict=True)
            )
        else:
            matched = [e is not None for e in events]
            fits = len(slots) == sum(matched) and matched == sorted(matched, reverse=True)
        if not fits:
            fail("a run's intervals do not fit its events")
        done = integer(done, "a run's progress", 0, r.length)
        if any(e is None for e in events[:done]):
            fail("a run's progress past an unmatched component")
        restored.append(EventRun(tuple(events), slots, done, r.vector(vector), _key(key, r)))
    fw.runs = restored
    fw.seen = r.by_type(seen)
    fw.memo, fw.labels = {}, Labels()  # caches: started afresh
    fw.created = integer(created, "a count of runs", 0)
    fw.pending = []
    for item in sequence(pending, "the pending signatures"):
        refs, valid, vector, key = sequence(item, "a signature", tuple, 4)
        signature = r.refs(refs, "a signature's events")
        if len(signature) != r.length:
            fail("a signature's length")
        r.intervals(sequence(valid, "valid intervals", tuple, r.length), "valid intervals")
        if None in valid:
            fail("a signature without a valid interval")
        fw.pending.append(Signature(tuple(signature), valid, r.vector(vector), _key(key, r)))
    _restore_groups(fw.collapser, groups, r)
    _restore_order(fw.order, order, r)


def _restore_order(order: QueryOrder | SelectivityOrder | None, data: Any, r: _Reader) -> None:
    if order is None:
        if data is not None:
            fail("sorting buffers of another method")
        return
    if isinstance(order, QueryOrder):
        method, buffers = sequence(data, "the sorting buffers", tuple, 2)
        if method != "query":
            fail("sorting buffers of another method")
        buffers = sequence(buffers, "the sorting buffers", list, r.length)
        order.buffers = [r.refs(b, "a sorting buffer") for b in buffers]
        return
    method, waiting, held, counts = sequence(data, "the selectivity buffers", tuple, 4)
    if method != "selectivity":
        fail("sorting buffers of another method")
    order.waiting = []
    for item in sequence(waiting, "the waiting events", list):
        ref, matched = sequence(item, "a waiting event", tuple, 2)
        components = sequence(matched, "its components", list)
        order.waiting.append(
            (r.ref(ref), [integer(j, "a component", 0, r.length) for j in components])
        )
    order.held = [
        integer(n, "a held count", 0) for n in sequence(held, "held counts", list, r.length)
    ]
    order.counts = [integer(n, "a count", 0) for n in sequence(counts, "counts", list, r.length)]


def _slots(refs: Any, r: _Reader) -> list[IntervalEvent | None]:
    items = sequence(refs, "a run's events", list, r.length)
    return [None if n is None else r.ref(n) for n in items]


def _key(x: Any, r: _Reader) -> tuple[Any, ...] | None:
    return None if x is None else r.key(x)


def _restore_groups(c: Collapser, data: Any, r: _Reader) -> None:
    c.groups = {}
    for item in sequence(data, "the signature groups"):
        refs, matches = sequence(item, "a signature group", tuple, 2)
        events = tuple(r.refs(refs, "a signature's events"))
        if len(events) != r.length:
            fail("a signature's length")
        group = Group(events, events[-1].upper + c.window)
        for m in sequence(matches, "point matches"):
            times, vector, key = sequence(m, "a point match", tuple, 3)
            group.matches.append(
                PointMatch(events, r.times(times, list(events)), r.vector(vector), r.key(key))
            )
        if not group.matches:
            fail("a signature group without point matches")
        c.groups[tuple(e.position for e in events)] = group
    c.held = sum(len(g.matches) for g in c.groups.values())
