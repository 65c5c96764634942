"""SASE++ Q5 and Q6 over the Hadoop trace with imprecise timestamps (SIGMOD 2014,
section 6.5, Figure 7(f)): Kleene closure over intervals, plain enumeration against the
chain representation with and without Algorithm 1's threshold.

The trace is ``kleene generate hadoop --imprecise`` (:mod:`kleene.datagen.hadoop` with
:func:`kleene.datagen.uncertain.with_intervals`: Hadoop events +-0.5 s, Ganglia LoadStd
samples +-7.5 s, so 151-point intervals in units of 0.1 s). The queries are
``bench/queries/imprecise_q5.sase`` and ``imprecise_q6.sase`` (10-minute window). Cases:

* ``plain``: the plain enumeration of :mod:`bench.imprecise_kleene_worlds` (every world
  of each partial signature, no threshold);
* ``chains``: :mod:`kleene.imprecise.kleene_dp` without a threshold;
* ``dp x``: the same with the confidence threshold x (Algorithm 1).

Each case runs in a fresh process, killed once it has used ``--limit`` CPU seconds;
throughput is events of the trace per CPU second of the evaluation (admission, which
reads the table, is not counted). The plot shows throughput per query and case.

    python -m bench.imprecise_hadoop [--jobs N] [--queries q5,q6] [--limit SECONDS]
                                     [--cases plain,chains,0.5,0.9,0.999]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path
from typing import Any

from bench._common import RESULTS, machine, save_plot, table
from bench.imprecise_kleene import run_case

QUERIES = Path(__file__).parent / "queries"
JOBS = 20
COLUMNS = ["query", "case", "events", "results", "cpu_s", "events_per_s"]


def measure(case: dict[str, Any]) -> dict[str, Any]:
    limit = int(time.process_time() + case["limit"]) + 1  # the imports count too
    resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))
    import kleene
    from bench.imprecise_kleene_worlds import WorldsKleene
    from kleene.datagen import hadoop, uncertain
    from kleene.imprecise.admission import Admission
    from kleene.imprecise.kleene_dp import KleeneFramework

    trace = uncertain.with_intervals(hadoop.generate(case["jobs"], nodes=case["nodes"], seed=0))
    text = (QUERIES / f"imprecise_{case['query']}.sase").read_text()
    threshold = None if case["case"] in ("plain", "chains") else float(case["case"])
    q = kleene.compile(text, time="interval", strategy="skip_till_any_match", confidence=threshold)
    admission = Admission(q.plan, q.fields, q.interval)
    kind = WorldsKleene if case["case"] == "plain" else KleeneFramework
    framework = kind(q.plan, q.window, q.keep)
    framework.push(admission.admit(trace), admission.now_lower)
    began = time.process_time()
    found = framework.flush()
    cpu = time.process_time() - began
    events = trace.num_rows
    return {
        **case,
        "events": events,
        "results": len(found),
        "cpu_s": cpu,
        "events_per_s": events / cpu,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=JOBS)
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--queries", default="q5,q6")
    parser.add_argument("--cases", default="plain,chains,0.5,0.9,0.999")
    parser.add_argument("--limit", type=float, default=120.0, help="CPU seconds per case")
    args = parser.parse_args()
    print(machine())
    rows = []
    for query in args.queries.split(","):
        for name in args.cases.split(","):
            case = {"query": query, "case": name, "jobs": args.jobs, "nodes": args.nodes}
            row = run_case({**case, "limit": args.limit}, "bench.imprecise_hadoop")
            rows.append(row)
            print(table([row], COLUMNS))
    print(table(rows, COLUMNS))
    suffix = "" if args.jobs == JOBS else f"_jobs{args.jobs}"
    _plot(rows, RESULTS / f"imprecise_hadoop{suffix}.png", args.jobs)


def _plot(rows: list[dict[str, Any]], path: Path, jobs: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    queries = list(dict.fromkeys(r["query"] for r in rows))
    cases = list(dict.fromkeys(r["case"] for r in rows))
    fig, ax = plt.subplots(figsize=(6, 4))
    width = 0.8 / len(cases)
    for n, name in enumerate(cases):
        ys = [
            next(r["events_per_s"] for r in rows if r["query"] == q and r["case"] == name)
            for q in queries
        ]
        label = {"plain": "plain enumeration", "chains": "chains, no threshold"}.get(
            name, f"DP {name}"
        )
        ax.bar(
            [i + n * width for i in range(len(queries))],
            [y or 1e-3 for y in ys],
            width,
            label=label,
        )
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(queries))], [q.upper() for q in queries])
    ax.set(
        yscale="log",
        ylabel="events per CPU second (0: over the CPU limit)",
        title=f"SASE++ Q5/Q6, Hadoop trace with intervals, {jobs} jobs (Fig. 7(f))",
    )
    save_plot(fig, ax, path)


if __name__ == "__main__":
    main()
