"""NFA^b throughput and memory on the SIGMOD 2008 stock stream (section 6).

The query is the original SASE example's shape:

    PATTERN SEQ(Stock+ a[], Stock b)
    WHERE <strategy> AND [symbol] AND a[1].price % 500 = 0
          AND a[i].price > a[i-1].price AND b.volume < 150
    WITHIN <W>

Each case runs in a fresh process; it reports events per second (matching only, the
stream is generated before the clock starts), matches, and the process's peak RSS.

    python -m bench.stock_nfa [--events N] [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

QUERY = """PATTERN SEQ(Stock+ a[], Stock b)
WHERE {strategy} AND [symbol] AND a[1].price % 500 = 0
      AND a[i].price > a[i-1].price AND b.volume < 150
WITHIN {window}"""


def measure(case: dict[str, Any]) -> dict[str, Any]:
    import kleene
    from kleene.datagen.stock import generate

    events = generate(
        events=case["events"], symbols=case["symbols"], increase_prob=case["p"], seed=case["seed"]
    )
    q = kleene.compile(QUERY.format(strategy=case["strategy"], window=case["window"]))
    m = q.matcher()
    start = time.perf_counter()
    n_matches = 0
    peak_runs = 0
    for batch in events.to_batches(max_chunksize=65_536):
        n_matches += len(m.push(batch))
        peak_runs = max(peak_runs, m.live_runs)
    n_matches += len(m.flush())
    seconds = time.perf_counter() - start
    return {
        "seconds": seconds,
        "events_per_s": case["events"] / seconds,
        "matches": n_matches,
        "peak_runs": peak_runs,
    }


def main() -> None:
    from bench._common import RESULTS, machine, run_isolated, table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--symbols", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--windows", default="500,1000,2000")
    args = parser.parse_args()
    rows = []
    for strategy in ("partition-contiguity", "skip-till-next-match"):
        for p in (0.7, 0.55):
            for window in map(int, args.windows.split(",")):
                case = {
                    "events": args.events,
                    "symbols": args.symbols,
                    "p": p,
                    "seed": 1,
                    "strategy": strategy,
                    "window": window,
                }
                runs = [run_isolated("bench.stock_nfa", case) for _ in range(args.repeat)]
                row = {**case, **runs[0]}
                row["events_per_s"] = statistics.median(r["events_per_s"] for r in runs)
                row["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
                rows.append(row)
                print(
                    f"{strategy:22} p={p} W={window:5}: {row['events_per_s']:>10,.0f} ev/s "
                    f"{row['matches']:>7} matches {row['peak_rss_mib']:.0f} MiB",
                    flush=True,
                )
    print()
    print(f"machine: {machine()}")
    print(
        table(
            rows,
            ["strategy", "p", "window", "events_per_s", "matches", "peak_runs", "peak_rss_mib"],
        )
    )
    _plot(rows, RESULTS / "stock_nfa.png")


def _plot(rows: list[dict[str, Any]], path: Any) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for strategy, p in sorted({(r["strategy"], r["p"]) for r in rows}):
        pts = [
            (r["window"], r["events_per_s"])
            for r in rows
            if r["strategy"] == strategy and r["p"] == p
        ]
        ax.plot(*zip(*pts, strict=True), marker="o", label=f"{strategy}, p={p}")
    ax.set_xlabel("window W")
    ax.set_ylabel("events per second")
    ax.set_title("NFA^b on the stock stream")
    ax.legend()
    ax.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
