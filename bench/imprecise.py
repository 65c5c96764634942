"""Imprecise timestamps over the synthetic stream of VLDB 2010 section 5.1: the shapes of
Figures 4(a)-(e) and 5(a)-(b), one figure per command.

The stream (:func:`kleene.datagen.uncertain.generate`): one attribute cycling 1..1000,
the event at time t has the interval [t - δ, t + δ]. The query is
``SEQ(E e1, ..., E el) WHERE ... WITHIN W`` with one predicate per component; the paper
does not give its v_i, so here they are exclusive residues, each component matching
one event in v = 20 and no event matching two (so sorting for query order applies as
in the paper): ``e1.value % 20 < k``, ``ej.value % 20 = k + j - 2`` for 1 < j < l and
``el.value % (20 k) = k + l - 2``. The skew k (default 1) is Figure 4(d)'s event
frequencies: E_1 matches k times as many events and E_l k times fewer, so the number of
results stays about the same (section 5.1: "keep the query selectivity roughly the
same"); k runs up to v - l + 1 (18 at l = 3). Defaults are the paper's: δ = 5, W = 100,
l = 3, skip till any match.

Fig. 4(d)'s mechanism is that E_1 events go out of date in selectivity order's buffer
before an E_l arrives: an E_l comes about every 20 k instants, so once 20 k exceeds W a share
1 - W / (20 k) of the E_1 events has no E_l within the window (none at k <= 5, 37.5% at
k = 8, 69% at k = 16); the figure's skews run to 16 so that regime is reached.

Figures (how: ``points``, the point-based framework; ``any``, ``query`` and
``selectivity``, the event-based one by the any-state method, sorting for query order
and selectivity order):

* 4a: δ 1-50, points vs any (skip till any match)
* 4b: δ 1-50, any vs query vs selectivity
* 4c: pattern length 2-6, any vs query vs selectivity
* 4d: skew k 1-16, any vs query vs selectivity
* 4e: δ 1-20, points vs the three methods (skip till next match)
* 5a: W 10-200, points vs any
* 5b: pattern length 2-6, points vs any

Events are admitted once (not timed; the garbage collector then collects once, so the
admission's objects cost no method a full collection), then pushed in chunks of 100
with the arrival-order bound now.lower, as a stream would; the matching time is
measured until the stream ends or the CPU time limit passes (``complete`` no: then
events/s is over the prefix done; ``peak_runs`` and ``mean_runs``: the live runs after
a chunk, at most and on average; ``created``: the runs the event-based framework
created; ``killed``: one chunk took three times the limit, and the case was stopped
there). Each case runs
in a fresh process. Cases that complete give the same number of results whatever the
framework (the property tests hold every framework to the possible-worlds oracle);
``speedup`` is events/s over the first column's.

    python -m bench.imprecise --figure 4a [--events N] [--limit SECONDS] [--values ..]
                              [--every V] [--repeats R]

With ``--repeats R`` every case runs R times, the repeats interleaved (all cases once,
then again), and the table shows each case's median repeat by events/s.
"""

from __future__ import annotations

import argparse
import gc
import resource
import subprocess
import time
from pathlib import Path
from typing import Any

from bench._common import RESULTS, machine, run_isolated, save_plot, table

STRATEGIES = {"any": "skip_till_any_match", "next": "skip_till_next_match"}
CHUNK = 100
EVERY = 20
METHODS = ("any", "query", "selectivity")
DEFAULTS = {"delta": 5, "window": 100, "length": 3, "skew": 1, "every": EVERY, "strategy": "any"}
FIGURES: dict[str, dict[str, Any]] = {
    "4a": {"vary": "delta", "values": [1, 5, 10, 20, 50], "how": ["points", "any"]},
    "4b": {"vary": "delta", "values": [1, 5, 10, 20, 50], "how": list(METHODS)},
    "4c": {"vary": "length", "values": [2, 3, 4, 5, 6], "how": list(METHODS)},
    "4d": {"vary": "skew", "values": [1, 2, 4, 8, 16], "how": list(METHODS)},
    "4e": {
        "vary": "delta",
        "values": [1, 5, 10, 20],
        "how": ["points", *METHODS],
        "strategy": "next",
    },
    "5a": {"vary": "window", "values": [10, 50, 100, 150, 200], "how": ["points", "any"]},
    "5b": {"vary": "length", "values": [2, 3, 4, 5, 6], "how": ["points", "any"]},
}


def query_text(length: int, window: int, skew: int = 1, every: int = EVERY) -> str:
    if skew + length - 2 >= every:
        raise SystemExit(
            f"skew {skew} leaves no residue for E_{length} (at most {every - length + 1})"
        )
    pattern = ", ".join(f"E e{i}" for i in range(1, length + 1))
    where = [f"e1.value % {every} < {skew}"]
    where += [f"e{j}.value % {every} = {skew + j - 2}" for j in range(2, length)]
    where.append(f"e{length}.value % {every * skew} = {skew + length - 2}")
    return f"PATTERN SEQ({pattern}) WHERE {' AND '.join(where)} WITHIN {window}"


