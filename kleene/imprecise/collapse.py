"""Match collapsing (VLDB 2010, section 3, step 3): the point matches of one signature
become one result with its time range and confidence.

All point matches of a signature are known once t_emit passes the last event's upper
bound plus W. The confidence is

* skip till any match, equation (1): the sum over the point matches of the product of
  their points' probabilities (distinct point matches are disjoint sets of worlds);
* skip till next match, equations (2)-(4): each point match is further weighted by the
  probability that no other event spoils it, i.e. falls strictly between two adjacent
  points t_{j-1} < t_j while it could match component j (its edge holds on the state
  vector before j). Other events are independent, so this is a product over them. An
  event that can match one component only contributes the factor of equation (3),
  memoized per (j, t_{j-1}, t_j) as Algorithm 1 does; an event that can match several
  components is summed over its own points outside all of its ranges, which is the
  enumeration of equation (4).

A signature whose confidence is 0 is no result (no world produces it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from kleene.compiler.plan import Plan
from kleene.imprecise.model import IntervalEvent, Probability
from kleene.imprecise.points import PointMatch, Steps
from kleene.imprecise.result import ImpreciseMatch, Labels, partition_of

Threshold = Callable[[Probability], bool]


@dataclass
class Group:
    """The point matches of one signature collected so far."""

    events: tuple[IntervalEvent, ...]
    due: float  # collapse once t_emit is past this
    matches: list[PointMatch] = field(default_factory=list)


class Collapser:
    """Groups point matches by signature and collapses each group when it is due."""

    def __init__(
        self,
        plan: Plan,
        steps: Steps,
        window: float | None,
        next_match: bool,
        candidates: Callable[[Any], list[IntervalEvent]],
        keep: Threshold,
    ) -> None:
        self.plan = plan
        self.steps = steps
        self.window = window or 0
        self.next_match = next_match
        self.candidates = candidates
        self.keep = keep
        self.groups: dict[tuple[int, ...], Group] = {}
        self.held = 0  # the point matches in the groups (counted against max_runs)

    def add(self, pm: PointMatch) -> None:
        key = tuple(e.position for e in pm.events)
        group = self.groups.get(key)
        if group is None:
            group = Group(pm.events, pm.events[-1].upper + self.window)
            self.groups[key] = group
        group.matches.append(pm)
        self.held += 1

    def due(self, t_emit: int | None) -> Iterator[ImpreciseMatch]:
        """The results of the groups due before ``t_emit`` (all when None), collapsed
        one by one as they are taken (a consumer that stops leaves the rest held)."""
        ready = [k for k, g in self.groups.items() if t_emit is None or t_emit > g.due]
        for key in ready:
            group = self.groups.pop(key)
            self.held -= len(group.matches)
            result = self.collapse(group)
            if result is not None:
                yield result

    def collapse(self, group: Group) -> ImpreciseMatch | None:
        """The result of a complete group, or None (confidence 0 or under the
        threshold)."""
        weights = self._next_weights(group) if self.next_match else _any_weights(group)
        confidence = _total(weights)
        if not confidence or not self.keep(confidence):
            return None
        possible = [pm for pm, w in zip(group.matches, weights, strict=True) if w]
        return make_result(
            self.plan,
            group.events,
            group.matches[0].vector,
            min(pm.times[0] for pm in possible),
            max(pm.times[-1] for pm in possible),
            confidence,
        )

    def _next_weights(self, group: Group) -> list[Probability]:
        """The probability of each point match of the group under skip till next
        match, equations (2)-(4): 0 for those that no world produces."""
        single, multi = self._spoilers(group)
        memo: dict[tuple[int, int, int], Probability] = {}
        weights = []
        for pm in group.matches:
            p = _point_probability(pm)
            times = pm.times
            for j, spoilers in single.items():
                key = (j, times[j - 1], times[j])
                factor = memo.get(key)
                if factor is None:
                    factor = 1
                    for x in spoilers:
                        factor *= x.outside([(times[j - 1], times[j])])
                    memo[key] = factor
                p *= factor
            for x, components in multi:
                p *= x.outside([(times[j - 1], times[j]) for j in components])
            weights.append(p)
        return weights

    def _spoilers(
        self, group: Group
    ) -> tuple[dict[int, list[IntervalEvent]], list[tuple[IntervalEvent, list[int]]]]:
        """The other events that could be next for some component j >= 2 (0-based
        j >= 1): per component those matching it alone, then those matching several
        with their components."""
        events = group.events
        spans = [(0, 0)] + [
            (min(pm.times[j - 1] for pm in group.matches), max(pm.times[j] for pm in group.matches))
            for j in range(1, len(events))
        ]
        found = spoilers(self.steps, events, group.matches[0].key, self.candidates, spans)
        single: dict[int, list[IntervalEvent]] = {}
        multi = []
        for x, components in found:
            if len(components) == 1:
                single.setdefault(components[0], []).append(x)
            else:
                multi.append((x, components))
        return single, multi


def spoilers(
    steps: Steps,
    events: tuple[IntervalEvent, ...],
    key: tuple[Any, ...],
    candidates: Callable[[Any], list[IntervalEvent]],
    spans: list[tuple[int, int]],
) -> list[tuple[IntervalEvent, list[int]]]:
    """The other events that could be next for some component j >= 1 (0-based), each
    with those components: x can match j (its edge holds on the state vector before j)
    and has a point strictly inside ``spans[j]`` (the earliest t_{j-1}, the latest
    t_j)."""
    vectors = vectors_before(steps, events, key)
    held = {id(e) for e in events}
    matched: dict[int, tuple[IntervalEvent, list[int]]] = {}
    for j in range(1, len(events)):
        low, high = spans[j]
        for x in candidates(steps.states[j].event_type):
            if x.upper <= low or x.lower >= high or id(x) in held:
                continue
            if steps.take(j, x.at(x.lower), key, vectors[j]) is not None:
                matched.setdefault(id(x), (x, []))[1].append(j)
    return list(matched.values())


def vectors_before(
    steps: Steps, events: tuple[IntervalEvent, ...], key: tuple[Any, ...]
) -> list[tuple[Any, ...]]:
    """The state vector before each component of a match (predicates never read the
    events' times, so any point of each event gives the same vectors)."""
    vectors = [steps.initial]
    for j, e in enumerate(events[:-1]):
        vector = steps.take(j, e.at(e.lower), key, vectors[-1])
        assert vector is not None  # the match took this edge
        vectors.append(vector)
    return vectors


def _total(weights: list[Probability]) -> Probability:
    """The sum, exact for fractions and correctly rounded for floats (math.fsum: a
    signature may have a great many point matches)."""
    if all(isinstance(w, Fraction | int) for w in weights):
        return sum(weights, start=Fraction(0))
    return math.fsum(weights)


def _any_weights(group: Group) -> list[Probability]:
    """The probability of each point match under skip till any match (equation 1)."""
    return [_point_probability(pm) for pm in group.matches]


def _point_probability(pm: PointMatch) -> Probability:
    p: Probability = 1
    for e, t in zip(pm.events, pm.times, strict=True):
        p *= e.prob(t)
    return p


def make_result(
    plan: Plan,
    events: tuple[IntervalEvent, ...],
    vector: tuple[Any, ...],
    start: int,
    end: int,
    confidence: Probability,
    labels: Labels | None = None,
) -> ImpreciseMatch:
    """The result of a signature: its events per variable, the RETURN values computed
    on the match's state vector, the time range and the confidence. ``labels``: the
    events' id and position tuples, shared with other results."""
    returned: dict[str, Any] = {}
    if plan.returns is not None:
        returned = dict(zip(plan.return_names, plan.returns(vector), strict=True))
    names = plan.positive_vars
    if labels is None:
        tags = [((e.values[2],), (e.position,)) for e in events]
    else:
        known = labels.by_position.get  # a fast path for labels.of's lookup
        tags = [known(e.position) or labels.of(e) for e in events]
    return ImpreciseMatch(
        {v: t[0] for v, t in zip(names, tags, strict=True)},
        {v: t[1] for v, t in zip(names, tags, strict=True)},
        start,
        end,
        confidence,
        returned,
        partition_of(plan, events[0]),
    )
