"""Which events a query provably ignores, for filters placed before the engine.

The rule is the prefilter's (:mod:`kleene.runtime.prefilter`; match-windows paper,
section 4.2, Theorem 1): an event no state can accept — its type has no state, or it
fails some single-event property of every state of its type — can never be selected.
Under the skip-till strategies (SIGMOD 2008, section 2) such an event is skipped and
leaves no trace, so a reader of the input (Spark's scan) may drop it. Under strict and
partition contiguity it still ends runs, so nothing may be dropped. Events of negated
types are always kept: a negation looks at them whatever the states say.

This module states the fact about the query; a backend turns :attr:`Pushdown.states`
into its own filter and keeps, besides, every event the engine would reject (missing
type, time or attribute, values of the wrong kind, late), so rejected-event output is
unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from kleene.compiler import expr
from kleene.compiler.plan import Plan, State
from kleene.vocabulary import Strategy

SKIP_TILL = (Strategy.SKIP_TILL_NEXT_MATCH, Strategy.SKIP_TILL_ANY_MATCH)


@dataclass(frozen=True)
class Pushdown:
    """What a reader may drop. ``states`` maps each droppable event type to the
    single-event properties (IR conjuncts) of each of its states: an event of that type
    may go when, for every state, some conjunct does not hold. Events of ``kept`` types
    always stay; events of a type outside ``types`` may go."""

    states: dict[str, tuple[tuple[expr.Expr, ...], ...]]
    kept: frozenset[str]
    types: frozenset[str]
    required: dict[str, tuple[str, ...]]  # event type -> attributes its events must carry
    kind_groups: dict[tuple[str, str], int]  # (type, attribute) -> group of same-kind values
    group_kinds: dict[int, str]  # group -> the kind the query demands, where it does


def state_properties(state: State) -> tuple[expr.Expr, ...]:
    """A state's single-event properties, as the compiler lowered them (they read the
    event at hand only)."""
    return tuple(ir for ir in state.properties if expr.reads_only(ir, expr.EVENT))


def pushdown(plan: Plan) -> Pushdown | None:
    """What a reader of this query's input may drop, or None when nothing may go."""
    if plan.strategy not in SKIP_TILL:
        return None
    negated = frozenset(t for n in plan.negations for t in n.event_types)
    by_type: dict[str, list[tuple[expr.Expr, ...]]] = {}
    for state in plan.states:
        by_type.setdefault(state.event_type, []).append(state_properties(state))
    kept = negated | {t for t, props in by_type.items() if not all(props)}
    states = {t: tuple(props) for t, props in by_type.items() if t not in kept}
    types = frozenset(by_type) | negated
    required, groups, kinds = dict(plan.required), dict(plan.kind_groups), dict(plan.group_kinds)
    return Pushdown(states, kept, types, required, groups, kinds)
