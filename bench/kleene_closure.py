"""Kleene closure under skip till any match (SIGMOD 2014, section 6.1-6.2).

Template ``seq(A a, B+ b[], C c)`` under skip till any match over a synthetic stream of
A, B and C events with a value ``v`` in 0..99 (``c.v < K`` sets the selectivity, matches
per event), for a true-value consistent predicate
(``b[i].v > max(b[..i-1].v)``) and a false-value consistent one (``b[i].v <
max(b[..i-1].v)``), varying the window W. Engines compared side by side in one run:

* ``nfa``: the basic NFA^b algorithm (SASE+), which clones a run per subset;
* ``postpone-late``: postponing with every value predicate postponed (section 5.1);
* ``postpone``: postponing with early filters on the fly (section 5.2);
* ``collapsed``: on-the-fly, returning collapsed matches without enumerating them.

Each case runs in a fresh process with a time limit; it reports events per second, peak
live runs, matches, the share of time spent constructing results, and peak RSS.

    python -m bench.kleene_closure [--events N] [--windows 8,12,16] [--limit SECONDS]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import time
from typing import Any

PREDICATES = {
    "true-value": "b[i].v > max(b[..i-1].v)",
    "false-value": "b[i].v < max(b[..i-1].v)",
}
ENGINES = ("nfa", "postpone-late", "postpone", "collapsed")


def stream(n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    types = rng.choices("ABC", weights=(1, 6, 1), k=n)
    return [{"type": t, "timestamp": i, "v": rng.randrange(100)} for i, t in enumerate(types)]


def measure(case: dict[str, Any]) -> dict[str, Any]:
    import kleene

    text = (
        f"PATTERN SEQ(A a, B+ b[], C c) WHERE skip_till_any_match "
        f"{{ {PREDICATES[case['predicate']]} and c.v < {case['c_below']} }} "
        f"WITHIN {case['window']}"
    )
    collapsed = case["engine"] == "collapsed"
    engine = "postpone" if collapsed else case["engine"]
    q = kleene.compile(text, engine=engine, output="collapsed" if collapsed else "all",
                       max_runs=50_000_000)
    events = stream(case["events"], seed=7)
    m = q.matcher()
    start = time.perf_counter()
    found = m.push(events) + m.flush()
    seconds = time.perf_counter() - start
    core = m.st.core
    construct = getattr(core, "construct_seconds", 0.0)
    matches = sum(c.count() for c in found) if collapsed else len(found)
    return {
        "seconds": seconds,
        "events_per_s": case["events"] / seconds,
        "matches": matches,
        "results": len(found),
        "peak_runs": core.peak_runs,
        "construct_share": construct / seconds if seconds else 0.0,
    }


def main() -> None:
    from bench._common import RESULTS, machine, run_isolated, table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--windows", default="6,8,10,12,14,16,20,24,32")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per case")
    parser.add_argument("--c-below", type=int, default=2,
                        help="c.v < this: sets the selectivity (matches per event)")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for predicate in PREDICATES:
        slow: set[str] = set()  # engines that hit the limit: larger windows are skipped
        for window in map(int, args.windows.split(",")):
            for engine in ENGINES:
                case = {"events": args.events, "window": window, "engine": engine,
                        "predicate": predicate, "c_below": args.c_below}
                if engine in slow:
                    rows.append({**case, "seconds": None})
                    continue
                try:
                    row = {**case, **run_isolated("bench.kleene_closure", case, args.limit)}
                except subprocess.TimeoutExpired:
                    slow.add(engine)
                    row = {**case, "seconds": None}
                rows.append(row)
                shown = "timeout" if row["seconds"] is None else f"{row['seconds']:.2f}s"
                print(f"{predicate:11} W={window:3} {engine:14} {shown}", flush=True)
    print(f"\nmachine: {machine()}\n")
    for row in rows:
        if row["seconds"] is None:
            row["seconds"] = f">{args.limit:.0f}"
    print(table(rows, ["predicate", "window", "engine", "seconds", "events_per_s", "matches",
                       "peak_runs", "construct_share", "peak_rss_mib"]))
    _speedups(rows)
    _plot(rows, RESULTS / "kleene_closure.png")


def _speedups(rows: list[dict[str, Any]]) -> None:
    """Ratios measured side by side: postponing variants against the basic NFA."""
    print("\nspeed-up over the basic NFA (same run):")
    by = {(r["predicate"], r["window"], r["engine"]): r for r in rows}
    for (predicate, window, engine), row in by.items():
        base = by[(predicate, window, "nfa")]
        if engine == "nfa" or not isinstance(base["seconds"], float):
            continue
        if isinstance(row["seconds"], float):
            ratio = base["seconds"] / row["seconds"]
            print(f"  {predicate:11} W={window:3} {engine:14} {ratio:8.1f}x")


def _plot(rows: list[dict[str, Any]], path: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
    for ax, predicate in zip(axes, PREDICATES, strict=True):
        for engine in ENGINES:
            pts = [(r["window"], r["events_per_s"]) for r in rows
                   if r["predicate"] == predicate and r["engine"] == engine
                   and isinstance(r["seconds"], float)]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", label=engine)
        ax.set_yscale("log")
        ax.set_xlabel("window W")
        ax.set_title(f"seq(A, B+, C), {predicate} consistent")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("events per second (log)")
    axes[0].legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
