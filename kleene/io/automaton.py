"""A picture of a query's NFA^b automaton (SIGMOD 2008, section 3.1), drawn with matplotlib.

The states stand in a row, left to right, as the compiler lays them out: one state per
single variable, two (``v[1]`` and ``v[i]``) per Kleene variable, then the final state F;
each state shows the event type it reads. Edges are labelled with their kind and formula
(shortened): **begin** edges move right and consume an event, the **take** edge of
``v[i]`` loops on it, the **proceed** edge of ``v[i]`` moves right without consuming, and
**ignore** loops (dotted) skip an event as the strategy allows. A group ``SEQ(B b, C c)+``
(SIGMOD 2014, section 2.1) has the take edge of its last member's state lead back to the
first member's (drawn below the row), and its proceed edge leaves from that first loop
state. A negated component ``~(T n)`` (SIGMOD 2008, section 2) is a red box above the
begin edge where it is checked (the begin edge of the next positive component's first
state), or above F when it ends the pattern and is decided when the window closes. The
strategy, the window, the partition key and the output form are written under the row.
The picture is made of circles, arrows and text only, so it needs no Graphviz.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kleene.io.writers import replacing
from kleene.lang import ast

_IGNORE_TEXT = {
    ast.Strategy.STRICT_CONTIGUITY: "",
    ast.Strategy.PARTITION_CONTIGUITY: "not in partition",
    ast.Strategy.SKIP_TILL_NEXT_MATCH: "not (begin/take)",
    ast.Strategy.SKIP_TILL_ANY_MATCH: "true",
}


@dataclass(frozen=True)
class Edge:
    """``kind`` is begin, take, proceed or ignore; ``source`` and ``target`` are state
    indices (F is the last one); ``label`` is the formula text, possibly empty."""

    kind: str
    source: int
    target: int
    label: str


@dataclass(frozen=True)
class NegationMark:
    """A negated component (or each member of a negated sequence), checked on the begin
    edge leaving state ``state``; ``state`` is F's index when it ends the pattern."""

    label: str
    state: int


@dataclass(frozen=True)
class Diagram:
    """States (their names, F last), their event types (F's is empty), edges, negated
    components and notes (strategy, window, partition key, output) of an automaton."""

    states: tuple[str, ...]
    edges: tuple[Edge, ...]
    title: str = ""
    types: tuple[str, ...] = ()
    negations: tuple[NegationMark, ...] = ()
    notes: tuple[str, ...] = ()


def diagram_from_states(
    states: Sequence[tuple[str, str, Sequence[str], Sequence[str]]],
    strategy: ast.Strategy,
    title: str = "",
    links: Sequence[tuple[int | None, int | None, bool]] | None = None,
) -> Diagram:
    """A diagram from ``(name, kind, edge formulas, proceed formulas)`` per state, where
    kind is "single", "first" or "rest" as in the compiled plan. ``links`` gives each
    state's ``(then, exit, proceeds)`` as in the plan (None: F), for the loops of a
    group ``SEQ(...)+`` (SIGMOD 2014, 2.1); without it, successors are by position."""
    names = [s[0] for s in states] + ["F"]
    final = len(states)
    edges: list[Edge] = []
    ignore = _IGNORE_TEXT[strategy]
    for index, (_name, kind, formulas, proceed) in enumerate(states):
        text = " ∧ ".join(formulas)
        then, exit_, proceeds = (
            links[index] if links else (index if kind == "rest" else index + 1, index + 1, True)
        )
        then = final if then is None else then
        if kind == "rest":
            edges.append(Edge("take", index, then, text))
            if proceeds:
                target = final if exit_ is None else exit_
                edges.append(Edge("proceed", index, target, " ∧ ".join(proceed)))
        else:
            edges.append(Edge("begin", index, then, text))
        if index > 0 and strategy is not ast.Strategy.STRICT_CONTIGUITY:
            edges.append(Edge("ignore", index, index, ignore))
    return Diagram(tuple(names), tuple(edges), title)


