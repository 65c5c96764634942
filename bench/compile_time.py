"""Compile time against the number of WHERE conjuncts.

Compiling a query places each conjunct at the state of its last identifier (SIGMOD 2008,
section 5.2.1) and builds the edge functions; the work should grow linearly with the
number of conjuncts. This prints, per size, the median CPU seconds of ``kleene.compile``
over ``--repeat`` runs and the seconds per thousand conjuncts (flat when linear).

    python -m bench.compile_time [--sizes 500,1000,2000,4000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import kleene
from bench._common import machine


def query_text(conjuncts: int) -> str:
    """A two-variable query whose WHERE has ``conjuncts`` comparisons."""
    terms = " and ".join(f"b.x{k} > a.x{k}" for k in range(conjuncts))
    return f"PATTERN SEQ(A a, B b) WHERE {terms} WITHIN 10"


def cpu_seconds(text: str, repeat: int) -> float:
    """Median CPU seconds of compiling ``text``."""
    times = []
    for _ in range(repeat):
        started = time.process_time()
        kleene.compile(text)
        times.append(time.process_time() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="500,1000,2000,4000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    kleene.compile(query_text(1))  # load the grammar once, outside the timings
    print(f"machine: {machine()}\n")
    print("| conjuncts | CPU s (median) | CPU s per 1,000 conjuncts |")
    print("|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        seconds = cpu_seconds(query_text(size), args.repeat)
        print(f"| {size:,} | {seconds:.3f} | {seconds / size * 1000:.3f} |")


if __name__ == "__main__":
    main()
