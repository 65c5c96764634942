"""A picture of a query's NFA^b automaton (SIGMOD 2008, section 3.1), drawn with matplotlib.

The states stand in a row, left to right, as the compiler lays them out: one state per
single variable, two (``v[1]`` and ``v[i]``) per Kleene variable, then the final state F.
Edges are labelled with their kind and formula: **begin** edges move right and consume an
event, the **take** edge of ``v[i]`` loops on it, the **proceed** edge of ``v[i]`` moves
right without consuming, and **ignore** loops (dashed) skip an event as the strategy
allows. A group ``SEQ(B b, C c)+`` (SIGMOD 2014, section 2.1) has the take edge of its
last member's state lead back to the first member's (drawn below the row), and its
proceed edge leaves from that first loop state. The picture is made of circles, arrows
and text only, so it needs no Graphviz.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
class Diagram:
    """States (their names, F last) and edges of an automaton, ready to draw."""

    states: tuple[str, ...]
    edges: tuple[Edge, ...]
    title: str = ""


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


def diagram_from_query(query: Any, strategy: ast.Strategy | None = None) -> Diagram:
    """The diagram of a compiled query when it exposes its plan (``plan.states``), else
    one laid out from the AST (``ast.Query``) without edge formulas."""
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
        return diagram_from_states(states, strategy or plan.strategy, _title(plan.strategy), links)
    tree = query if isinstance(query, ast.Query) else getattr(query, "ast", None)
    if not isinstance(tree, ast.Query):
        raise TypeError("cannot find the automaton of this query")
    chosen = strategy or tree.strategy or ast.DEFAULT_STRATEGY
    return diagram_from_states(_states_of(tree), chosen, _title(chosen))


def _states_of(tree: ast.Query) -> list[tuple[str, str, tuple[str, ...], tuple[str, ...]]]:
    out: list[tuple[str, str, tuple[str, ...], tuple[str, ...]]] = []
    for comp in tree.pattern.positive:
        if comp.kleene:
            out.append((f"{comp.var}[1]", "first", (comp.event_type,), ()))
            out.append((f"{comp.var}[i]", "rest", (comp.event_type,), ()))
        else:
            out.append((comp.var, "single", (comp.event_type,), ()))
    return out


def _title(strategy: ast.Strategy) -> str:
    return f"NFA^b ({strategy.value.replace('_', '-')})"


_COLORS = {"begin": "#1f5fa8", "take": "#2a8a3a", "proceed": "#c0392b", "ignore": "#7f7f7f"}


def draw_png(diagram: Diagram, path: str | Path, *, dpi: int = 120) -> Path:
    """Draw ``diagram`` to a PNG file and return its path."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt
    from matplotlib.patches import Circle, FancyArrowPatch

    count = len(diagram.states)
    gap, radius = 3.2, 0.45
    width = max(6.0, gap * (count - 1) + 3.0)
    fig, axes = plt.subplots(figsize=(width, 4.2))
    axes.set_xlim(-1.5, gap * (count - 1) + 1.5)
    axes.set_ylim(-2.1, 2.4)
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
        axes.text(x, 0, name, ha="center", va="center", fontsize=10)
    axes.annotate(
        "",
        xy=(-radius, 0),
        xytext=(-radius - 0.9, 0),
        arrowprops={"arrowstyle": "->", "linewidth": 1.4},
    )

    loops_drawn: dict[int, int] = {}
    for edge in diagram.edges:
        color = _COLORS.get(edge.kind, "black")
        label = edge.kind if not edge.label else f"{edge.kind}: {_shorten(edge.label)}"
        x0, x1 = gap * edge.source, gap * edge.target
        if edge.source > edge.target:  # the loop of a group SEQ(...)+, drawn below
            back = FancyArrowPatch(
                (x0, -radius),
                (x1, -radius),
                connectionstyle="arc3,rad=-0.35",
                arrowstyle="-|>",
                mutation_scale=14,
                color=color,
                linewidth=1.2,
            )
            axes.add_patch(back)
            axes.text((x0 + x1) / 2, -1.6, label, ha="center", fontsize=7.5, color=color)
            continue
        if edge.target > edge.source + 1:  # a group's proceed edge passes its loop below
            skip = FancyArrowPatch(
                (x0 + radius * 0.7, -radius * 0.7),
                (x1 - radius * 0.7, -radius * 0.7),
                connectionstyle="arc3,rad=0.3",
                arrowstyle="-|>",
                mutation_scale=14,
                color=color,
                linewidth=1.4,
                linestyle="--",
            )
            axes.add_patch(skip)
            axes.text((x0 + x1) / 2, -1.95, label, ha="center", fontsize=7.5, color=color)
            continue
        if edge.source != edge.target:
            forward = FancyArrowPatch(
                (x0 + radius, 0),
                (x1 - radius, 0),
                arrowstyle="-|>",
                mutation_scale=14,
                color=color,
                linewidth=1.4,
                linestyle="--" if edge.kind == "proceed" else "-",
            )
            axes.add_patch(forward)
            y = 0.18 if edge.kind != "proceed" else -0.25
            axes.text(
                (x0 + x1) / 2,
                y,
                label,
                ha="center",
                va="bottom" if y > 0 else "top",
                fontsize=7.5,
                color=color,
                wrap=True,
            )
            continue
        slot = loops_drawn.get(edge.source, 0)
        loops_drawn[edge.source] = slot + 1
        above = slot == 0
        sign = 1 if above else -1
        loop = FancyArrowPatch(
            (x0 - 0.25, sign * radius),
            (x0 + 0.25, sign * radius),
            connectionstyle=f"arc3,rad={-1.9 * sign}",
            arrowstyle="-|>",
            mutation_scale=12,
            color=color,
            linewidth=1.2,
            linestyle=":" if edge.kind == "ignore" else "-",
        )
        axes.add_patch(loop)
        axes.text(
            x0,
            sign * (radius + 0.75),
            label,
            ha="center",
            va="bottom" if above else "top",
            fontsize=7.5,
            color=color,
        )

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return path


def _shorten(text: str, limit: int = 46) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
