"""Which framework evaluates a query over interval events (VLDB 2010, sections 3-5).

``engine="points"``: the point-based framework (section 3); ``"events"``: the
event-based framework (section 4), by the method ``method`` names: ``"query"`` (the
query-order method with sorting, 4.1 and C.3), ``"any"`` (the any-state method, 4.2 and
C.2) or ``"selectivity"`` (selectivity order, 4.3: the any-state method over events
presented most selective component first, the selectivity of a component being the
number of events that matched it over the stream seen so far). ``method="auto"`` picks
sorting, the fastest in section 5.1 (Fig. 4(b)-(c)) and in this implementation's
measurements (docs/benchmarks.md, ``python -m bench.imprecise --figure 4b``).

``"auto"`` follows section 5.1's finding that the event-based framework outperforms
the point-based one, more so as δ and the pattern length grow (the point-based
framework has O(δ^l) runs), and this implementation's measurements (docs/benchmarks.md,
``python -m bench.imprecise``): it picks ``events`` unless

* the pattern has one component, or every event is a point (U_max = 0): there is
  nothing to gain, and the point-based framework is the simpler;
* skip till next match with U_max <= 2 (δ <= 1): both frameworks then spend their time
  on the confidence of equations (2)-(4) over the same point matches, and the
  point-based framework's NELT prunes runs before they complete.

A pattern with Kleene closure is evaluated by :mod:`kleene.imprecise.kleene_dp` (SASE++
section 4 and Algorithm 1), whatever the engine option.
"""

from __future__ import annotations

from dataclasses import dataclass

from kleene.compiler.plan import Plan
from kleene.imprecise.collapse import Threshold
from kleene.imprecise.events import METHODS, EventFramework, exclusive_components
from kleene.imprecise.framework import PointFramework
from kleene.imprecise.kleene_dp import KleeneFramework
from kleene.vocabulary import Strategy

ENGINES = ("auto", "points", "events")
METHOD_OPTIONS = ("auto", *METHODS)
SMALL_U_MAX = 2  # skip till next match at or below this: points


@dataclass(frozen=True)
class Choice:
    """The framework and method chosen, and why."""

    engine: str  # "points", "events" or "kleene"
    method: str | None  # the event-based method: "query", "any" or "selectivity"
    reason: str

    def describe(self) -> str:
        if self.engine == "kleene":
            what = "kleene (Kleene closure over intervals, SASE++ section 4 and Algorithm 1)"
        elif self.engine == "points":
            what = "points (the point-based framework of VLDB 2010, section 3)"
        elif self.method == "query":
            what = (
                "events (the event-based framework of VLDB 2010, section 4: query-order "
                "method with sorting, 4.1 and C.3)"
            )
        elif self.method == "selectivity":
            what = (
                "events (the event-based framework of VLDB 2010, section 4: any-state "
                "method in selectivity order, 4.3; a component's selectivity is the number "
                "of events that matched it over the stream seen so far, fewest first)"
            )
        else:
            what = "events (the event-based framework of VLDB 2010, section 4: any-state method)"
        return f"{what}: {self.reason}"


def choose(plan: Plan, engine: str, u_max: int | None, method: str = "auto") -> Choice:
    """The framework for ``plan``; ``u_max`` None when not yet known (measured later)."""
    length = len(plan.states)
    if plan.kleene_vars:
        return Choice("kleene", None, "the pattern has Kleene closure")
    if engine == "points":
        return Choice("points", None, "asked for")
    order = _order(plan, method)
    if engine == "events" or method != "auto":  # a method names an event-based one
        return Choice("events", "query" if method == "auto" else method, f"asked for; {order}")
    method = "query"
    if length == 1:
        return Choice("points", None, "auto: a pattern of one component gains nothing")
    if u_max == 0:
        return Choice("points", None, "auto: every event is a point (U_max = 0)")
    next_match = plan.strategy is Strategy.SKIP_TILL_NEXT_MATCH
    if next_match and u_max is not None and u_max <= SMALL_U_MAX:
        return Choice(
            "points",
            None,
            f"auto: skip till next match with small intervals (U_max = {u_max} <= "
            f"{SMALL_U_MAX}): the NELT of the point-based framework prunes runs early",
        )
    size = "U_max measured over the input" if u_max is None else f"U_max = {u_max}"
    return Choice(
        "events",
        method,
        f"auto: {size}, pattern length {length}: the event-based framework does not "
        f"enumerate points (section 5.1); {order}",
    )


def _order(plan: Plan, method: str) -> str:
    if method != "auto":
        return f"method {method!r} asked for"
    if exclusive_components(plan):
        return "each event matches one component at most, sorted into query order"
    return (
        "events of a type several components use are sorted into query order once per "
        "component (sorting beats any-state and selectivity order, docs/benchmarks.md)"
    )


def framework(
    plan: Plan,
    choice: Choice,
    window: float | None,
    u_max: int,
    keep: Threshold,
    max_runs: int | None = None,
) -> PointFramework | EventFramework | KleeneFramework:
    """The chosen framework, ready for admitted events; ``max_runs`` bounds its partial
    state (:mod:`kleene.imprecise.budget`), None for no limit."""
    if choice.engine == "kleene":
        return KleeneFramework(plan, window, keep, max_runs=max_runs)
    if choice.engine == "points":
        return PointFramework(plan, window, u_max, keep, max_runs=max_runs)
    return EventFramework(plan, window, u_max, keep, choice.method or "any", max_runs=max_runs)
