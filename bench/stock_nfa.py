"""NFA^b throughput and memory on the SIGMOD 2008 stock stream (section 6, Table 1).

The query template of the paper:

    PATTERN SEQ(Stock+ a[], Stock b)
    WHERE <strategy> AND [symbol] AND a[1].price % 500 = 0 AND <P> AND b.volume < 150
    WITHIN <W>

with the iterator predicate P among p1 (true), p2 (``a[i].price > a[i-1].price``) and
p3 (``a[i].price > max|min|avg(a[..i-1].price)``), strategies partition contiguity and
skip till next match, windows W and price-increase probabilities p; the basic
algorithm (``nfa``) and run merging (``merge``, section 5.2.2) side by side in one run.
Each case runs in a fresh process; it reports events per second (matching only, the
stream is generated before the clock starts), matches, runs merged, peak live runs and
peak RSS. Timestamps count events over both symbols, so W time units hold about W/2
events of each symbol.

    python -m bench.stock_nfa [--events N] [--windows 500,2000] [--probs 0.7] [--repeat R]
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any

QUERY = """PATTERN SEQ(Stock+ a[], Stock b)
WHERE {strategy} AND [symbol] AND a[1].price % 500 = 0 AND {predicate} AND b.volume < 150
WITHIN {window}"""
PREDICATES = {
    "p1": "true",
    "p2": "a[i].price > a[i-1].price",
    "p3-max": "a[i].price > max(a[..i-1].price)",
    "p3-min": "a[i].price > min(a[..i-1].price)",
    "p3-avg": "a[i].price > avg(a[..i-1].price)",
}
ENGINES = ("nfa", "merge")


def measure(case: dict[str, Any]) -> dict[str, Any]:
    import kleene
    from kleene.datagen.stock import generate

    events = generate(
        events=case["events"], symbols=case["symbols"], increase_prob=case["p"], seed=case["seed"]
    )
    text = QUERY.format(
        strategy=case["strategy"], window=case["window"], predicate=PREDICATES[case["predicate"]]
    )
    q = kleene.compile(text, engine=case["engine"])
    m = q.matcher()
    start = time.perf_counter()
    n_matches = 0
    for batch in events.to_batches(max_chunksize=65_536):
        n_matches += len(m.push(batch))
    n_matches += len(m.flush())
    seconds = time.perf_counter() - start
    core = m.st.core
    return {
        "seconds": seconds,
        "events_per_s": case["events"] / seconds,
        "matches": n_matches,
        "peak_runs": core.peak_runs,
        "merged": core.merged,
    }


def main() -> None:
    from bench._common import RESULTS, machine, run_isolated, table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--symbols", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--windows", default="500,2000")
    parser.add_argument("--probs", default="0.7")
    parser.add_argument("--predicates", default=",".join(PREDICATES))
    args = parser.parse_args()
    rows = []
    for strategy in ("partition-contiguity", "skip-till-next-match"):
        for p in map(float, args.probs.split(",")):
            for predicate in args.predicates.split(","):
                for window in map(int, args.windows.split(",")):
                    for engine in ENGINES:
                        case = {
                            "events": args.events,
                            "symbols": args.symbols,
                            "p": p,
                            "seed": 1,
                            "strategy": strategy,
                            "window": window,
                            "predicate": predicate,
                            "engine": engine,
                        }
                        runs = [run_isolated("bench.stock_nfa", case) for _ in range(args.repeat)]
                        row = {**case, **runs[0]}
                        row["events_per_s"] = statistics.median(r["events_per_s"] for r in runs)
                        row["peak_rss_mib"] = max(r["peak_rss_mib"] for r in runs)
                        rows.append(row)
                        print(
                            f"{strategy:21} p={p} {predicate:7} W={window:5} {engine:5} "
                            f"{row['events_per_s']:>10,.0f} ev/s {row['matches']:>7} matches "
                            f"{row['peak_runs']:>6} runs",
                            flush=True,
                        )
    print()
    print(f"machine: {machine()}")
    print(
        table(
            rows,
            [
                "strategy",
                "p",
                "predicate",
                "window",
                "engine",
                "events_per_s",
                "matches",
                "peak_runs",
                "merged",
                "peak_rss_mib",
            ],
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
    ax.legend(fontsize=6, ncol=2)
    ax.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
