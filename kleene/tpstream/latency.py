"""The low-latency analysis (TPStream, EDBT 2018, section 5.3.1, Table 2).

Two situations are related at the earliest once the relation's third timestamp t3 in
the order of δ_R is known: ``t_d(R) = t3``, which equals max(latest start, earliest
end). When a constraint holds the whole prefix group the two situations fall into
(both started, neither ended), it is decided already at the later start, the trivial
lower bound. A configuration is *established* at the largest of these times over its
constraints (and never before every situation started): that is ``t_d(P)``.

The window is checked against that instant: a configuration matches within ``window``
when ``established - earliest start <= window``. Definition 12 takes the largest end
instead; the two agree whenever a match cannot be known before its last end, and only
this reading lets a match be reported at ``t_d(P)`` with no false positive (the unknown
ends of running situations cannot change it). Waiting for every end and reporting early
thus return the same matches.

The trigger analysis of section 5.3.2 follows from the same table: which symbols' starts
can ever be a detection time, and which constraints can become decided at a symbol's end.
"""

from __future__ import annotations

from collections.abc import Mapping

from kleene.tpstream.model import Allen, Constraint, Situation, TemporalPattern, Time
from kleene.tpstream.ranges import (
    GROUP_FIRST,
    GROUP_SAME,
    end_of,
    group_of,
    prefix_group,
)


def pair_established(relations: frozenset[Allen], a: Situation, b: Situation) -> Time:
    """When ``a R b`` (R in ``relations``, already decided) became known: t3, which is
    max(later start, earlier end), or the later start if ``relations`` holds the prefix
    group of their starts (if they do not overlap there, t3 is the later start anyway)."""
    later = max(a.start, b.start)
    if prefix_group(a.start, b.start) <= relations:
        return later
    return max(later, min(end_of(a), end_of(b)))


def established(pattern: TemporalPattern, config: Mapping[str, Situation]) -> Time:
    """``t_d(P)`` of a configuration: the max over its constraints and starts."""
    t = max(s.start for s in config.values())
    for c in pattern.constraints:
        t = max(t, pair_established(c.relations, config[c.left], config[c.right]))
    return t


def within_window(pattern: TemporalPattern, config: Mapping[str, Situation]) -> bool:
    """The window condition: established at most ``window`` after the earliest start."""
    first = min(s.start for s in config.values())
    return established(pattern, config) - first <= pattern.window


def oriented(c: Constraint, anchor: str) -> frozenset[Allen]:
    """The constraint's relations as ``anchor R other``."""
    if c.left == anchor:
        return c.relations
    return frozenset(r.inverse for r in c.relations)


# ``x R y`` for which y's start is t3: x before/meets y.
_START_OF_PARTNER = frozenset({Allen.BEFORE, Allen.MEETS})
# ``x R y`` for which x's end is t3 (alone or tied with y's end).
_END_OF_ANCHOR = frozenset(
    {Allen.OVERLAPS, Allen.FINISHED_BY, Allen.STARTS, Allen.EQUALS, Allen.FINISHES, Allen.DURING}
)


def start_triggers(pattern: TemporalPattern) -> frozenset[str]:
    """Symbols whose start can be a detection time: every constraint on the symbol can
    be decided at its start (the partner ended before, or their prefix group is in the
    constraint); symbols without a constraint trigger at their start."""
    out = set()
    for x in pattern.symbols:
        ok = True
        for c in pattern.constraints:
            if x not in (c.left, c.right):
                continue
            other = c.right if c.left == x else c.left
            rels = oriented(c, other)  # ``other R x``
            if not (rels & _START_OF_PARTNER or rels >= GROUP_FIRST or rels >= GROUP_SAME):
                ok = False
                break
        if ok:
            out.add(x)
    return frozenset(out)


def end_triggers(pattern: TemporalPattern) -> dict[str, tuple[int, ...]]:
    """For each symbol, the constraints (by index) that can become decided at its end:
    those with a relation whose t3 is that end and whose prefix group is not all in the
    constraint (else it was decided at the later start already)."""
    out: dict[str, tuple[int, ...]] = {}
    for x in pattern.symbols:
        found = []
        for i, c in enumerate(pattern.constraints):
            if x not in (c.left, c.right):
                continue
            rels = oriented(c, x)
            if any(_ends_late(r, rels) for r in rels & _END_OF_ANCHOR):
                found.append(i)
        out[x] = tuple(found)
    return out


def _ends_late(relation: Allen, relations: frozenset[Allen]) -> bool:
    group = group_of(relation)
    return group is None or not group <= relations
