"""The floor: kleene's time on a selective query as a multiple of the least work any
engine must do on the same file.

The floor is reading the Parquet file with pyarrow and evaluating the query's
single-event filters (the predicates that look at one event alone: its type and the
conditions on each variable's own attributes, SIGMOD 2008 section 3.2 and SIGMOD 2014
section 5.2) with ``pyarrow.compute``, counting the candidate events of each variable.
kleene's time is reading the same file, compiling the query (its CPU time is also shown
apart: the first compile in a process builds the parser) and matching. Both read the
whole file. The queries are selective (fewer than one match per 10^4 events), so little
of kleene's time can go into building matches.

Each measurement runs in a fresh process (the file is already in the page cache from
writing it); the median of ``--repeat`` runs is reported, wall and CPU time (pyarrow may
read with several threads; kleene matches on one), with the peak RSS of each side.

    python -m bench.floor [--events 1000000] [--jobs 3300] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

# Each case: the query and its data; _filters holds its single-event filters.
CASES: dict[str, dict[str, str]] = {
    "stock": {
        "query": """PATTERN SEQ(Stock a, Stock b)
WHERE skip_till_next_match AND [symbol]
  AND a.price % 500 = 0 AND a.volume > 900
  AND b.volume < 10 AND b.price > a.price
WITHIN 200""",
        "data": "stock stream (SIGMOD 2008, section 6): 10 symbols, p = 0.55",
    },
    "hadoop": {
        "query": """PATTERN SEQ(ReducerStart a, DataPull b)
WHERE skip_till_next_match { [task_id] and b.period > 10 }
WITHIN 10 minutes""",
        "data": "Hadoop trace (SIGMOD 2014, section 6.5): 20 nodes",
    },
}


def _filters(case: str) -> dict[str, Any]:
    """Per variable, a function from the table to its boolean candidate mask."""
    import pyarrow.compute as pc

    if case == "stock":
        return {
            "a": lambda t: pc.and_(
                pc.and_(pc.equal(t["type"], "Stock"), pc.equal(pc.modulo(t["price"], 500), 0)),
                pc.greater(t["volume"], 900),
            ),
            "b": lambda t: pc.and_(pc.equal(t["type"], "Stock"), pc.less(t["volume"], 10)),
        }
    return {
        "a": lambda t: pc.equal(t["type"], "ReducerStart"),
        "b": lambda t: pc.and_(pc.equal(t["type"], "DataPull"), pc.greater(t["period"], 10)),
    }


def measure(payload: dict[str, Any]) -> dict[str, Any]:
    import pyarrow.dataset  # noqa: F401  (loaded lazily by the first read otherwise)
    import pyarrow.parquet as pq

    if payload["what"] == "floor":
        import pyarrow.compute as pc

        filters = _filters(payload["case"])
        cpu = time.process_time()
        start = time.perf_counter()
        table = pq.read_table(payload["file"])
        read = time.perf_counter() - start
        candidates = {var: pc.sum(mask(table)).as_py() or 0 for var, mask in filters.items()}
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
        return {
            "seconds": seconds,
            "cpu_seconds": cpu,
            "read_seconds": read,
            "candidates": candidates,
        }

    import kleene

    cpu = time.process_time()
    start = time.perf_counter()
    table = pq.read_table(payload["file"])
    read = time.perf_counter() - start
    compiling = time.process_time()
    q = kleene.compile(CASES[payload["case"]]["query"], time_unit="s")  # times in seconds
    compiling = time.process_time() - compiling
    matches = len(q.run(table))
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    return {
        "seconds": seconds,
        "cpu_seconds": cpu,
        "read_seconds": read,
        "compile_cpu_seconds": compiling,
        "matches": matches,
    }


def _write(case: str, args: argparse.Namespace, folder: Path) -> tuple[Path, int]:
    import pyarrow.parquet as pq

    if case == "stock":
        from kleene.datagen.stock import generate as stock

        table = stock(args.events, symbols=10, increase_prob=0.55, seed=args.seed)
    else:
        from kleene.datagen.hadoop import generate as hadoop

        table = hadoop(jobs=args.jobs, nodes=20, seed=args.seed)
    path = folder / f"{case}.parquet"
    pq.write_table(table, path)
    return path, table.num_rows


def _load() -> str:
    """The 1, 5 and 15 minute load averages (other work sharing the machine)."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000, help="stock events")
    parser.add_argument("--jobs", type=int, default=3300, help="Hadoop jobs (~300 events each)")
    parser.add_argument("--cases", default="stock,hadoop")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kleene-floor-") as tmp:
        rows = _run_cases(args, Path(tmp))
    _report(rows)


