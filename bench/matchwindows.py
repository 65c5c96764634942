"""Match windows in front of a SASE+ engine (``match_windows=True``): events per CPU
second with and without them on the Chemo and trades workloads.

    python -m bench.matchwindows [--patients 400] [--trades 100000] [--repeats 5]

Each case runs the same compiled query with and without the option, interleaved
(``--repeats`` times each, medians of CPU time), checks that both find the same
matches and prints one Markdown table: events, matches, the share of events the engine
was given (``kept``: what the front let through, after the prefilter), CPU seconds of
both and the gain (without / with).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pyarrow as pa

import kleene
from bench._common import machine, table
from kleene.datagen import chemo, trades
from kleene.events import read_batch
from kleene.runtime.matchwindows import WindowFront
from kleene.runtime.prefilter import Prefilter

#: Kleene closure of Prednisone doses between Ciclofosfamide and a low white count, per
#: patient: the prefilter's window test already keeps only events near a C and a B
CHEMO_QUERY = """
PATTERN SEQ(C c, P+ p[], B b)
WHERE skip_till_any_match(c, p[], b) { [PID] and b.V < 2000 }
WITHIN 12 days
"""

#: an Apple trade, then a large Google trade, then an IBM trade within a second: Apple
#: and IBM trades are frequent, large Google trades rare (``{volume}`` shares or more)
TRADES_QUERY = """
PATTERN SEQ(Trade a, Trade b, Trade m)
WHERE skip_till_next_match(a, b, m) {{
    a.symbol = 'AAPL' and b.symbol = 'GOOG' and b.volume > {volume} and m.symbol = 'IBM' }}
WITHIN 1000
"""


def _cpu(run: Callable[[], Any]) -> tuple[float, Any]:
    start = time.process_time()
    out = run()
    return time.process_time() - start, out


def kept_share(q: kleene.Query, events: pa.Table) -> float:
    """The share of the events the front lets through (after the prefilter)."""
    plan = q.plan
    batch = read_batch(events, q.fields, 0)
    window = q.window_size(False)
    assert window is not None
    pre = Prefilter(plan)
    clean = set(batch.present_types())
    accepts = pre.accepts(batch, clean)
    relevant = pre.relevant(batch, clean, window, accepts)
    keep = relevant & WindowFront(plan).keep(pre, batch, accepts, window, True)
    return float(np.count_nonzero(keep)) / max(1, int(np.count_nonzero(relevant)))


def measure(name: str, text: str, events: pa.Table, repeats: int, **options: Any) -> dict:
    plain = kleene.compile(text, max_matches=None, **options)
    front = kleene.compile(text, match_windows=True, max_matches=None, **options)
    times: dict[str, list[float]] = {"plain": [], "windows": []}
    found: dict[str, Any] = {}
    for _ in range(repeats):  # interleaved: the machine's load hits both alike
        for label, q in (("plain", plain), ("windows", front)):
            seconds, matches = _cpu(lambda q=q: q.run(events))
            times[label].append(seconds)
            found[label] = sorted(tuple(sorted(m.ids().items())) for m in matches)
    if found["plain"] != found["windows"]:
        raise AssertionError(f"{name}: match windows changed the matches")
    a, b = statistics.median(times["plain"]), statistics.median(times["windows"])
    return {
        "case": name,
        "events": events.num_rows,
        "matches": len(found["plain"]),
        "kept": f"{kept_share(front, events):.1%}",
        "plain s": a,
        "windows s": b,
        "gain": f"{a / b:.2f}x",
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--patients", type=int, default=400)
    p.add_argument("--trades", type=int, default=100_000)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    onco = chemo.generate(args.patients, days=365, seed=1)
    nyse = trades.generate(args.trades, symbols=10, seed=1, rate=250.0)
    rows = [
        measure(
            f"trades, SEQ(AAPL, GOOG > {v}, IBM)",
            TRADES_QUERY.format(volume=v),
            nyse,
            args.repeats,
        )
        for v in (3000, 2000, 1000)
    ]
    rows.append(
        measure("Chemo, SEQ(C, P+, B) per PID", CHEMO_QUERY, onco, args.repeats, time_unit="s")
    )
    print(f"machine: {machine()}; medians of {args.repeats} interleaved runs (CPU seconds)")
    print(table(rows, ["case", "events", "matches", "kept", "plain s", "windows s", "gain"]))


if __name__ == "__main__":
    main()
