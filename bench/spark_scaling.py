"""Spark scaling on the SIGMOD 2008 stock stream (section 6): local engine vs Spark.

Two queries over the same generated stream:

* ``keyed`` — the SASE stock query (partition key ``symbol``):
  ``SEQ(Stock+ a[], Stock b) WHERE [symbol] AND a[1].price % 500 = 0 AND
  a[i].price > a[i-1].price AND b.volume < 150 WITHIN 100``;
* ``unkeyed`` — no partition key, so without time slicing Spark runs it on one core:
  ``SEQ(Stock a, Stock b, Stock c) WHERE a.price % 50 = 0 AND b.price > a.price AND
  c.price > b.price AND c.volume < 100 WITHIN 20``;
* ``heavy`` — an expensive keyed Kleene query (every rising run of a symbol followed by
  a drop, about one match per event): ``SEQ(Stock+ a[], Stock b) WHERE [symbol] AND
  a[i].price > a[i-1].price AND b.price < a[a.LEN].price WITHIN 20``.

Cases: the local engine (``q.run`` on the whole table, the stream read before the clock
starts), and ``kleene.spark.match`` on ``local[1]`` and ``local[2]``, without and with
time slicing (``slice="auto"`` for the unkeyed query, 2 slices per core for the keyed
ones), with the mapInArrow method, plus the applyInArrow method (``group``) on
``local[2]`` for comparison. A Spark case's time runs from the ``match`` call until
every match row is written to Spark's ``noop`` sink; it includes reading the Parquet
input, the position job, the quantile job when sliced, the shuffle and the sort, not
the session start. Each Spark case first runs once on the first 50,000 events (warming
the JVM and starting the Python workers), then ``--repeat`` times; the best time is
reported. Each case runs in a fresh process;
peak memory is the peak, sampled every 0.2 s, of the summed RSS of that process and all
its descendants (the Spark JVM and its Python workers); forked workers share pages, so
the sum overstates the real footprint somewhat. ``cpu_s`` is the CPU time (user +
system) the process tree spent in the reported run, and ``cores_busy`` is ``cpu_s``
divided by the wall time: how many cores the case kept busy on average.

    python -m bench.spark_scaling --events 1000000 [--events 10000000] [--symbols 10]
        [--queries keyed,unkeyed,heavy] [--repeat 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

QUERIES = {
    "keyed": """PATTERN SEQ(Stock+ a[], Stock b)
WHERE skip_till_next_match(a[], b) { [symbol] AND a[1].price % 500 = 0
      AND a[i].price > a[i-1].price AND b.volume < 150 }
WITHIN 100""",
    "unkeyed": """PATTERN SEQ(Stock a, Stock b, Stock c)
WHERE skip_till_next_match(a, b, c) { a.price % 50 = 0 AND b.price > a.price
      AND c.price > b.price AND c.volume < 100 }
WITHIN 20""",
    "heavy": """PATTERN SEQ(Stock+ a[], Stock b)
WHERE skip_till_next_match(a[], b) { [symbol] AND a[i].price > a[i-1].price
      AND b.price < a[a.LEN].price }
