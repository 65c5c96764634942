"""TPStream (EDBT 2018, section 6): the shapes of Figures 5-8, scaled down.

One subcommand per figure; each prints a table, saves a plot under ``docs/img/`` and the
rows as JSON under ``bench/results/``. Every run is a real ``kleene.compile("FROM ...")``
query over a table of ``kleene.datagen`` events; throughput is events per CPU second of
``Query.run`` (admission, deriver, matcher, RETURN), the fastest of ``--repeat`` runs.
The paper ran 1M-300M events in Java; these runs use 10^4-10^5 events so that each figure
takes a few minutes on 2 shared cores. ::

    python -m bench.tpstream drivers    # Figure 5 a/b: aggressive drivers, full and simplified
    python -m bench.tpstream window     # Figure 5 c: A before B overlaps C, window 500-100,000
    python -m bench.tpstream patterns   # Figure 6: Equal/Meets/Chain/Star/Combined, 4-10 streams
    python -m bench.tpstream latency    # Figure 7 a: application-time latency gain per relation
    python -m bench.tpstream plans      # Figure 8 a: every fixed order of Q1-Q3 vs the optimizer's
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import kleene
from bench._common import RESULTS, machine, table
from kleene.datagen import cars, situations
from kleene.tpstream.adaptive import AdaptivePlanner
from kleene.tpstream.model import Allen

IMG = Path(__file__).parent.parent / "docs" / "img"

DRIVERS_FULL = """FROM CarSensors CS PARTITION BY CS.car_id
DEFINE A AS CS.accel > 8 AT LEAST 5,
       B AS CS.speed > 70 BETWEEN 4 AND 30,
       C AS CS.accel < -9 AT LEAST 3
PATTERN A meets B; A overlaps B; A starts B; A during B
    AND C during B; B finishes C; B overlaps C; B meets C
    AND A before C
WITHIN 300
RETURN first(B.car_id) AS id, avg(B.speed) AS avg_speed"""

# Section 6.2.1: SASE+ has no alternatives, so a version with meets/overlaps only.
DRIVERS_SIMPLE = """FROM CarSensors CS PARTITION BY CS.car_id
DEFINE A AS CS.accel > 8, B AS CS.speed > 70, C AS CS.accel < -9
PATTERN A overlaps B AND B overlaps C AND A before C
WITHIN 300
RETURN first(B.car_id) AS id, avg(B.speed) AS avg_speed"""


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The fastest CPU time of ``repeat`` calls, and the last call's result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        began = time.process_time()
        out = fn()
        best = min(best, time.process_time() - began)
    return best, out


def situation_query(names: Sequence[str], relations: Sequence[str], window: int) -> str:
    """A TPStream query over boolean attributes ``names`` (one situation each)."""
    define = ", ".join(f"{n} AS S.{n}" for n in names)
    return f"FROM Synthetic S DEFINE {define} PATTERN {' AND '.join(relations)} WITHIN {window}"


# --- Figure 5 a/b -------------------------------------------------------------------------


def fig_drivers(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    full = kleene.compile(DRIVERS_FULL)
    simple = kleene.compile(DRIVERS_SIMPLE)
    for n_cars in args.cars:
        data = cars.generate(n_cars, duration=args.duration, seed=1, aggressive=0.2, episodes=20)
        for name, q in (("full (Listing 1)", full), ("simplified", simple)):
            cpu, matches = timed(lambda q=q, data=data: q.run(data), args.repeat)
            rows.append(
                {
                    "query": name,
                    "events": data.num_rows,
                    "matches": len(matches),
                    "cpu_s": cpu,
                    "events_per_s": data.num_rows / cpu,
                }
            )
        _lines(rows, "events", "cpu_s", "query", "Aggressive drivers (Fig. 5 a/b)", "drivers")
    return rows


# --- Figure 5 c ---------------------------------------------------------------------------


def fig_window(args: argparse.Namespace) -> list[dict[str, Any]]:
    data = situations.generate(args.events, names=("A", "B", "C"), seed=2)
    rows = []
    for window in args.windows:
        q = kleene.compile(situation_query("ABC", ["A before B", "B overlaps C"], window))
        cpu, matches = timed(lambda q=q, data=data: q.run(data), args.repeat)
        rows.append(
            {
                "window": window,
                "events": data.num_rows,
                "matches": len(matches),
                "cpu_s": cpu,
                "events_per_s": data.num_rows / cpu,
            }
        )
    _lines(rows, "window", "cpu_s", None, "A before B overlaps C (Fig. 5 c)", "window", log=True)
    return rows


# --- Figure 6 -----------------------------------------------------------------------------

RELATIONS = [a.value for a in Allen]


def shape(kind: str, names: Sequence[str], rng: random.Random) -> list[str]:
    """Section 6.2.3's query patterns over ``names``."""
    n = len(names)
    pick = {"Equal": lambda: "equals", "Meets": lambda: "meets"}.get(
        kind, lambda: rng.choice(RELATIONS)
    )
    chain = [f"{names[i]} {pick()} {names[i + 1]}" for i in range(n - 1)]
    star = [f"{names[0]} {pick()} {names[i]}" for i in range(1, n)]
    if kind in ("Equal", "Meets", "Chain"):
        return chain
    if kind == "Star":
        return star
    half = n // 2  # Combined: a chain over the first half, a star from its last over the rest
    return chain[: half - 1] + [f"{names[half - 1]} {pick()} {names[i]}" for i in range(half, n)]


