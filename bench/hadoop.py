"""Hadoop cluster monitoring (SIGMOD 2014, section 6.5): queries Q1-Q4 over traces of
growing size.

The trace comes from :mod:`kleene.datagen.hadoop`; the queries are the files
``bench/queries/hadoop_q1.sase`` .. ``hadoop_q4.sase`` (Tables 1 and 5 of the paper, with
the event selection strategy each file states). Each (query, size) case runs in a fresh
process: the trace is generated before the clock starts, then pushed to a matcher in
batches of 65,536 events. Reported: wall and CPU seconds of matching and events per
second of each (on a machine shared with other work, CPU time is the steadier of the
two for this single-threaded engine; the plot uses it), matches, the
largest number of live runs seen after a batch, the trace's in-memory size and the
process's peak RSS (which includes the trace).

    python -m bench.hadoop [--jobs 500,1000,2000,4000] [--queries q1,q2,q3,q4] [--repeat R]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

QUERIES = Path(__file__).parent / "queries"


def query_text(name: str) -> str:
    """The text of ``bench/queries/hadoop_<name>.sase``."""
    return (QUERIES / f"hadoop_{name}.sase").read_text()


def measure(case: dict[str, Any]) -> dict[str, Any]:
    import kleene
    from kleene.datagen.hadoop import generate

    trace = generate(jobs=case["jobs"], nodes=case["nodes"], seed=case["seed"])
    q = kleene.compile(query_text(case["query"]), time_unit="s")  # the trace is in seconds
    m = q.matcher()
    cpu = time.process_time()
    start = time.perf_counter()
    n_matches = 0
    peak_runs = 0
    for batch in trace.to_batches(max_chunksize=65_536):
        n_matches += len(m.push(batch))
        peak_runs = max(peak_runs, m.live_runs)
    n_matches += len(m.flush())
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    return {
        "events": trace.num_rows,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "events_per_s": trace.num_rows / seconds,
        "events_per_cpu_s": trace.num_rows / cpu,
        "matches": n_matches,
        "rejected": m.rejected_count,
        "peak_runs": peak_runs,
        "trace_mib": trace.nbytes / 2**20,
    }


def main() -> None:
    from bench._common import RESULTS, machine, run_isolated, table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default="500,1000,2000,4000", help="trace sizes in jobs")
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--queries", default="q1,q2,q3,q4")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rows = []
    load_before = _load()
    for name in args.queries.split(","):
        for jobs in map(int, args.jobs.split(",")):
            case = {"query": name, "jobs": jobs, "nodes": args.nodes, "seed": args.seed}
            runs = [run_isolated("bench.hadoop", case) for _ in range(args.repeat)]
            row = {**case, **runs[0]}
            row["events_per_s"] = statistics.median(r["events_per_s"] for r in runs)
            row["seconds"] = statistics.median(r["seconds"] for r in runs)
            row["cpu_seconds"] = statistics.median(r["cpu_seconds"] for r in runs)
            row["events_per_cpu_s"] = statistics.median(r["events_per_cpu_s"] for r in runs)
            row["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
            rows.append(row)
            print(
                f"{name} jobs={jobs:6} events={row['events']:>9,}: "
                f"{row['events_per_s']:>10,.0f} ev/s ({row['events_per_cpu_s']:,.0f} per CPU s) "
                f"{row['matches']:>8,} matches "
                f"{row['peak_rss_mib']:.0f} MiB",
                flush=True,
            )
    load_after = _load()
    print()
    print(f"machine: {machine()}")
    print(f"load average (1, 5, 15 min) before: {load_before}, after: {load_after}")
    print(
        table(
            rows,
            [
                "query",
                "jobs",
                "events",
                "seconds",
                "cpu_seconds",
                "events_per_s",
                "events_per_cpu_s",
                "matches",
                "peak_runs",
                "trace_mib",
                "peak_rss_mib",
            ],
        )
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    record = {"machine": machine(), "load": [load_before, load_after], "rows": rows}
    (RESULTS / "hadoop.json").write_text(json.dumps(record, indent=1))
    _plot(rows, RESULTS / "hadoop.png")


def _load() -> str:
    """The 1, 5 and 15 minute load averages (other work sharing the machine)."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_rate, ax_mem) = plt.subplots(1, 2, figsize=(10, 4))
    for name in sorted({r["query"] for r in rows}):
        pts = sorted(
            (r["events"], r["events_per_cpu_s"], r["peak_rss_mib"])
            for r in rows
            if r["query"] == name
        )
        events = [p[0] for p in pts]
        ax_rate.plot(events, [p[1] for p in pts], marker="o", label=name.upper())
        ax_mem.plot(events, [p[2] for p in pts], marker="o", label=name.upper())
    ax_rate.set_ylabel("events per CPU second")
    ax_rate.set_yscale("log")
    ax_mem.set_ylabel("peak RSS (MiB)")
    for ax in (ax_rate, ax_mem):
        ax.set_xlabel("events in the trace")
        ax.set_xscale("log")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.suptitle("Hadoop monitoring queries (SIGMOD 2014, 6.5) on the NFA^b engine")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
