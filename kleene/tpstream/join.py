"""performMatch: the multi-way join of the situation buffers (TPStream, EDBT 2018,
section 5.2, Algorithm 3).

Some situations are fixed in the working set; the others are joined in the steps of
an evaluation order. A step's partners come from range queries (Figure 3): per
constraint to a symbol already in the working set, the union of its relations' index
ranges; over several constraints, their intersection; a step with no such constraint
ranges over its whole buffer. Each step's ranges are computed once, as soon as every
situation they depend on is in the working set, and an empty one cuts the branch there
(it would be empty for every partial result in between). Candidates are finally
clipped by the window's bound on starts. Situations still running (section 5.3) are
no part of the buffers: a step may take its symbol's running situation instead, when
every constraint to the working set is decided with its end unknown.

The join is a generator: each complete working set is yielded as it is found, and the
search goes on only as far as the caller takes them (``max_matches`` stops it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from kleene.tpstream.buffers import SituationBuffer
from kleene.tpstream.model import Allen, Situation, Time
from kleene.tpstream.ranges import (
    Ranges,
    decided,
    end_of,
    intersect,
    partner_bounds,
    size,
    union,
)

# Per symbol: (constraint index, partner, relations as ``partner R symbol``).
Links = Mapping[str, Sequence[tuple[int, str, frozenset[Allen]]]]


@dataclass(frozen=True)
class JoinPlan:
    """The steps after a set of fixed symbols. ``links[i]`` are step i's constraints to
    symbols before it; ``ready[k]`` the steps whose ranges can be computed once the
    fixed symbols (k = 0) or step k - 1 (k >= 1) are in the working set."""

    steps: tuple[str, ...]
    links: tuple[tuple[tuple[int, str, frozenset[Allen]], ...], ...]
    ready: tuple[tuple[int, ...], ...]


def plan_join(order: Sequence[str], fixed: frozenset[str], links: Links) -> JoinPlan:
    """Follow ``order``, except that a step with no constraint to the symbols before it
    waits behind the first later one that has one (no cross product while a
    constraint can apply)."""
    steps: list[str] = []
    bound = set(fixed)
    rest = [x for x in order if x not in fixed]
    while rest:
        linked = [x for x in rest if any(o in bound for _, o, _ in links[x])]
        pick = linked[0] if linked else rest[0]
        steps.append(pick)
        bound.add(pick)
        rest.remove(pick)
    level = {x: 0 for x in fixed} | {x: i + 1 for i, x in enumerate(steps)}
    step_links = tuple(
        tuple(link for link in links[x] if level[link[1]] <= i) for i, x in enumerate(steps)
    )
    ready: list[list[int]] = [[] for _ in range(len(steps) + 1)]
    for i, ls in enumerate(step_links):
        ready[max((level[o] for _, o, _ in ls), default=0)].append(i)
    return JoinPlan(tuple(steps), step_links, tuple(tuple(r) for r in ready))


class Join:
    """One run of performMatch over the buffers; :meth:`run` yields each complete
    working set (the caller checks the window and publishes)."""

    def __init__(
        self,
        buffers: Mapping[str, SituationBuffer],
        running: Mapping[str, Situation],
        window: Time,
        counts: tuple[list[int], list[int], list[int], list[int]],
    ) -> None:
        self.buffers = buffers
        self.running = running
        self.window = window
        self.candidates, self.survivors, self.queries, self.idle = counts

    def run(self, plan: JoinPlan, ws: dict[str, Situation]) -> Iterator[dict[str, Situation]]:
        """Each complete working set, extending ``ws`` (the same dict each time, changed
        once the next is asked for: read it before)."""
        ranges: list[Ranges] = [[] for _ in plan.steps]
        if self._prepare(plan, 0, ws, ranges):
            yield from self._step(plan, 0, ws, ranges)

    def _prepare(
        self, plan: JoinPlan, level: int, ws: dict[str, Situation], ranges: list[Ranges]
    ) -> bool:
        """Compute the ranges of the steps ready at ``level``; False if one is empty.
        Each range query is counted per constraint: one query, the buffered
        situations it ran over (candidates), those it found (survivors). A query
        over an empty buffer is not run (it finds nothing and measures no
        selectivity); it is counted apart (``idle``), as work only."""
        for i in plan.ready[level]:
            buf = self.buffers[plan.steps[i]]
            span = buf.span()
            found: Ranges = [span]
            n = span[1] - span[0]  # len(buf), without a call
            links = plan.links[i]
            if n:
                for ci, x, rels in links:
                    anchor = ws[x]
                    a_end = end_of(anchor)
                    part = union(
                        buf.positions(*partner_bounds(r, anchor.start, a_end)) for r in rels
                    )
                    self.candidates[ci] += n
                    self.survivors[ci] += size(part)
                    self.queries[ci] += 1
                    found = intersect(found, part)
            elif links:
                for ci, _, _ in links:
                    self.idle[ci] += 1
                found = []
            ranges[i] = found
            if not found and plan.steps[i] not in self.running:
                return False
        return True

    def _step(
        self, plan: JoinPlan, i: int, ws: dict[str, Situation], ranges: list[Ranges]
    ) -> Iterator[dict[str, Situation]]:
        if i == len(plan.steps):
            yield ws
            return
        y = plan.steps[i]
        buf = self.buffers[y]
        starts = [s.start for s in ws.values()]
        first, last = min(starts), max(starts)
        clip = buf.starting_in((last - self.window, True, first + self.window, True))
        for lo, hi in intersect(ranges[i], clip):
            for p in range(lo, hi):
                ws[y] = buf[p]
                if self._prepare(plan, i + 1, ws, ranges):
                    yield from self._step(plan, i + 1, ws, ranges)
        r = self.running.get(y)
        if (
            r is not None
            and last - self.window <= r.start <= first + self.window
            and all(decided(rels, ws[x], r) for _, x, rels in plan.links[i])
        ):
            ws[y] = r
            if self._prepare(plan, i + 1, ws, ranges):
                yield from self._step(plan, i + 1, ws, ranges)
        ws.pop(y, None)
