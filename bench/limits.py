"""How fast and in how much memory ``max_matches`` stops each kind's exploding query.

Each kind of query has an input on which its matches grow exponentially
(:mod:`kleene.datagen.exploding`). With ``max_matches=10`` every kind must raise
``MatchLimitError`` while it produces matches: this prints, per kind, the wall time to
the error and the peak memory Python allocated meanwhile (tracemalloc), each in a fresh
process.

    python -m bench.limits [--max-matches 10] [--kinds sase,interval]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import tracemalloc

from bench._common import machine, table
from kleene.datagen import exploding


def measure(kind: str, limit: int) -> dict[str, object]:
    """One kind's exploding query with ``max_matches=limit``, in this process."""
    import kleene
    from kleene.errors import MatchLimitError

    text, events, options = exploding.BY_KIND[kind]()
    query = kleene.compile(text, **options, max_matches=limit)
    handed: list[object] = []
    tracemalloc.start()
    start = time.perf_counter()
    outcome = "no error"
    try:
        m = query.matcher(on_matches=handed.extend)
        m.push(events)
        m.flush()
    except MatchLimitError:
        outcome = "MatchLimitError"
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "kind": kind,
        "events": len(events),
        "outcome": outcome,
        "handed out": len(handed),
        "seconds": round(seconds, 3),
        "peak MiB": round(peak / 2**20, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-matches", type=int, default=10)
    parser.add_argument("--kinds", default=",".join(exploding.BY_KIND))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # the child process's kind
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.max_matches)))
        return
    rows = []
    for kind in args.kinds.split(","):
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.limits",
                "--one",
                kind,
                "--max-matches",
                str(args.max_matches),
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=600,
        )
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(machine())
    print(table(rows, ["kind", "events", "outcome", "handed out", "seconds", "peak MiB"]))


if __name__ == "__main__":
    main()
