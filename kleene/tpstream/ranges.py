"""Temporal matching via range queries (TPStream, EDBT 2018, section 5.2, Figure 3).

Given a fixed situation (the *anchor*) and a relation ``anchor R partner``, Table 1's
definition δ_R bounds the partner's start and end timestamps each to one interval. A
time-ordered buffer turns each interval into an index range by binary search; a
situation stream's situations are disjoint, so its starts and ends are sorted alike
and the two index ranges intersect into the relation's answer. Alternatives of a
constraint are the union of such ranges, a conjunction of constraints their
intersection (section 5.2). A still running situation (section 5.3) takes the end
+infinity here: every finished partner ended before it will.

This module also holds section 5.3.1's prefix groups: the relations two situations that
both started and are both still running may end up in, told apart by the order of their
starts only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kleene.tpstream.model import Allen, Situation, Time, holds

INF = math.inf

# The prefix groups of Table 2, oriented as ``a R b``: the relations left open once both
# started (and neither ended) when a started first, both at once, or b first.
GROUP_FIRST = frozenset({Allen.OVERLAPS, Allen.FINISHED_BY, Allen.CONTAINS})
GROUP_SAME = frozenset({Allen.STARTS, Allen.EQUALS, Allen.STARTED_BY})
GROUP_SECOND = frozenset({Allen.OVERLAPPED_BY, Allen.FINISHES, Allen.DURING})
PREFIX_GROUPS = (GROUP_FIRST, GROUP_SAME, GROUP_SECOND)


def prefix_group(a_start: Time, b_start: Time) -> frozenset[Allen]:
    """The prefix group (as ``a R b``) of two situations running at the later start."""
    if a_start < b_start:
        return GROUP_FIRST
    return GROUP_SAME if a_start == b_start else GROUP_SECOND


def group_of(relation: Allen) -> frozenset[Allen] | None:
    """The prefix group ``relation`` belongs to (before/meets and their mirrors: none;
    their own group gains nothing, Table 2)."""
    return next((g for g in PREFIX_GROUPS if relation in g), None)


def end_of(s: Situation) -> Time:
    """A situation's end, +infinity while it is still running."""
    return INF if s.end is None else s.end


def decided(relations: frozenset[Allen], a: Situation, b: Situation) -> bool:
    """Whether ``a R b`` for some R in ``relations`` whatever the unknown ends of running
    situations turn out to be (section 5.3.1): two running situations need their whole
    prefix group in ``relations``; one running situation outlives every finished one."""
    if a.end is None and b.end is None:
        return prefix_group(a.start, b.start) <= relations
    a_end, b_end = end_of(a), end_of(b)
    return any(holds(r, a.start, a_end, b.start, b_end) for r in relations)


@dataclass(frozen=True)
class Bound:
    """An interval of timestamps; None is unbounded, ``*_closed`` includes the bound."""

    lo: Time | None = None
    lo_closed: bool = False
    hi: Time | None = None
    hi_closed: bool = False


_ANY = Bound()


def _open(lo: Time | None, hi: Time | None) -> Bound:
    return Bound(lo, False, hi, False)


def _at(t: Time) -> Bound:
    return Bound(t, True, t, True)


_BOUNDS: dict[Allen, Callable[[Time, Time], tuple[Bound, Bound]]] = {
    Allen.BEFORE: lambda s, e: (_open(e, None), _ANY),
    Allen.AFTER: lambda s, e: (_ANY, _open(None, s)),
    Allen.MEETS: lambda s, e: (_at(e), _ANY),
    Allen.MET_BY: lambda s, e: (_ANY, _at(s)),
    Allen.OVERLAPS: lambda s, e: (_open(s, e), _open(e, None)),
    Allen.OVERLAPPED_BY: lambda s, e: (_open(None, s), _open(s, e)),
    Allen.STARTS: lambda s, e: (_at(s), _open(e, None)),
    Allen.STARTED_BY: lambda s, e: (_at(s), _open(None, e)),
    Allen.DURING: lambda s, e: (_open(None, s), _open(e, None)),
    Allen.CONTAINS: lambda s, e: (_open(s, None), _open(None, e)),
    Allen.FINISHES: lambda s, e: (_open(None, s), _at(e)),
    Allen.FINISHED_BY: lambda s, e: (_open(s, None), _at(e)),
    Allen.EQUALS: lambda s, e: (_at(s), _at(e)),
}


def partner_bounds(relation: Allen, start: Time, end: Time) -> tuple[Bound, Bound]:
    """The (start, end) intervals of every partner p with ``[start, end) relation p``
    (Figure 3); ``end`` may be +infinity for a running anchor."""
    return _BOUNDS[relation](start, end)


# Index ranges: sorted, disjoint, half-open [lo, hi) positions of a buffer.
Ranges = list[tuple[int, int]]


def union(parts: Iterable[tuple[int, int]]) -> Ranges:
    """The sorted, merged union of index ranges (a constraint's alternatives)."""
    out: Ranges = []
    for lo, hi in sorted(p for p in parts if p[0] < p[1]):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def intersect(a: Sequence[tuple[int, int]], b: Sequence[tuple[int, int]]) -> Ranges:
    """The intersection of two sorted disjoint range lists (a conjunction)."""
    out: Ranges = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def size(ranges: Sequence[tuple[int, int]]) -> int:
    return sum(hi - lo for lo, hi in ranges)
