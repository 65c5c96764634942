"""Drawing a TPStream pattern on a time line (``kleene explain --png``): one row per
situation symbol with an example interval (:func:`kleene.tpstream.timeline.example`),
and per constraint an arrow between the two symbols' intervals labelled with the
relation that holds in the example and its alternatives."""

from __future__ import annotations

from pathlib import Path

from kleene.tpstream.matcher import default_order
from kleene.tpstream.model import TemporalPattern
from kleene.tpstream.query import TemporalQuery
from kleene.tpstream.timeline import example, relation_shown


def draw_timeline(query: TemporalQuery, path: str | Path, *, title: str = "") -> Path:
    """Draw ``query``'s pattern to a PNG file and return its path; raises
    :class:`kleene.tpstream.timeline.Unsatisfiable` when no configuration exists."""
    plan = query.plan
    pattern = TemporalPattern(plan.symbol_names, plan.constraints, 0)
    placed = example(pattern, default_order(pattern))
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    rows = {s: len(pattern.symbols) - 1 - k for k, s in enumerate(pattern.symbols)}
    right = max(p.end for p in placed.values())
    fig, axes = plt.subplots(figsize=(max(6.0, 1.1 * right + 3), 1.0 + 0.9 * len(rows)))
    for s, p in placed.items():
        axes.barh(rows[s], p.end - p.start, left=p.start, height=0.36, color="#9cc3e6")
        axes.text(p.start, rows[s] + 0.26, f"[{p.start}, {p.end})", fontsize=8)
    for k, c in enumerate(pattern.constraints):
        a, b = placed[c.left], placed[c.right]
        shown = relation_shown(c, placed)
        others = sorted(r.value for r in c.relations if r is not shown)
        label = f"{c.left} {shown.value} {c.right}" + (
            f" (or {', '.join(others)})" if others else ""
        )
        xa, xb = (a.start + a.end) / 2, (b.start + b.end) / 2
        axes.annotate(
            "",
            xy=(xb, rows[c.right]),
            xytext=(xa, rows[c.left]),
            arrowprops={"arrowstyle": "->", "connectionstyle": f"arc3,rad={0.25 + 0.1 * k}"},
        )
        axes.text((xa + xb) / 2 + 0.2, (rows[c.left] + rows[c.right]) / 2, label, fontsize=8)
    definitions = {s.name: s.text for s in plan.symbols}
    axes.set_yticks([rows[s] for s in pattern.symbols])
    axes.set_yticklabels([f"{s}: {definitions[s]}" for s in pattern.symbols], fontsize=8)
    axes.set_xlim(-0.5, right + 4)
    axes.set_ylim(-0.8, len(rows) - 0.2)
    axes.set_xlabel(f"time (example endpoints; {plan.window.text})", fontsize=8)
    axes.set_title(title or "temporal pattern", fontsize=10)
    fig.tight_layout()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
