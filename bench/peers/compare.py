"""kleene, Apache Flink's SQL MATCH_RECOGNIZE and pandas-match-recognize side by side.

One stock stream (SIGMOD 2008, section 6; ``kleene.datagen.stock``) is written to a
Parquet file; each engine reads it in a fresh process and finds the falling-then-rising
price pattern per symbol (the query and why the three formulations agree:
``bench/peers/_shared.py``). kleene runs with this interpreter; each peer runs with the
Python of its own virtual environment, which ``bash bench/peers/setup.sh`` creates. The
match sets are compared (kleene is the reference) and a table and a plot are produced.

    python -m bench.peers.compare [--events 1000000] [--symbols 10] [--p 0.55]
                                  [--engines kleene,flink,pmr] [--parallelism 1]

``seconds`` is each engine's processing time measured inside its process without
interpreter, JVM or session start-up (see each runner's docstring for what it covers),
the least of ``--repeat`` interleaved runs (the median is shown too); ``cpu_seconds`` is
the CPU time over the same phase (least; ``cpu_median`` the median); ``ratio`` and
``cpu_ratio`` divide the least times by kleene's, ``median_ratio`` and
``cpu_median_ratio`` the medians. Peak RSS is the largest over the runs.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
Match = tuple[int, ...]

RUNNERS = {
    "kleene": (None, "run_kleene.py"),
    "flink": (HERE / ".venv-flink" / "bin" / "python", "run_flink.py"),
    "pmr": (HERE / ".venv-pmr" / "bin" / "python", "run_pmr.py"),
}


def run_engine(name: str, parquet: Path, work: Path, parallelism: int) -> dict[str, Any]:
    """Run one engine's runner; return its summary plus ``matches`` (a set), or a row
    with ``error`` saying why it could not run."""
    python, script = RUNNERS[name]
    if python is None:
        python = Path(sys.executable)
    if not python.exists():
        return {"engine": name, "error": f"{python} missing: run bash bench/peers/setup.sh"}
    cmd = [str(python), str(HERE / script), "--input", str(parquet)]
    if name == "flink":
        cmd += ["--workdir", str(work / "flink"), "--parallelism", str(parallelism)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    log = work / f"{name}.stderr.log"
    started = time.perf_counter()
    with open(log, "w") as err:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
    wall = time.perf_counter() - started
    lines = done.stdout.splitlines()
    if done.returncode != 0 or not lines or not lines[-1].startswith('{"summary"'):
        tail = log.read_text().strip().splitlines()[-5:]
        return {"engine": name, "error": f"exit {done.returncode}; stderr: {' | '.join(tail)}"}
    summary = json.loads(lines[-1])["summary"]
    matches = {tuple(json.loads(line)) for line in lines[:-1]}
    return {
        **summary,
        "key": name,
        "process_wall_seconds": wall,
        "matches": len(matches),
        "match_set": matches,
        "duplicates": len(lines) - 1 - len(matches),
    }


def differences(reference: set[Match], other: set[Match], limit: int = 5) -> dict[str, Any]:
    """How ``other`` differs from ``reference``: counts and a few examples each way."""
    missing = sorted(reference - other)
    extra = sorted(other - reference)
    return {
        "missing": len(missing),
        "extra": len(extra),
        "missing_examples": missing[:limit],
        "extra_examples": extra[:limit],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--symbols", type=int, default=10)
    parser.add_argument("--p", type=float, default=0.55, help="probability of a price rise")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--engines", default="kleene,flink,pmr")
    parser.add_argument("--parallelism", type=int, default=1, help="Flink's parallelism")
    parser.add_argument("--repeat", type=int, default=1, help="runs per engine (interleaved)")
    parser.add_argument(
        "--workdir", default=None, help="scratch folder, kept (default: a temp dir, removed)"
    )
    args = parser.parse_args()

    work = Path(args.workdir or tempfile.mkdtemp(prefix="kleene-peers-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        _compare(args, work)
    finally:
        if args.workdir is None:  # a scratch folder of our own
            shutil.rmtree(work, ignore_errors=True)


def _compare(args: argparse.Namespace, work: Path) -> None:
    import pyarrow.parquet as pq

    from bench._common import RESULTS, machine, table
    from kleene.datagen.stock import generate

    events = generate(args.events, symbols=args.symbols, increase_prob=args.p, seed=args.seed)
    parquet = work / "stock.parquet"
    pq.write_table(events, parquet)
    print(f"{args.events:,} stock events, {args.symbols} symbols, p={args.p}: {parquet}")

    names = args.engines.split(",")
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    load_before = _load()
    for i in range(args.repeat):
        for name in names:
            if runs[name] and "error" in runs[name][-1]:
                continue
            r = run_engine(name, parquet, work, args.parallelism)
            runs[name].append(r)
            if "error" in r:
                print(f"{name}: could not run: {r['error']}", flush=True)
            else:
                print(
                    f"run {i + 1} {name}: {r['seconds']:.2f} s processing, "
                    f"{r['cpu_seconds']:.2f} s CPU, {r['matches']:,} matches, "
                    f"{r['peak_rss_mib']:.0f} MiB peak",
                    flush=True,
                )
    load_after = _load()

    errors = [r[-1] for r in runs.values() if r and "error" in r[-1]]
    ok = {name: r for name, r in runs.items() if r and "error" not in r[-1]}
    reference = ok["kleene"][0]["match_set"] if "kleene" in ok else None
    rows = []
    for done in ok.values():
        first = done[0]
        row = {k: v for k, v in first.items() if k != "match_set"}
        row["runs"] = len(done)
        row["seconds"] = min(r["seconds"] for r in done)
        row["seconds_median"] = statistics.median(r["seconds"] for r in done)
        row["cpu_seconds"] = min(r["cpu_seconds"] for r in done)
        row["cpu_median"] = statistics.median(r["cpu_seconds"] for r in done)
        row["peak_rss_mib"] = max(r["peak_rss_mib"] for r in done)
        row["events_per_s"] = args.events / row["seconds"]
        row["all_runs_alike"] = all(r["match_set"] == first["match_set"] for r in done)
        if reference is not None:
            diff = differences(reference, first["match_set"])
            same = not diff["missing"] and not diff["extra"] and row["all_runs_alike"]
            row["same_matches"] = "yes" if same else "NO"
            row["diff"] = diff
        rows.append(row)
    if "kleene" in ok:
        base = next(r for r in rows if r["key"] == "kleene")
        for row in rows:
            row["ratio"] = row["seconds"] / base["seconds"]
            row["cpu_ratio"] = row["cpu_seconds"] / base["cpu_seconds"]
            # the medians, side by side (the targets are stated on these)
            row["median_ratio"] = row["seconds_median"] / base["seconds_median"]
            row["cpu_median_ratio"] = row["cpu_median"] / base["cpu_median"]

    print()
    print(f"machine: {machine()}")
    print(
        table(
            rows,
            [
                "engine",
                "version",
                "seconds",
                "seconds_median",
                "cpu_seconds",
                "cpu_median",
                "events_per_s",
                "matches",
                "same_matches",
                "peak_rss_mib",
                "ratio",
                "cpu_ratio",
                "median_ratio",
                "cpu_median_ratio",
                "startup_seconds",
            ],
        )
    )
    for row in rows:
        d = row.get("diff")
        if d and (d["missing"] or d["extra"]):
            print(
                f"{row['engine']}: {d['missing']} of kleene's matches missing "
                f"(e.g. {d['missing_examples']}), {d['extra']} extra (e.g. {d['extra_examples']})"
            )
        if row.get("duplicates"):
            print(f"{row['engine']}: {row['duplicates']} duplicate match lines")
    for r in errors:
        print(f"{r['engine']}: not run: {r['error']}")
    print(f"load average (1, 5, 15 min) before: {load_before}, after: {load_after}")

    RESULTS.mkdir(parents=True, exist_ok=True)
    record = {
        "machine": machine(),
        "params": vars(args),
        "load_before": load_before,
        "load_after": load_after,
        "rows": rows,
        "errors": errors,
    }
    (RESULTS / "peers.json").write_text(json.dumps(record, indent=1, default=str))
    if rows:
        _plot(rows, RESULTS / "peers.png", args.events)


def _load() -> str:
    """The 1, 5 and 15 minute load averages (other work sharing the machine)."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _plot(rows: list[dict[str, Any]], path: Path, events: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["key"] for r in rows]
    x = list(range(len(rows)))
    fig, (ax_t, ax_m) = plt.subplots(1, 2, figsize=(9, 3.8))
    ax_t.bar([i - 0.2 for i in x], [r["seconds"] for r in rows], 0.4, label="wall")
    ax_t.bar([i + 0.2 for i in x], [r["cpu_seconds"] for r in rows], 0.4, label="CPU")
    ax_t.set_xticks(x, names)
    ax_t.set_ylabel("processing seconds")
    ax_t.legend()
    ax_m.bar(names, [r["peak_rss_mib"] for r in rows], color="tab:green")
    ax_m.set_ylabel("peak RSS (MiB)")
    for ax in (ax_t, ax_m):
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle(f"(A B+ C) falling-then-rising price, {events:,} stock events")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
