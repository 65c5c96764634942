"""Kleene closure over imprecise timestamps: Algorithm 1's confidence threshold against
plain enumeration as the window grows (SASE++ section 5.3 and Figure 6(a)).

``SEQ(A a, B+ b[], C c) WHERE b[i].v > b[i-1].v WITHIN W`` under skip till any match
over A, B and C events drawn 1:6:1 (as in ``bench.kleene_closure``) with a value v in
0..99, event i at time i with the uncertainty interval [i - 5, i + 5] (size 10, as in
the paper's Figure 6; ``--delta d`` makes it [i - d, i + d]: with d = 1 the events of a
match more than 2 apart have a certain order, so results pass the thresholds). Compared
side by side:

* ``plain``: the baseline, plain enumeration (:mod:`bench.imprecise_kleene_worlds`, the
  evaluation of session 5, unchanged): no threshold, every signature of positive
  confidence is enumerated with all its worlds;
* ``chains``: :mod:`kleene.imprecise.kleene_dp` (a distribution over the first and last
  instants per time order instead of the worlds) without a threshold;
* ``x`` (a number): the same with Algorithm 1's threshold x, pruning each partial
  signature whose confidence bound is at most x, with every extension.

Each case runs in a fresh process, killed once it has used ``--limit`` CPU seconds (its
throughput is then shown as 0 and larger windows are skipped); throughput is
events per CPU second of the evaluation (all at the end of the input, where the
framework evaluates). The plot shows throughput against W.

    python -m bench.imprecise_kleene [--events N] [--windows 2,3,4,...] [--limit SECONDS]
                                     [--thresholds plain,chains,0.5,0.9,0.999] [--delta D]
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import time
from pathlib import Path
from typing import Any

from bench._common import RESULTS, machine, run_isolated, save_plot, table

DELTA = 5
BASELINES = ("plain", "chains")  # the cases without a threshold


def stream(n: int, seed: int = 7, delta: int = DELTA) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    types = rng.choices("ABC", weights=(1, 6, 1), k=n)
    return [
        {"type": t, "id": i, "lower": i - delta, "upper": i + delta, "v": rng.randrange(100)}
        for i, t in enumerate(types)
    ]


def measure(case: dict[str, Any]) -> dict[str, Any]:
    limit = int(time.process_time() + case["limit"]) + 1  # the imports count too
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
    import kleene
    from bench.imprecise_kleene_worlds import WorldsKleene
    from kleene.imprecise.admission import Admission
    from kleene.imprecise.kleene_dp import KleeneFramework

    text = f"PATTERN SEQ(A a, B+ b[], C c) WHERE b[i].v > b[i-1].v WITHIN {case['window']}"
    threshold = None if case["threshold"] in BASELINES else float(case["threshold"])
    delta = case.get("delta", DELTA)
    q = kleene.compile(
        text, time="interval", strategy="skip_till_any_match", u_max=2 * delta, confidence=threshold
    )
    admission = Admission(q.plan, q.fields, q.interval)
    kind = WorldsKleene if case["threshold"] == "plain" else KleeneFramework
    framework = kind(q.plan, q.window, q.keep)
    framework.push(admission.admit(stream(case["events"], delta=delta)), admission.now_lower)
    began = time.process_time()
    found = framework.flush()
    cpu = time.process_time() - began
    return {**case, "results": len(found), "cpu_s": cpu, "events_per_s": case["events"] / cpu}


def run_case(case: dict[str, Any], module: str = "bench.imprecise_kleene") -> dict[str, Any]:
    """``module.measure`` in a fresh interpreter, killed once it has used the case's CPU
    limit."""
    try:
        return run_isolated(module, case)
    except subprocess.CalledProcessError:
        return {**case, "results": "-", "cpu_s": f"> {case['limit']}", "events_per_s": 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100)
    parser.add_argument("--windows", default="2,3,4,6,10,20,30,40")
    parser.add_argument("--thresholds", default="plain,chains,0.5,0.9,0.999")
    parser.add_argument("--limit", type=float, default=20.0, help="seconds per case")
    parser.add_argument("--delta", type=int, default=DELTA, help="half interval size")
    args = parser.parse_args()
    print(machine())
    rows = []
    for threshold in args.thresholds.split(","):
        for window in (int(w) for w in args.windows.split(",")):
            case = {
                "threshold": threshold,
                "window": window,
                "events": args.events,
                "limit": args.limit,
                "delta": args.delta,
            }
            row = run_case(case)
            rows.append(row)
            print(table([row], ["threshold", "window", "results", "cpu_s", "events_per_s"]))
            if not row["events_per_s"]:
                break  # larger windows only take longer
    print(table(rows, ["threshold", "window", "results", "cpu_s", "events_per_s"]))
    suffix = "" if args.delta == DELTA else f"_delta{args.delta}"
    _plot(rows, RESULTS / f"imprecise_kleene{suffix}.png", args.delta)


LABELS = {"plain": "plain enumeration (worlds)", "chains": "chains, no threshold"}


def _plot(rows: list[dict[str, Any]], path: Path, delta: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for threshold in dict.fromkeys(r["threshold"] for r in rows):
        pts = [(r["window"], r["events_per_s"]) for r in rows if r["threshold"] == threshold]
        pts = [(w, v) for w, v in pts if v]
        if pts:
            label = LABELS.get(threshold, f"DP, threshold {threshold}")
            ax.plot(*zip(*pts, strict=True), marker="o", label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("window W")
    ax.set_ylabel("events per CPU second")
    ax.set_title(f"Kleene closure over intervals, δ = {delta} (SASE++ Fig. 6(a))")
    save_plot(fig, ax, path)


if __name__ == "__main__":
    main()
