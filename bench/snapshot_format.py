"""Snapshot cost: the versioned data-only format against a raw pickle of the same state.

Each case runs a query over a generated stock stream, then times ``snapshot()`` and
resuming (``Query.matcher(state=...)``) against ``pickle.dumps`` of the matcher's state
and ``pickle.loads`` plus a fresh matcher (what snapshots were before format version 1).
Run: ``python -m bench.snapshot_format``.
"""

from __future__ import annotations

import pickle
import time
from collections.abc import Callable
from typing import Any

import kleene
from kleene.datagen.stock import generate

CASES = [
    (
        "nfa, Kleene +, skip till next, W 500",
        "PATTERN SEQ(Stock a, Stock+ b[], Stock c) WHERE skip_till_next_match(a, b[], c) "
        "{ [symbol] and b[i].price > b[i-1].price and c.price < a.price } WITHIN 500",
        {"engine": "nfa"},
        2_000,
    ),
    (
        "postpone, Kleene +, skip till any, W 30",
        "PATTERN SEQ(Stock a, Stock+ b[], Stock c) WHERE skip_till_any_match(a, b[], c) "
        "{ [symbol] and b[i].price > a.price and c.volume < 100 } WITHIN 30",
        {"engine": "postpone"},
        2_000,
    ),
    (
        "merge, negation, non-overlap, W 200",
        "PATTERN SEQ(Stock a, ~(Stock n), Stock b) WHERE skip_till_any_match(a, b) "
        "{ [symbol] and b.price > a.price and n.volume > 990 } WITHIN 200 OUTPUT NON_OVERLAP",
        {"engine": "merge"},
        2_000,
    ),
    (
        "vector, carried rows, partition contiguity",
        "PATTERN SEQ(Stock+ a[], Stock b) WHERE partition-contiguity AND [symbol] "
        "AND a[i].price > a[i-1].price AND b.volume < 2 WITHIN 5000",
        {"engine": "vector"},
        20_000,
    ),
]


def _best(f: Callable[[], Any], repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        f()
        times.append(time.perf_counter() - began)
    return min(times)


def main() -> None:
    print(f"{'case':44} {'runs':>6} {'format':>8} {'save ms':>8} {'load ms':>8} {'bytes':>9}")
    for name, text, options, n in CASES:
        q = kleene.compile(text, **options)
        m = q.matcher()
        m.push(generate(n, symbols=4, seed=1))
        data = m.snapshot()
        raw = pickle.dumps(m.st, protocol=pickle.HIGHEST_PROTOCOL)
        save = _best(m.snapshot)
        load = _best(lambda: q.matcher(state=data))  # noqa: B023 -- called right here
        pickle_save = _best(lambda: pickle.dumps(m.st, protocol=pickle.HIGHEST_PROTOCOL))  # noqa: B023

        def old_load() -> None:
            fresh = q.matcher()  # noqa: B023
            fresh.st = pickle.loads(raw)  # noqa: B023

        pickle_load = _best(old_load)
        runs = m.live_runs
        print(
            f"{name:44} {runs:>6} {'kleene':>8} {save * 1e3:>8.2f} {load * 1e3:>8.2f} "
            f"{len(data):>9}"
        )
        print(
            f"{'':44} {'':>6} {'pickle':>8} {pickle_save * 1e3:>8.2f} "
            f"{pickle_load * 1e3:>8.2f} {len(raw):>9}"
        )


if __name__ == "__main__":
    main()
