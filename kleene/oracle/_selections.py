"""Valid selections by exhaustive enumeration (docs/semantics.md, "Matches of the
positive pattern"): under skip till any match every valid selection is a match
(SIGMOD 2008, section 2; SIGMOD 2014, section 4, Figure 3, S3).

A selection gives every positive variable events of its type — one to a single
variable, one or more to a Kleene variable, n >= 1 to every member of a group
``SEQ(T1 v1, ..., Tm vm)+`` (SIGMOD 2014, section 2.1) — with strictly increasing
positions in pattern order, a group's iterations in turn: v1[1] < ... < vm[1] < v1[2]
< ... < vm[n]. It is valid when every conjunct over positive variables holds (with the
iterator rule) and, with WITHIN W, its last time minus its first time is at most W.

The enumeration tries every such assignment. Two cuts keep it small without changing
its result: an event more than W after the selection's first event cannot join it, and
a conjunct is checked as soon as every variable it mentions has all its events (its
value cannot change afterwards). :func:`is_valid` is the definition itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import combinations, pairwise

from kleene.oracle._analysis import Plan, Selection
from kleene.oracle._stream import Event


def is_valid(plan: Plan, selection: Selection) -> bool:
    """The definition of a valid selection, checked on a complete selection."""
    if len(selection) != len(plan.positive):
        return False
    for component, chosen in zip(plan.positive, selection, strict=True):
        if not chosen or (not component.kleene and len(chosen) != 1):
            return False
        if any(e.type != component.event_type for e in chosen):
            return False
    events = in_pattern_order(plan, selection)
    if not events or any(a.position >= b.position for a, b in pairwise(events)):
        return False
    if not plan.within(events[0], events[-1]):
        return False
    scope = plan.scope(selection)
    return all(c.holds(scope) for c in plan.conjuncts)


def in_pattern_order(plan: Plan, selection: Selection) -> list[Event]:
    """The selected events in pattern order, a group's members interleaved by
    iteration; [] when a group's members differ in length."""
    events: list[Event] = []
    k = 0
    while k < len(selection):
        size = plan.group_at(k)
        members = selection[k : k + size]
        if len({len(m) for m in members}) != 1:
            return []
        events += [e for iteration in zip(*members, strict=True) for e in iteration]
        k += size
    return events


def _settled(plan: Plan, selection: Selection, completed: range) -> bool:
    """The conjuncts whose last identifier belongs to the components just completed hold."""
    scope = plan.scope(selection)
    return all(
        c.holds(scope)
        for c in plan.conjuncts
        if c.location is not None and c.location[0] in completed
    )


def _iterations(
    plan: Plan, candidates: list[Event], start: int, size: int
) -> Iterator[tuple[Event, ...]]:
    """Every increasing sequence of events whose k-th event has the type of member
    k mod size, ending after a whole iteration."""
    types = [plan.positive[start + k].event_type for k in range(size)]

    def extend(chosen: tuple[Event, ...], rest: int) -> Iterator[tuple[Event, ...]]:
        if chosen and len(chosen) % size == 0:
            yield chosen
        wanted = types[len(chosen) % size]
        for j in range(rest, len(candidates)):
            if candidates[j].type == wanted:
                yield from extend((*chosen, candidates[j]), j + 1)

    return extend((), 0)


def _group_choices(
    plan: Plan, stream: tuple[Event, ...], selection: Selection, size: int
) -> Iterator[Selection]:
    start = len(selection)
    after = selection[-1][-1].position if selection else -1
    candidates = [e for e in stream if e.position > after]
    for chosen in _iterations(plan, candidates, start, size):
        if selection and not plan.within(selection[0][0], chosen[-1]):
            continue
        if not plan.within(chosen[0], chosen[-1]):
            continue
        yield (*selection, *(chosen[k::size] for k in range(size)))


def _choices(plan: Plan, stream: tuple[Event, ...], selection: Selection) -> Iterator[Selection]:
    size = plan.group_at(len(selection))
    if size > 1:
        yield from _group_choices(plan, stream, selection, size)
        return
    component = plan.positive[len(selection)]
    after = selection[-1][-1].position if selection else -1
    candidates = [
        e
        for e in stream
        if e.position > after
        and e.type == component.event_type
        and (not selection or plan.within(selection[0][0], e))
    ]
    sizes = range(1, len(candidates) + 1) if component.kleene else range(1, 2)
    for size in sizes:
        for chosen in combinations(candidates, size):
            yield (*selection, chosen)


def valid_selections(plan: Plan, stream: tuple[Event, ...]) -> list[Selection]:
    """Every valid selection of the positive pattern over ``stream``."""
    out: list[Selection] = []

    def extend(selection: Selection) -> None:
        if len(selection) == len(plan.positive):
            if is_valid(plan, selection):
                out.append(selection)
            return
        for longer in _choices(plan, stream, selection):
            if _settled(plan, longer, range(len(selection), len(longer))):
                extend(longer)

    extend(())
    return out
