"""Whether match windows may stand in front of a SASE+ query's engine (the
``match_windows`` option; match-window paper, sections 4.1-4.3).

With the option, the runtime feeds the engine only the events of *candidate* match
windows (:mod:`kleene.runtime.matchwindows`). That is exact when the matches a run
started at an event e finds depend only on the events within W after e that some state
may accept, of e's partition: a SEQ without negation under skip till next match or skip
till any match, with the ``all`` output (docs/architecture.md, "Match windows in front
of the SASE+ engines"). The compiler decides it here and records it in the plan;
:func:`refusal` says why not otherwise.
"""

from __future__ import annotations

from kleene.compiler.plan import Plan
from kleene.vocabulary import OutputFormat, Strategy

_SKIPS = (Strategy.SKIP_TILL_NEXT_MATCH, Strategy.SKIP_TILL_ANY_MATCH)


def refusal(plan: Plan) -> str | None:
    """Why match windows would change the matches of ``plan`` (None when they cannot)."""
    if plan.window is None:
        return "the query has no WITHIN clause, and a match window is WITHIN long"
    if plan.strategy not in _SKIPS:
        return (
            f"under {plan.strategy.value} an event left out breaks the adjacency of the "
            "others; use skip_till_next_match or skip_till_any_match"
        )
    if plan.negations:
        return (
            "a negated component needs every event of its type between its neighbours, "
            "which the windows' counts over positive variables do not see"
        )
    if plan.output is not OutputFormat.ALL:
        return f"the {plan.output.value} output depends on the matches of earlier windows"
    if plan.groups:
        return "a SEQ(...)+ group repeats its members, which the windows' counts do not follow"
    return None
