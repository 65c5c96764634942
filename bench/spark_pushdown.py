"""Spark with and without the single-event filters pushed into the Parquet scan.

A selective query over the stock stream of SIGMOD 2008 section 6 (10 symbols, written
as 8 Parquet files by :func:`bench.spark_scaling.write_data`): about 3% of the events
pass a single-event property of some state (``a.volume < 15``, ``b.volume > 985``)::

    SEQ(Stock a, Stock b) WHERE skip_till_next_match(a, b) { [symbol]
        AND a.volume < 15 AND b.volume > 985 AND b.price > a.price } WITHIN 50

``kleene.spark.match(spark.read.parquet(folder), query, pushdown=...)`` on ``local[2]``,
timed from the call until every match row is written to Spark's ``noop`` sink (reading,
the position and latest-time jobs, the late check with push-down, the shuffle, the sort,
the matchers), best of ``--repeat`` runs after one warm-up run of each case; ``cpu_s``
is the CPU time of the whole process tree (driver, JVM, Python workers).

    python -m bench.spark_pushdown --events 1000000 [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path
from typing import Any

QUERY = """PATTERN SEQ(Stock a, Stock b)
WHERE skip_till_next_match(a, b) { [symbol] AND a.volume < 15 AND b.volume > 985
      AND b.price > a.price }
WITHIN 50"""


def main() -> None:
    import pyarrow.compute as pc
    import pyarrow.dataset as ds

    import kleene.spark as ks
    from bench._common import machine, table
    from bench.spark_scaling import tree_cpu_seconds, write_data

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kleene-pushdown-bench-") as tmp:
        data = Path(tmp) / "stock"
        write_data(args.events, 10, data)
        volume = ds.dataset(str(data)).to_table(columns=["volume"]).column("volume")
        passing = pc.sum(pc.or_(pc.less(volume, 15), pc.greater(volume, 985))).as_py()
        spark = ks.local_session(2, driver_memory="4g")
        df = spark.read.parquet(str(data))
        cases = [False, True]
        for pushdown in cases:  # warm-up
            ks.match(df, QUERY, pushdown=pushdown).matches.write.format("noop").mode(
                "overwrite"
            ).save()
        best: dict[bool, tuple[float, float, int]] = {}
        for _ in range(args.repeat):
            for pushdown in cases:
                cpu = tree_cpu_seconds(os.getpid())
                start = time.perf_counter()
                result = ks.match(df, QUERY, pushdown=pushdown)
                result.matches.write.format("noop").mode("overwrite").save()
                seconds = time.perf_counter() - start
                if pushdown not in best or seconds < best[pushdown][0]:
                    cpu_s = tree_cpu_seconds(os.getpid()) - cpu
                    best[pushdown] = (seconds, cpu_s, result.matches.count())
        spark.stop()
    for pushdown in cases:
        seconds, cpu_s, matches = best[pushdown]
        rows.append(
            {
                "events": args.events,
                "passing": f"{passing / args.events:.1%}",
                "pushdown": "on" if pushdown else "off",
                "seconds": seconds,
                "events_per_s": args.events / seconds,
                "matches": matches,
                "cpu_s": cpu_s,
            }
        )
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    cols = ["events", "passing", "pushdown", "seconds", "events_per_s", "matches", "cpu_s"]
    print(table(rows, cols))


if __name__ == "__main__":
    main()