WITHIN 20""",
}


# --- one case, in a child process -------------------------------------------------------


def measure(case: dict[str, Any]) -> dict[str, Any]:
    import kleene

    q = kleene.compile(QUERIES[case["query"]])
    if case["engine"] == "local":
        import pyarrow.parquet as pq

        table = pq.read_table(case["data"])
        cpu = tree_cpu_seconds(os.getpid())
        start = time.perf_counter()
        matches = len(q.run(table))
        seconds = time.perf_counter() - start
        return {
            "seconds": seconds,
            "matches": matches,
            "cpu_s": tree_cpu_seconds(os.getpid()) - cpu,
        }

    import kleene.spark as ks

    spark = ks.local_session(
        case["cores"],
        driver_memory=case.get("driver_memory", "4g"),
        conf={"spark.sql.files.maxPartitionBytes": str(16 * 2**20)},
    )
    df = spark.read.parquet(case["data"])
    warm = ks.match(df.limit(50_000), q, slice=case["slice"], method=case["method"])
    warm.matches.write.format("noop").mode("overwrite").save()
    best, best_cpu = float("inf"), 0.0
    for _ in range(case.get("repeat", 1)):
        cpu = tree_cpu_seconds(os.getpid())
        start = time.perf_counter()
        result = ks.match(df, q, slice=case["slice"], method=case["method"])
        result.matches.write.format("noop").mode("overwrite").save()
        seconds = time.perf_counter() - start
        if seconds < best:
            best, best_cpu = seconds, tree_cpu_seconds(os.getpid()) - cpu
    matches = result.matches.count()
    spark.stop()
    return {"seconds": best, "matches": matches, "slices": result.layout.slices, "cpu_s": best_cpu}


# --- the parent: data, process-tree memory, table, plot ---------------------------------


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def tree_cpu_seconds(pid: int) -> float:
    """CPU time (user + system) used so far by a process and its live descendants."""
    tick = os.sysconf("SC_CLK_TCK")
    tree = _children()
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        stack.extend(tree.get(p, ()))
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / tick


def tree_rss_mib(pid: int) -> float:
    """Summed VmRSS of a process and all its descendants, in MiB."""
    tree = _children()
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        stack.extend(tree.get(p, ()))
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    code = (
        "import json, sys\n"
        "from bench.spark_scaling import measure\n"
        "print('RESULT ' + json.dumps(measure(json.loads(sys.argv[1]))))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent))
    proc = subprocess.Popen(
        [sys.executable, "-c", code, json.dumps(case)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    peak = 0.0
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_rss_mib(proc.pid))
            stop.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = proc.communicate()
    stop.set()
    sampler.join()
    if proc.returncode != 0:
        raise RuntimeError(f"case {case} failed with exit code {proc.returncode}")
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    result = json.loads(line[len("RESULT ") :])
    result["peak_mib"] = peak
    return result


def write_data(events: int, symbols: int, folder: Path, files: int = 8) -> None:
    import pyarrow.parquet as pq

    from kleene.datagen.stock import generate

    table = generate(events, symbols=symbols, seed=42)
    folder.mkdir(parents=True, exist_ok=True)
    step = -(-events // files)
    for i in range(files):
        pq.write_table(table.slice(i * step, step), folder / f"part-{i:02d}.parquet")


def cases(data: str, query: str, repeat: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"engine": "local", "query": query, "data": data}]
    base = {"engine": "spark", "query": query, "data": data, "repeat": repeat}
    for cores in (1, 2):
        sliced = "auto" if query == "unkeyed" else 2 * cores
        for slice_ in (None, sliced):
            out.append({**base, "cores": cores, "slice": slice_, "method": "map"})
    out.append({**base, "cores": 2, "slice": None, "method": "group"})
    return out


def label(case: dict[str, Any]) -> str:
    if case["engine"] == "local":
        return "local engine (q.run)"
    sliced = "sliced" if case["slice"] else "unsliced"
    return f"spark local[{case['cores']}] {case['method']} {sliced}"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = sorted({(r["events"], r["query"]) for r in rows})
    labels = list(dict.fromkeys(r["case"] for r in rows))
    fig, ax = plt.subplots(figsize=(10, 4.5))
    width = 0.8 / len(labels)
    for i, name in enumerate(labels):
        xs, ys = [], []
        for j, group in enumerate(groups):
            hit = [r for r in rows if (r["events"], r["query"]) == group and r["case"] == name]
            if hit:
                xs.append(j + i * width)
                ys.append(hit[0]["events_per_s"] / 1000)
        ax.bar(xs, ys, width, label=name)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))])
    ax.set_xticklabels([f"{q}\n{n:,} events" for n, q in groups])
    ax.set_ylabel("thousand events / s")
    ax.set_title("kleene: local engine vs Spark (stock stream)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    from bench._common import RESULTS, machine, table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, action="append")
    parser.add_argument("--symbols", type=int, default=10)
    parser.add_argument("--queries", default="keyed,unkeyed,heavy")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    sizes = args.events or [1_000_000]
    rows: list[dict[str, Any]] = []
    print(machine())
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    with tempfile.TemporaryDirectory(prefix="kleene-spark-bench-") as tmp:
        for n in sizes:
            data = Path(tmp) / f"stock-{n}"
            write_data(n, args.symbols, data)
            for query in args.queries.split(","):
                for case in cases(str(data), query, args.repeat):
                    result = run_case(case)
                    row = {
                        "events": n,
                        "query": query,
                        "case": label(case),
                        "seconds": result["seconds"],
                        "events_per_s": n / result["seconds"],
                        "matches": result["matches"],
                        "slices": result.get("slices", 1),
                        "cpu_s": result.get("cpu_s", float("nan")),
                        "cores_busy": result.get("cpu_s", float("nan")) / result["seconds"],
                        "peak_mib": result["peak_mib"],
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    cols = [
        "events",
        "query",
        "case",
        "slices",
        "seconds",
        "events_per_s",
        "matches",
        "cpu_s",
        "cores_busy",
        "peak_mib",
    ]
    print()
    print(table(rows, cols))
    RESULTS.mkdir(parents=True, exist_ok=True)
    stem = "spark_scaling_" + "_".join(f"{n:.0e}".replace("+0", "").replace("+", "") for n in sizes)
    (RESULTS / f"{stem}.json").write_text(json.dumps(rows, indent=1))
    plot(rows, RESULTS / f"{stem}.png")
    print(f"\nsaved {RESULTS / stem}.json and .png")


if __name__ == "__main__":
    main()
