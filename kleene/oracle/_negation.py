"""The negation filter (docs/semantics.md, "Negation"; SIGMOD 2008, section 3.1: negation
as a nested query over the matches of the positive pattern).

A negated component ``~(T n)`` sits between the previous and the next positive
component of the pattern. A match is dropped when some event e of type T lies strictly
between the previous component's last event and the next component's first event (from
the stream's start when there is no previous one, to its end when there is no next one),
satisfies every conjunct that mentions n, and, with WITHIN W, keeps the match plus e
within W (max time minus min time at most W).
"""

from __future__ import annotations

from dataclasses import dataclass

from kleene.lang import ast
from kleene.oracle._analysis import Conjunct, Plan, Selection
from kleene.oracle._stream import Event


@dataclass(frozen=True)
class _Gap:
    """A negated component and the positive components around it (indices, or None)."""

    component: ast.Component
    previous: int | None
    following: int | None
    conjuncts: tuple[Conjunct, ...]


def _gaps(plan: Plan) -> list[_Gap]:
    gaps = []
    seen_positive = 0
    for component in plan.components:
        if not component.negated:
            seen_positive += 1
            continue
        gaps.append(
            _Gap(
                component=component,
                previous=seen_positive - 1 if seen_positive else None,
                following=seen_positive if seen_positive < len(plan.positive) else None,
                conjuncts=tuple(c for c in plan.negation if c.negated == component.var),
            )
        )
    return gaps


def _negates(plan: Plan, gap: _Gap, selection: Selection, event: Event) -> bool:
    if event.type != gap.component.event_type:
        return False
    if plan.window is not None:
        times = [e.time for chosen in selection for e in chosen] + [event.time]
        if max(times) - min(times) > plan.window:
            return False
    scope = plan.scope(selection, {gap.component.var: event})
    return all(c.holds(scope) for c in gap.conjuncts)


def survives_negation(plan: Plan, stream: tuple[Event, ...], selection: Selection) -> bool:
    """True when no negated component finds an event that cancels the match."""
    for gap in _gaps(plan):
        low = selection[gap.previous][-1].position if gap.previous is not None else -1
        high = selection[gap.following][0].position if gap.following is not None else len(stream)
        if any(_negates(plan, gap, selection, e) for e in stream[low + 1 : high]):
            return False
    return True
