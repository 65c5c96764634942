"""Point-based vs event-based evaluation over imprecise timestamps (VLDB 2010, section
5.1, Figure 4(a) and (e)).

The synthetic stream of section 5.1 (:func:`kleene.datagen.uncertain.generate`: one
attribute cycling 1..1000, the event at time t has the interval [t - δ, t + δ]) under
``SEQ(E e1, ..., E el) WHERE e1.value % v = 0 AND ... WITHIN W`` (the paper's defaults:
l = 3, W = 100; its selectivities v_i are not given, v = 20 here), varying δ. Events are
admitted once (not timed), then pushed in chunks of 100 to the framework with the
arrival-order bound now.lower, as a stream would; the matching time is measured until
the stream ends or the time limit passes, and throughput is events matched per second
of CPU. Every case returns the same results (the property tests hold both frameworks
to the possible-worlds oracle); the number of results is printed as a check.

    python -m bench.imprecise [--events N] [--deltas 1,5,20,50] [--limit SECONDS]
                              [--strategies any,next] [--length L] [--window W]
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from bench._common import machine, table

STRATEGIES = {"any": "skip_till_any_match", "next": "skip_till_next_match"}
CHUNK = 100


def query_text(length: int, every: int, window: int) -> str:
    pattern = ", ".join(f"E e{i}" for i in range(1, length + 1))
    where = " AND ".join(f"e{i}.value % {every} = 0" for i in range(1, length + 1))
    return f"PATTERN SEQ({pattern}) WHERE {where} WITHIN {window}"


def measure(case: dict[str, Any]) -> dict[str, Any]:
    import kleene
    from kleene.datagen.uncertain import generate
    from kleene.imprecise.admission import Admission
    from kleene.imprecise.choice import choose, framework

    text = query_text(case["length"], case["every"], case["window"])
    delta = case["delta"]
    q = kleene.compile(
        text, time="interval", strategy=STRATEGIES[case["strategy"]], u_max=2 * delta
    )
    admission = Admission(q.plan, q.fields, q.interval)
    rows = generate(case["events"], delta=delta).to_pylist()
    chunks = []
    for k in range(0, len(rows), CHUNK):
        admitted = admission.admit(rows[k : k + CHUNK])
        chunks.append((admitted, admission.now_lower))
    chosen = choose(q.plan, case["engine"], 2 * delta)
    evaluator = framework(q.plan, chosen, q.window, 2 * delta, q.keep)
    found = 0
    done = 0
    began = time.process_time()
    for admitted, now_lower in chunks:
        found += len(evaluator.push(admitted, now_lower))
        done += len(admitted)
        if time.process_time() - began > case["limit"]:
            break
    else:
        found += len(evaluator.flush())
    cpu = time.process_time() - began
    return {
        **case,
        "method": chosen.method or "-",
        "processed": done,
        "complete": done == len(rows),
        "results": found,
        "cpu_s": cpu,
        "events_per_s": done / cpu if cpu else float("inf"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=5000)
    parser.add_argument("--deltas", default="1,5,20,50")
    parser.add_argument("--limit", type=float, default=20.0, help="CPU seconds per case")
    parser.add_argument("--strategies", default="any,next")
    parser.add_argument("--length", type=int, default=3)
    parser.add_argument("--window", type=int, default=100)
    parser.add_argument("--every", type=int, default=20, help="selectivity: value % v = 0")
    args = parser.parse_args()
    print(machine())
    print(query_text(args.length, args.every, args.window))
    rows = []
    for strategy in args.strategies.split(","):
        for delta in (int(d) for d in args.deltas.split(",")):
            pair = {}
            for engine in ("points", "events"):
                case = {
                    "engine": engine,
                    "strategy": strategy,
                    "delta": delta,
                    "events": args.events,
                    "limit": args.limit,
                    "length": args.length,
                    "window": args.window,
                    "every": args.every,
                }
                pair[engine] = measure(case)
                rows.append(pair[engine])
            rate = pair["events"]["events_per_s"] / pair["points"]["events_per_s"]
            pair["events"]["speedup"] = rate
            pair["points"]["speedup"] = 1.0
    columns = ["strategy", "delta", "engine", "method", "processed", "results", "cpu_s"]
    print(table(rows, [*columns, "events_per_s", "speedup"]))


if __name__ == "__main__":
    main()
