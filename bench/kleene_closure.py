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

Each case runs in a fresh process with a time limit and is repeated ``--repeat`` times
in it (fewer when one repetition takes more than a tenth of the limit); it reports the
median wall and CPU seconds (each repetition starts after a full garbage collection,
so that none is owed to the imports), events per second, peak live runs, matches, the
share of time spent constructing results, and peak RSS. The speed-up table gives each
engine's median time as a multiple of the basic NFA's in the same run; the plot shows
CPU seconds against W on a log scale (a straight line: exponential growth) with the
number of matches, which bounds what any engine that enumerates them must do.

``--no-window-filter`` is an ablation: admission then keeps every event some state
accepts, as before it learnt to drop events that lie too far from every possible start
and end of a match (which spares every engine the runs that cannot complete).

    python -m bench.kleene_closure [--events N] [--windows 8,12,16] [--limit SECONDS]
                                   [--repeat N] [--no-window-filter]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
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
    q = kleene.compile(
        text,
        engine=engine,
        output="collapsed" if collapsed else "all",
        max_runs=50_000_000,
        max_matches=None,
    )
    events = stream(case["events"], seed=7)
    walls: list[float] = []
    cpus: list[float] = []
    counts: set[int] = set()
    began = time.perf_counter()
    while len(walls) < case.get("repeat", 1):
        m = q.matcher()
        if case.get("no_window_filter"):
            _without_window_filter(m)
        found = []
        gc.collect()  # a full collection now, not one triggered by whatever came before
        start, cpu = time.perf_counter(), time.process_time()
        found = m.push(events) + m.flush()
        cpus.append(time.process_time() - cpu)
        walls.append(time.perf_counter() - start)
        core = m.st.core
        counts.add(
            sum(c.count() for c in found if isinstance(c, kleene.CollapsedMatch))
            if collapsed
            else len(found)
        )
        if time.perf_counter() - began > case.get("budget", float("inf")):
            break  # a slow case: the repetitions that fit
    assert len(counts) == 1, f"repetitions disagree: {counts}"
    seconds = statistics.median(walls)
    construct = getattr(core, "construct_seconds", 0.0)
    return {
        "seconds": seconds,
        "cpu_s": statistics.median(cpus),
        "reps": len(walls),
        "events_per_s": case["events"] / seconds,
        "matches": counts.pop(),
        "results": len(found),
        "peak_runs": core.peak_runs,
        "construct_share": construct / walls[-1] if walls[-1] else 0.0,
    }


def _without_window_filter(m: Any) -> None:
    """Ablation: admission keeps every event some state accepts, as before the
    prefilter learnt to drop events too far from any start and end event."""
    relevant = m.admission.prefilter.relevant

    def by_state_only(batch: Any, clean: set[str], window: float | None = None) -> Any:
        return relevant(batch, clean)

    m.admission.prefilter.relevant = by_state_only


def main() -> None:
    from bench._common import RESULTS, machine, run_isolated, table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--windows", default="6,8,10,12,14,16,20,24,32")
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per case")
    parser.add_argument(
        "--c-below",
        type=int,
        default=2,
        help="c.v < this: sets the selectivity (matches per event)",
    )
    parser.add_argument(
        "--repeat", type=int, default=5, help="repetitions per case (median reported)"
    )
    parser.add_argument(
        "--no-window-filter",
        action="store_true",
        help="ablation: admission does not drop events outside every start/end window",
    )
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for predicate in PREDICATES:
        slow: set[str] = set()  # engines that hit the limit: larger windows are skipped
        for window in map(int, args.windows.split(",")):
            for engine in ENGINES:
                case = {
                    "events": args.events,
                    "window": window,
                    "engine": engine,
                    "predicate": predicate,
                    "c_below": args.c_below,
                    "repeat": args.repeat,
                    "budget": args.limit / 10,
                    "no_window_filter": args.no_window_filter,
                }
                if engine in slow:
                    rows.append({**case, "seconds": None})
                    continue
                try:
                    row = {**case, **run_isolated("bench.kleene_closure", case, args.limit)}
                except subprocess.TimeoutExpired:
                    slow.add(engine)
                    row = {**case, "seconds": None}
                rows.append(row)
                shown = "timeout"
                if row["seconds"] is not None:
                    shown = f"{row['seconds']:.3f}s (cpu {row['cpu_s']:.3f}s, {row['reps']} reps)"
                print(f"{predicate:11} W={window:3} {engine:14} {shown}", flush=True)
    print(f"\nmachine: {machine()}; median of up to {args.repeat} repetitions")
    if args.no_window_filter:
        print("ablation: no window prefilter at admission")
    print()
    for row in rows:
        if row["seconds"] is None:
            row["seconds"] = f">{args.limit:.0f}"
    print(
        table(
            rows,
            [
                "predicate",
                "window",
                "engine",
                "seconds",
                "cpu_s",
                "reps",
                "events_per_s",
                "matches",
                "peak_runs",
                "construct_share",
                "peak_rss_mib",
            ],
        )
    )
    _speedups(rows)
    suffix = "-no-window-filter" if args.no_window_filter else ""
    _plot(rows, RESULTS / f"kleene_closure{suffix}.png")


def _speedups(rows: list[dict[str, Any]]) -> None:
    """Ratios measured side by side: each engine's median time against the basic NFA's
    (wall, and CPU in brackets), and microseconds per match built."""
    print("\nspeed-up over the basic NFA (same run), wall (cpu); microseconds per match:")
    by = {(r["predicate"], r["window"], r["engine"]): r for r in rows}
    for (predicate, window, engine), row in by.items():
        base = by[(predicate, window, "nfa")]
        if engine == "nfa" or not isinstance(row["seconds"], float):
            continue
        per_match = 1e6 * row["seconds"] / row["matches"] if row["matches"] else float("nan")
        if isinstance(base["seconds"], float):
            wall, cpu = base["seconds"] / row["seconds"], base["cpu_s"] / row["cpu_s"]
            ratio = f"{wall:8.1f}x ({cpu:.1f}x)"
        else:
            ratio = f"{'>' + format(float(base['seconds'][1:]) / row['seconds'], '.0f'):>8}x"
        print(f"  {predicate:11} W={window:3} {engine:14} {ratio}  {per_match:6.1f} us/match")


def _plot(rows: list[dict[str, Any]], path: Any) -> None:
    """Median CPU seconds against W (log scale: exponential growth is a straight line;
    CPU, as the machines are shared), and the number of matches on a second axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, predicate in zip(axes, PREDICATES, strict=True):
        for engine in ENGINES:
            pts = [
                (r["window"], r["cpu_s"])
                for r in rows
                if r["predicate"] == predicate
                and r["engine"] == engine
                and isinstance(r["seconds"], float)
            ]
            if pts:
                ax.plot(*zip(*pts, strict=True), marker="o", label=engine)
        matches = sorted(
            {
                (r["window"], r["matches"])
                for r in rows
                if r["predicate"] == predicate and isinstance(r["seconds"], float) and r["matches"]
            }
        )
        if matches:
            twin = ax.twinx()
            twin.plot(*zip(*matches, strict=True), color="grey", linestyle=":")
            twin.set_yscale("log")
            twin.set_ylabel("matches (dotted)")
        ax.set_yscale("log")
        ax.set_xlabel("window W")
        ax.set_ylabel("median CPU seconds (log)")
        ax.set_title(f"seq(A, B+, C), {predicate} consistent")
        ax.grid(alpha=0.3)
    axes[0].legend(loc="upper left")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