def measure(case: dict[str, Any]) -> dict[str, Any]:
    # a chunk can take far longer than the limit (the point-based framework at δ = 50):
    # the process is killed at three times the limit, counting the imports
    cap = int(time.process_time() + 3 * case["limit"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cap, cap + 1))
    import kleene
    from kleene.datagen.uncertain import generate
    from kleene.imprecise.admission import Admission
    from kleene.imprecise.choice import choose, framework

    text = query_text(case["length"], case["window"], case["skew"], case["every"])
    delta = case["delta"]
    q = kleene.compile(
        text, time="interval", strategy=STRATEGIES[case["strategy"]], u_max=2 * delta
    )
    admission = Admission(q.plan, q.fields, q.interval)
    rows = generate(case["events"], delta=delta).to_pylist()
    chunks = []
    for k in range(0, len(rows), CHUNK):
        admitted = admission.admit(rows[k : k + CHUNK])
        chunks.append((admitted, admission.now_lower))
    how = case["how"]
    if how == "points":
        chosen = choose(q.plan, "points", 2 * delta)
    else:
        chosen = choose(q.plan, "events", 2 * delta, how)
    evaluator = framework(q.plan, chosen, q.window, 2 * delta, q.keep)
    found = done = peak = live = pushes = 0
    complete = False
    # the setup's objects (rows, admitted events) are collected before the clock starts:
    # otherwise the first full garbage collection during matching walks them all, a
    # cost of the setup (~0.1 s here) that every method would pay once
    gc.collect()
    began = time.process_time()
    for admitted, now_lower in chunks:
        found += len(evaluator.push(admitted, now_lower))
        done += len(admitted)
        runs = len(getattr(evaluator, "runs", ()))
        peak, live, pushes = max(peak, runs), live + runs, pushes + 1
        if time.process_time() - began > case["limit"]:
            break
    else:
        found += len(evaluator.flush())
        complete = True
    cpu = time.process_time() - began
    return {
        **case,
        "processed": done,
        "complete": "yes" if complete else "no",
        "results": found,
        "peak_runs": peak if how != "points" else "-",
        "mean_runs": round(live / pushes, 1) if how != "points" and pushes else "-",
        "created": getattr(evaluator, "created", "-"),
        "cpu_s": cpu,
        "events_per_s": done / cpu if cpu else float("inf"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figure", choices=sorted(FIGURES), default="4a")
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--limit", type=float, default=10.0, help="CPU seconds per case")
    parser.add_argument("--values", help="comma-separated, instead of the figure's")
    parser.add_argument("--every", type=int, default=EVERY, help="v: each component 1 in v")
    parser.add_argument("--repeats", type=int, default=1, help="interleaved; the median kept")
    args = parser.parse_args()
    figure = FIGURES[args.figure]
    vary = figure["vary"]
    values = [int(v) for v in args.values.split(",")] if args.values else figure["values"]
    print(machine())
    print(f"figure {args.figure}: varying {vary}; defaults {DEFAULTS}, every {args.every}")
    print("query at the defaults:", query_text(3, 100, 1, args.every))
    runs: dict[tuple[Any, str], list[dict[str, Any]]] = {}
    for _ in range(args.repeats):  # repeats interleaved, so load drifts hit every case
        for value in values:
            for how in figure["how"]:
                case = {
                    **DEFAULTS,
                    "strategy": figure.get("strategy", "any"),
                    vary: value,
                    "how": how,
                    "every": args.every,
                    "events": args.events,
                    "limit": args.limit,
                }
                try:
                    row = run_isolated("bench.imprecise", case)
                except subprocess.CalledProcessError:  # killed at the cap within one chunk
                    row = {**case, "complete": "killed", "events_per_s": 0.0}
                runs.setdefault((value, how), []).append(row)
                print(table([row], [vary, "how", "events_per_s"]), flush=True)
    rows = []
    for value in values:
        base = None
        for how in figure["how"]:
            done = sorted(runs[value, how], key=lambda r: r["events_per_s"])
            row = done[len(done) // 2]  # the median repeat
            if how == figure["how"][0]:
                base = row["events_per_s"]
            row["speedup"] = row["events_per_s"] / base if base else "-"
            rows.append(row)
    columns = [vary, "how", "processed", "complete", "results", "peak_runs", "mean_runs"]
    columns += ["created", "cpu_s"]
    print(table(rows, [*columns, "events_per_s", "speedup", "peak_rss_mib"]))
    _plot(rows, vary, figure["how"], RESULTS / f"imprecise_{args.figure}.png", args.figure)


def _plot(rows: list[dict[str, Any]], vary: str, hows: list[str], path: Path, name: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = {
        "points": "point-based",
        "any": "event-based, any state",
        "query": "event-based, sorting (query order)",
        "selectivity": "event-based, selectivity order",
    }
    fig, ax = plt.subplots(figsize=(6, 4))
    for how in hows:
        pts = [(r[vary], r["events_per_s"]) for r in rows if r["how"] == how and r["events_per_s"]]
        ax.plot(*zip(*pts, strict=True), marker="o", label=labels[how])
    ax.set_yscale("log")
    ax.set_xlabel(
        {"delta": "δ (half uncertainty interval)", "length": "pattern length l"}.get(vary, vary)
    )
    ax.set_ylabel("events per CPU second")
    ax.set_title(f"VLDB 2010 Fig. {name[0]}({name[1]}) shape")
    save_plot(fig, ax, path)


if __name__ == "__main__":
    main()
