"""A text view of a compiled plan: states, edges and their formulas (SIGMOD 2008, Fig. 2)."""

from __future__ import annotations

from kleene.compiler.plan import Plan
from kleene.vocabulary import Strategy

_IGNORE = {
    Strategy.STRICT_CONTIGUITY: "False",
    Strategy.PARTITION_CONTIGUITY: "not (event in the run's partition)",
    Strategy.SKIP_TILL_NEXT_MATCH: "not ({edge})",
    Strategy.SKIP_TILL_ANY_MATCH: "True",
}


_WINDOWS = (
    "match windows: the engine sees only the events of windows of W per partition that "
    "meet the necessary match conditions (match-window paper, Theorems 1 and 2)",
)


def _conj(parts: tuple[str, ...]) -> str:
    return " and ".join(parts) if parts else "True"


def _routing(plan: Plan) -> str:
    if not plan.routed or plan.key is None:
        return ""
    if len(plan.key.attrs) == plan.partition_width:  # the key is the partition
        return " (runs indexed by key)"
    return f" (runs indexed by hash key {', '.join(plan.key.names)})"


def explain_plan(plan: Plan) -> str:
    lines = [
        f"strategy: {plan.strategy.value}",
        f"output: {plan.output.value}",
        f"window: {plan.window if plan.window is not None else 'none'}"
        + (" (seconds)" if plan.window_has_unit else ""),
        "partition key: "
        + (", ".join(plan.partition.names) if plan.partition else "none (one partition)")
        + _routing(plan),
        f"state vector V: [{', '.join(plan.layout.describe())}]",
        *(_WINDOWS if plan.match_windows else ()),
        "states:",
    ]
    window = "" if plan.window is None else " and within window"
    for s in plan.states:
        edge_name = "take" if s.kind == "rest" else "begin"
        formula = _conj((f"type = {s.event_type}", *s.property_text, *s.edge_text))
        lines.append(f"  [{s.index}] {s.name}  ({s.event_type})")
        target_name = "F" if s.then is None else f"[{s.then}]"
        lines.append(f"      {edge_name} -> {target_name}: {formula}{window}")
        if s.property_text:
            lines.append(f"          single-event properties: {_conj(s.property_text)}")
        if s.edge_text:
            lines.append(f"          relationships: {_conj(s.edge_text)}")
        if s.proceed is not None:
            nxt = "F (epsilon)" if s.exit is None else f"[{s.exit}] (peeking at its begin)"
            lines.append(f"      proceed -> {nxt}: {_conj(s.proceed_text)}")
        if s.index > 0 or s.kind == "rest":
            ignore = _IGNORE[plan.strategy].format(edge=formula)
            lines.append(f"      ignore: {ignore}{window}")
    for n in plan.negations:
        where = {
            (True, True): "between components",
            (False, True): "before the first component",
            (True, False): "after the last component (decided when the window closes)",
        }[(n.before is not None, n.after is not None)]
        for m in n.members:
            lines.append(f"  not {m.var} ({m.event_type}) {where}: {_conj(m.text)}")
            where = "then, after it"
    if plan.return_names:
        lines.append("return: " + ", ".join(plan.return_names))
    return "\n".join(lines)
