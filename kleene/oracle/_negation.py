"""The negation filter (docs/semantics.md, "Negation"; SIGMOD 2008, section 3.1: negation
as a nested query over the matches of the positive pattern; SIGMOD 2014, section 2.1:
negation applied to a whole sequence).

A negated component ``~(T n)``, or a negated sequence ``~SEQ(T1 n1, ..., Tk nk)``, sits
between the previous and the next positive component of the pattern. A match is dropped
when some events e1, ..., ek of types T1..Tk, in strictly increasing positions, lie
strictly between the previous component's last event and the next component's first
event (from the stream's start when there is no previous one, to its end when there is
no next one), satisfy every conjunct that mentions the negation's variables, and, with
WITHIN W, keep the match plus e1..ek within W (max time minus min time at most W).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from kleene.lang import ast
from kleene.oracle._analysis import Conjunct, Plan, Selection, negation_group
from kleene.oracle._stream import Event


@dataclass(frozen=True)
class _Gap:
    """A negated sequence and the positive components around it (indices, or None)."""

    members: tuple[ast.Component, ...]
    previous: int | None
    following: int | None
    conjuncts: tuple[Conjunct, ...]


def _gaps(plan: Plan) -> list[_Gap]:
    gaps: list[_Gap] = []
    seen_positive = 0
    for component in plan.components:
        if not component.negated:
            seen_positive += 1
            continue
        group = negation_group(component, plan.components)
        if gaps and negation_group(gaps[-1].members[0], plan.components) == group:
            last = gaps[-1]
            gaps[-1] = _Gap(
                (*last.members, component), last.previous, last.following, last.conjuncts
            )
            continue
        gaps.append(
            _Gap(
                members=(component,),
                previous=seen_positive - 1 if seen_positive else None,
                following=seen_positive if seen_positive < len(plan.positive) else None,
                conjuncts=tuple(c for c in plan.negation if c.negated == group),
            )
        )
    return gaps


def _negates(plan: Plan, gap: _Gap, selection: Selection, events: tuple[Event, ...]) -> bool:
    if any(e.type != m.event_type for e, m in zip(events, gap.members, strict=True)):
        return False
    if plan.window is not None:
        times = [e.time for chosen in selection for e in chosen] + [e.time for e in events]
        if max(times) - min(times) > plan.window:
            return False
    bound = {m.var: e for m, e in zip(gap.members, events, strict=True)}
    scope = plan.scope(selection, bound)
    return all(c.holds(scope) for c in gap.conjuncts)


def survives_negation(plan: Plan, stream: tuple[Event, ...], selection: Selection) -> bool:
    """True when no negated component or sequence finds events that cancel the match."""
    for gap in _gaps(plan):
        low = selection[gap.previous][-1].position if gap.previous is not None else -1
        high = selection[gap.following][0].position if gap.following is not None else len(stream)
        between = stream[low + 1 : high]
        if any(
            _negates(plan, gap, selection, events)
            for events in combinations(between, len(gap.members))
        ):
            return False
    return True
