"""Which pattern components an interval event can match on its own: its type and the
single-event properties of each state (the conjuncts that read the event only, in the
expression IR), evaluated once per batch by the columnar backend
(kleene.compiler.columnar), which computes exactly what the edge code computes or gives
up (the event is then kept for the edges to decide).

The any-state method (VLDB 2010, Appendix C.2, step 1) selects an event into any
component; predicates relating it to other variables wait until the components before
it are matched, but these single-event filters apply at once.
"""

from __future__ import annotations

from typing import Any

from kleene.compiler import expr
from kleene.compiler.columnar import GiveUp, conjunction
from kleene.compiler.plan import Plan
from kleene.imprecise.model import IntervalEvent

_FIXED = {"type": 0, "timestamp": 1, "id": 2}


class Components:
    """Per event, the pattern components it may match."""

    def __init__(self, plan: Plan) -> None:
        self.index = dict(_FIXED)
        self.index.update({a: 3 + k for k, a in enumerate(plan.attributes)})
        self.states = [
            (s.event_type, [p for p in s.properties if expr.reads_only(p, expr.EVENT)])
            for s in plan.states
        ]

    def of(self, events: list[IntervalEvent]) -> list[list[int]]:
        """The components each event may match, in pattern order."""
        out: list[list[int]] = [[] for _ in events]
        for j, (etype, props) in enumerate(self.states):
            rows = [k for k, e in enumerate(events) if e.type == etype]
            ok = self._holds(props, [events[k] for k in rows])
            for k, holds in zip(rows, ok, strict=True):
                if holds:
                    out[k].append(j)
        return out

    def _holds(self, props: list[expr.Expr], events: list[IntervalEvent]) -> list[bool]:
        if not props or not events:
            return [True] * len(events)

        def resolve(load: expr.Load) -> list[Any]:
            i = self.index[load.key]
            return [e.values[i] for e in events]

        try:
            return [bool(v) for v in conjunction(props, resolve, len(events))]
        except (GiveUp, KeyError):
            return [True] * len(events)