def fig_patterns(args: argparse.Namespace) -> list[dict[str, Any]]:
    rng = random.Random(3)
    rows = []
    for n in args.streams:
        names = tuple(f"S{i + 1}" for i in range(n))
        data = situations.generate(args.events, names=names, seed=n)
        for kind in ("Equal", "Meets", "Chain", "Star", "Combined"):
            for instance in range(args.instances if kind not in ("Equal", "Meets") else 1):
                q = kleene.compile(situation_query(names, shape(kind, names, rng), args.window))
                cpu, matches = timed(lambda q=q, data=data: q.run(data), args.repeat)
                rows.append(
                    {
                        "pattern": kind,
                        "streams": n,
                        "instance": instance,
                        "matches": len(matches),
                        "cpu_s": cpu,
                    }
                )
        print(f"{n} streams done", flush=True)
    _boxes(rows, "patterns")
    return rows


# --- Figure 7 a ---------------------------------------------------------------------------

GAINFUL = [r for r in RELATIONS if r not in ("equals", "finishes", "finished-by")]


def fig_latency(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    for label, hold_b in (("2:1", (5, 50)), ("1:1", (10, 100)), ("1:2", (20, 200))):
        data = situations.generate(
            args.events, names=("A", "B"), seed=4, holds={"A": (10, 100), "B": hold_b}
        )
        for rel in args.relations:
            text = situation_query("AB", [f"A {rel} B"], 1000)
            early = kleene.compile(text, low_latency=True).run(data)
            late = kleene.compile(text, low_latency=False).run(data)
            at_end = {_key(m): m.detected for m in late}
            # a situation the end of the stream cuts off is never derived (it has no end),
            # so only low latency reports the matches it is in; all others must agree
            cut = [m for m in early if _key(m) not in at_end]
            if len(early) - len(cut) != len(at_end) or any(
                _unexplained(m, args.events) for m in cut
            ):
                raise SystemExit(f"low latency changed the matches of A {rel} B")
            gains = [at_end[_key(m)] - m.detected for m in early if _key(m) in at_end]
            rows.append(
                {
                    "ratio A:B": label,
                    "relation": rel,
                    "matches": len(early),
                    "mean gain": statistics.fmean(gains) if gains else 0.0,
                    "max gain": max(gains, default=0),
                }
            )
    _bars(
        rows, "relation", "ratio A:B", "mean gain", "application-time gain (time units)", "latency"
    )
    return rows


def _unexplained(m: Any, events: int) -> bool:
    """False when ``m`` should have been found at its last end: all its situations
    started more than 200 time units (two longest situations) before the stream ends."""
    return not any(s.start >= events - 200 for s in m.situations.values())


def _key(m: Any) -> tuple[Any, ...]:
    return tuple(sorted((x, s.start) for x, s in m.situations.items()))


# --- Figure 8 a ---------------------------------------------------------------------------

PLAN_QUERIES = {
    "Q1": ["A overlaps B", "A overlaps C", "B starts C"],
    "Q2": ["A overlaps B", "A before C", "B overlaps C"],
    "Q3": ["A before B", "A before C", "B before C"],
}


def fig_plans(args: argparse.Namespace) -> list[dict[str, Any]]:
    data = situations.generate(args.events, names=("A", "B", "C"), seed=5)
    rows = []
    for name, relations in PLAN_QUERIES.items():
        text = situation_query("ABC", relations, args.window)
        pattern = kleene.compile(text).plan.pattern_for("number", None)
        suggested = AdaptivePlanner(pattern).order
        rates = {}
        for order in itertools.permutations("ABC"):
            q = kleene.compile(text, order=order)
            cpu, matches = timed(lambda q=q, data=data: q.run(data), args.repeat)
            rates[order] = (data.num_rows / cpu, len(matches))
        if len({m for _, m in rates.values()}) != 1:
            raise SystemExit(f"the orders of {name} disagree on the matches")
        ranked = sorted(rates, key=lambda o: rates[o][0], reverse=True)
        for role, order in (("best", ranked[0]), ("worst", ranked[-1]), ("suggested", suggested)):
            rows.append(
                {
                    "query": name,
                    "plan": role,
                    "order": " -> ".join(order),
                    "events_per_s": rates[order][0],
                    "vs best": rates[order][0] / rates[ranked[0]][0],
                    "matches": rates[order][1],
                }
            )
    _bars(rows, "query", "plan", "events_per_s", "events per CPU second", "plans")
    return rows


# --- plots --------------------------------------------------------------------------------


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, name: str) -> None:
    IMG.mkdir(parents=True, exist_ok=True)
    path = IMG / f"tpstream_{name}.png"
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    print(f"plot: {path}")