def diagram_from_query(
    query: Any, strategy: ast.Strategy | None = None, *, title: str = ""
) -> Diagram:
    """The diagram of a compiled query when it exposes its plan (``plan.states``), else
    one laid out from the AST (``ast.Query``) without edge formulas. ``title`` goes
    before the automaton's own (its strategy)."""
    plan = getattr(query, "plan", None) or getattr(query, "_plan", None)
    if plan is not None and hasattr(plan, "states"):
        states = [
            (
                s.name,
                s.kind,
                (*getattr(s, "property_text", ()), *s.edge_text),
                tuple(s.proceed_text),
            )
            for s in plan.states
        ]
        links = [(s.then, s.exit, s.proceed is not None) for s in plan.states]
        chosen = strategy or plan.strategy
        base = diagram_from_states(states, chosen, _title(chosen, title), links)
        first_state = _first_states([s.component for s in plan.states])
        marks = [
            NegationMark(
                _negation_label(m.var, m.event_type, m.text, k),
                len(plan.states) if n.after is None else first_state[n.after],
            )
            for n in plan.negations
            for k, m in enumerate(n.members)
        ]
        return Diagram(
            base.states,
            base.edges,
            base.title,
            (*(s.event_type for s in plan.states), ""),
            tuple(marks),
            _plan_notes(plan, chosen),
        )
    tree = query if isinstance(query, ast.Query) else getattr(query, "ast", None)
    if not isinstance(tree, ast.Query):
        raise TypeError("cannot find the automaton of this query")
    chosen = strategy or tree.strategy or ast.DEFAULT_STRATEGY
    rows = _states_of(tree)
    base = diagram_from_states([r[:4] for r in rows], chosen, _title(chosen, title))
    first_state = _first_states([r[4] for r in rows])
    return Diagram(
        base.states,
        base.edges,
        base.title,
        (*(r[2][0] for r in rows), ""),
        tuple(_ast_negations(tree, first_state, len(rows))),
        (f"strategy: {chosen.value}",),
    )


def _first_states(components: Sequence[int]) -> dict[int, int]:
    """The first state of each positive component."""
    first: dict[int, int] = {}
    for index, component in enumerate(components):
        first.setdefault(component, index)
    return first


def _negation_label(var: str, event_type: str, text: Sequence[str], member: int) -> str:
    head = f"{'then ' if member else ''}no {event_type} {var}"
    return head + (f": {' ∧ '.join(text)}" if text else "")


def _plan_notes(plan: Any, strategy: ast.Strategy) -> tuple[str, ...]:
    window = "none" if plan.window is None else f"{plan.window:g}"
    if plan.window is not None and plan.window_has_unit:
        window += " seconds"
    key = "none (one partition)"
    if plan.key is not None:
        key = "[" + ", ".join(plan.key.names) + "]"
        key += " (runs indexed by key)" if plan.routed else ""
    notes = [
        f"strategy: {strategy.value}",
        f"window: {window}",
        f"partition key: {key}",
        f"output: {plan.output.value}",
    ]
    if plan.return_names:
        notes.append("return: " + ", ".join(plan.return_names))
    return tuple(notes)


def _ast_negations(tree: ast.Query, first_state: dict[int, int], final: int) -> list[NegationMark]:
    marks: list[NegationMark] = []
    positive_seen = 0
    pending: list[ast.Component] = []
    for comp in tree.pattern.components:
        if comp.negated:
            pending.append(comp)
            continue
        marks += _pending_marks(pending, first_state[positive_seen])
        pending = []
        positive_seen += 1
    return marks + _pending_marks(pending, final)


def _pending_marks(pending: list[ast.Component], state: int) -> list[NegationMark]:
    marks: list[NegationMark] = []
    previous_group: int | None = None
    for comp in pending:
        member = 1 if comp.group is not None and comp.group == previous_group else 0
        marks.append(NegationMark(_negation_label(comp.var, comp.event_type, (), member), state))
        previous_group = comp.group
    return marks