def _run_cases(args: argparse.Namespace, folder: Path) -> list[dict[str, Any]]:
    from bench._common import run_isolated

    rows = []
    load_before = _load()
    for case in args.cases.split(","):
        path, n = _write(case, args, folder)
        runs: dict[str, list[dict[str, Any]]] = {"floor": [], "kleene": []}
        for _ in range(args.repeat):
            for what in runs:
                payload = {"what": what, "case": case, "file": str(path)}
                runs[what].append(run_isolated("bench.floor", payload))
        floor = statistics.median(r["seconds"] for r in runs["floor"])
        engine = statistics.median(r["seconds"] for r in runs["kleene"])
        floor_cpu = statistics.median(r["cpu_seconds"] for r in runs["floor"])
        engine_cpu = statistics.median(r["cpu_seconds"] for r in runs["kleene"])
        matches = runs["kleene"][0]["matches"]
        row = {
            "case": case,
            "events": n,
            "matches": matches,
            "matches_per_10k": matches / n * 1e4,
            "candidates": runs["floor"][0]["candidates"],
            "floor_s": floor,
            "floor_read_s": statistics.median(r["read_seconds"] for r in runs["floor"]),
            "floor_rss_mib": max(r["peak_rss_mib"] for r in runs["floor"]),
            "kleene_s": engine,
            "kleene_compile_cpu_s": statistics.median(
                r["compile_cpu_seconds"] for r in runs["kleene"]
            ),
            "kleene_rss_mib": max(r["peak_rss_mib"] for r in runs["kleene"]),
            "multiple": engine / floor,
            "floor_cpu_s": floor_cpu,
            "kleene_cpu_s": engine_cpu,
            "cpu_multiple": engine_cpu / floor_cpu,
        }
        rows.append(row)
        print(
            f"{case}: {n:,} events, {matches} matches; floor {floor:.3f} s, kleene "
            f"{engine:.2f} s: {row['multiple']:,.1f}x (CPU {row['cpu_multiple']:,.1f}x)",
            flush=True,
        )
    load_after = _load()
    for row in rows:
        row["load"] = [load_before, load_after]
    return rows


def _report(rows: list[dict[str, Any]]) -> None:
    from bench._common import RESULTS, machine, table

    load_before, load_after = rows[0]["load"] if rows else ("?", "?")
    print()
    print(f"machine: {machine()}")
    print(f"load average (1, 5, 15 min) before: {load_before}, after: {load_after}")
    print(
        table(
            rows,
            [
                "case",
                "events",
                "matches",
                "matches_per_10k",
                "floor_s",
                "floor_read_s",
                "floor_rss_mib",
                "kleene_s",
                "kleene_rss_mib",
                "multiple",
                "floor_cpu_s",
                "kleene_cpu_s",
                "kleene_compile_cpu_s",
                "cpu_multiple",
            ],
        )
    )
    RESULTS.mkdir(parents=True, exist_ok=True)
    record = {
        "machine": machine(),
        "load": [load_before, load_after],
        "cases": CASES,
        "rows": rows,
    }
    (RESULTS / "floor.json").write_text(json.dumps(record, indent=1))


if __name__ == "__main__":
    main()