def _lines(
    rows: list[dict[str, Any]], x: str, y: str, by: str | None, title: str, name: str, log=False
) -> None:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for label in dict.fromkeys(r[by] for r in rows) if by else [None]:
        these = [r for r in rows if by is None or r[by] == label]
        ax.plot([r[x] for r in these], [r[y] for r in these], marker="o", label=label)
    if log:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel("CPU seconds")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if by:
        ax.legend()
    _save(fig, name)


def _boxes(rows: list[dict[str, Any]], name: str) -> None:
    plt = _pyplot()
    kinds = list(dict.fromkeys(r["pattern"] for r in rows))
    fig, axes = plt.subplots(1, len(kinds), figsize=(12, 3.2), sharey=True)
    for ax, kind in zip(axes, kinds, strict=True):
        streams = sorted({r["streams"] for r in rows})
        data = [
            [r["cpu_s"] for r in rows if r["pattern"] == kind and r["streams"] == n]
            for n in streams
        ]
        ax.boxplot(data, tick_labels=[str(n) for n in streams])
        ax.set_title(kind)
        ax.set_xlabel("situation streams")
    axes[0].set_ylabel("CPU seconds")
    _save(fig, name)


def _bars(rows: list[dict[str, Any]], x: str, by: str, y: str, ylabel: str, name: str) -> None:
    plt = _pyplot()
    xs = list(dict.fromkeys(r[x] for r in rows))
    groups = list(dict.fromkeys(r[by] for r in rows))
    width = 0.8 / len(groups)
    fig, ax = plt.subplots(figsize=(8, 3.5))
    for i, g in enumerate(groups):
        vals = [next((r[y] for r in rows if r[x] == v and r[by] == g), 0) for v in xs]
        ax.bar([k + i * width for k in range(len(xs))], vals, width, label=g)
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(xs))], xs, rotation=20)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)
    _save(fig, name)


FIGURES = {
    "drivers": fig_drivers,
    "window": fig_window,
    "patterns": fig_patterns,
    "latency": fig_latency,
    "plans": fig_plans,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figure", choices=FIGURES)
    parser.add_argument("--repeat", type=int, default=3, help="runs per point; the fastest counts")
    parser.add_argument("--events", type=int, default=None, help="synthetic events per run")
    parser.add_argument("--cars", type=int, nargs="+", default=[50, 100, 200, 400])
    parser.add_argument("--duration", type=int, default=1800, help="car data: seconds")
    parser.add_argument(
        "--windows",
        type=int,
        nargs="+",
        default=[500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000],
    )
    parser.add_argument("--streams", type=int, nargs="+", default=[4, 6, 8, 10])
    parser.add_argument("--instances", type=int, default=5, help="random Chain/Star/Combined")
    parser.add_argument("--window", type=int, default=None, help="patterns and plans")
    parser.add_argument("--relations", nargs="+", default=GAINFUL)
    args = parser.parse_args()
    defaults = {"window": 120_000, "patterns": 10_000, "latency": 50_000, "plans": 20_000}
    args.events = args.events or defaults.get(args.figure, 0)
    args.window = args.window or 2000
    print(machine())
    rows = FIGURES[args.figure](args)
    print(table(rows, list(rows[0])))
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"tpstream_{args.figure}.json"
    out.write_text(json.dumps(rows, indent=1, default=str))


if __name__ == "__main__":
    main()