def _states_of(
    tree: ast.Query,
) -> list[tuple[str, str, tuple[str, ...], tuple[str, ...], int]]:
    out: list[tuple[str, str, tuple[str, ...], tuple[str, ...], int]] = []
    for number, comp in enumerate(tree.pattern.positive):
        if comp.kleene:
            out.append((f"{comp.var}[1]", "first", (comp.event_type,), (), number))
            out.append((f"{comp.var}[i]", "rest", (comp.event_type,), (), number))
        else:
            out.append((comp.var, "single", (comp.event_type,), (), number))
    return out


def _title(strategy: ast.Strategy, title: str = "") -> str:
    own = f"NFA^b ({strategy.value.replace('_', '-')})"
    return f"{title}: {own}" if title else own


_COLORS = {"begin": "#1f5fa8", "take": "#2a8a3a", "proceed": "#c0392b", "ignore": "#7f7f7f"}


def draw_png(diagram: Diagram, path: str | Path, *, dpi: int = 120) -> Path:
    """Draw ``diagram`` to a PNG file and return its path."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle

    count = len(diagram.states)
    gap, radius = 3.2, 0.45
    width = max(6.0, gap * (count - 1) + 3.0)
    top = 2.4 + 0.45 * _negation_rows(diagram)
    bottom = -2.2 - 0.28 * len(diagram.notes)
    fig, axes = plt.subplots(figsize=(width, top - bottom))
    axes.set_xlim(-1.5, gap * (count - 1) + 1.5)
    axes.set_ylim(bottom, top)
    axes.set_aspect("equal")
    axes.axis("off")
    if diagram.title:
        axes.set_title(diagram.title, fontsize=11)

    for index, name in enumerate(diagram.states):
        x = gap * index
        final = index == count - 1
        axes.add_patch(Circle((x, 0), radius, fill=False, linewidth=1.6))
        if final:
            axes.add_patch(Circle((x, 0), radius * 0.8, fill=False, linewidth=1.2))
        kind = diagram.types[index] if index < len(diagram.types) else ""
        if kind:
            axes.text(x, 0.1, name, ha="center", va="center", fontsize=10)
            axes.text(
                x, -0.18, _shorten(kind, 9), ha="center", va="center", fontsize=6.5, color="#555"
            )
        else:
            axes.text(x, 0, name, ha="center", va="center", fontsize=10)
    axes.annotate(
        "",
        xy=(-radius, 0),
        xytext=(-radius - 0.9, 0),
        arrowprops={"arrowstyle": "->", "linewidth": 1.4},
    )

    loops_drawn: dict[int, int] = {}
    for edge in diagram.edges:
        _draw_edge(axes, edge, gap, radius, loops_drawn)

    _draw_negations(axes, diagram, gap, radius)
    for row, note in enumerate(diagram.notes):
        axes.text(-1.4, -2.3 - 0.28 * row, _shorten(note, 120), ha="left", va="center", fontsize=8)

    path = Path(path)
    with replacing(path) as partial:
        fig.savefig(partial, dpi=dpi, bbox_inches="tight", format="png")
    plt.close(fig)
    return path


def _draw_edge(
    axes: Any, edge: Edge, gap: float, radius: float, loops_drawn: dict[int, int]
) -> None:
    """One edge with its label: forward, a self loop (take, ignore), or for a group
    ``SEQ(...)+`` the loop back and the proceed edge that passes it."""
    color = _COLORS.get(edge.kind, "black")
    label = edge.kind if not edge.label else f"{edge.kind}: {_shorten(edge.label)}"
    x0, x1 = gap * edge.source, gap * edge.target
    middle = (x0 + x1) / 2
    style: dict[str, Any]
    text: dict[str, Any]
    if edge.source > edge.target:  # the loop of a group SEQ(...)+, drawn below
        ends = (x0, -radius), (x1, -radius)
        _arrow(axes, ends, color, label, (middle, -1.6), 1.2, connectionstyle="arc3,rad=-0.35")
    elif edge.target > edge.source + 1:  # a group's proceed edge passes its loop below
        ends = (x0 + radius * 0.7, -radius * 0.7), (x1 - radius * 0.7, -radius * 0.7)
        style = {"connectionstyle": "arc3,rad=0.3", "linestyle": "--"}
        _arrow(axes, ends, color, label, (middle, -1.95), 1.4, **style)
    elif edge.source != edge.target:
        ends = (x0 + radius, 0), (x1 - radius, 0)
        y = 0.18 if edge.kind != "proceed" else -0.25
        text = {"va": "bottom" if y > 0 else "top", "wrap": True}
        style = {"linestyle": "--" if edge.kind == "proceed" else "-"}
        _arrow(axes, ends, color, label, (middle, y), 1.4, text=text, **style)
    else:
        slot = loops_drawn.get(edge.source, 0)
        loops_drawn[edge.source] = slot + 1
        sign = 1 if slot == 0 else -1  # the first loop above the state, the next below
        ends = (x0 - 0.25, sign * radius), (x0 + 0.25, sign * radius)
        style = {
            "connectionstyle": f"arc3,rad={-1.9 * sign}",
            "linestyle": ":" if edge.kind == "ignore" else "-",
            "mutation_scale": 12,
        }
        text = {"va": "bottom" if slot == 0 else "top"}
        _arrow(axes, ends, color, label, (x0, sign * (radius + 0.75)), 1.2, text=text, **style)


def _arrow(
    axes: Any,
    ends: tuple[tuple[float, float], tuple[float, float]],
    color: str,
    label: str,
    at: tuple[float, float],
    width: float,
    *,
    text: dict[str, Any] | None = None,
    **style: Any,
) -> None:
    """An arrow between ``ends`` and its label centred at ``at``."""
    from matplotlib.patches import FancyArrowPatch

    style.setdefault("mutation_scale", 14)
    axes.add_patch(FancyArrowPatch(*ends, arrowstyle="-|>", color=color, linewidth=width, **style))
    axes.text(*at, label, ha="center", fontsize=7.5, color=color, **(text or {}))


_NEGATION_COLOR = "#b00020"


def _negation_rows(diagram: Diagram) -> int:
    """How many boxes stand above the busiest state (negated components stack)."""
    per_state: dict[int, int] = {}
    for mark in diagram.negations:
        per_state[mark.state] = per_state.get(mark.state, 0) + 1
    return max(per_state.values(), default=0)


def _draw_negations(axes: Any, diagram: Diagram, gap: float, radius: float) -> None:
    """Each negated component as a red box above where it is checked, with an arrow to
    that begin edge (or to F, for a negation at the end of the pattern)."""
    final = len(diagram.states) - 1
    stacked: dict[int, int] = {}
    for mark in diagram.negations:
        row = stacked.get(mark.state, 0)
        stacked[mark.state] = row + 1
        if mark.state == final:
            x, y, aim = gap * final, radius, "checked when the window closes"
        else:
            x, y, aim = gap * mark.state + gap / 2, 0.05, "checked on this begin edge"
        box_y = 2.25 + 0.45 * row
        axes.annotate(
            f"{_shorten(mark.label, 52)}\n({aim})",
            xy=(x, y),
            xytext=(x, box_y),
            ha="center",
            va="center",
            fontsize=7,
            color=_NEGATION_COLOR,
            bbox={"boxstyle": "round,pad=0.25", "fc": "#fdecee", "ec": _NEGATION_COLOR},
            arrowprops={"arrowstyle": "->", "color": _NEGATION_COLOR, "linewidth": 0.9}
            if row == 0
            else None,
        )


def _shorten(text: str, limit: int = 46) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
