"""pandas-match-recognize on the peer comparison's query (see ``_shared.py``).

Runs in bench/peers/.venv-pmr (made by setup.sh):

    bench/peers/.venv-pmr/bin/python bench/peers/run_pmr.py --input stock.parquet

Processing time covers reading the Parquet file into pandas, ``match_recognize`` and
collecting the matches; imports come before the clock starts. The DEFINE clause is the
standard PREV() form; ``--define last`` uses the form the Flink runner needs instead
(same matches, slower here).
"""

from __future__ import annotations

import argparse
import time
from importlib import metadata

from _shared import (
    DEFINE_LAST,
    DEFINE_PREV,
    emit,
    match_recognize_sql,
    self_peak_mib,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="Parquet file of stock events")
    parser.add_argument("--define", choices=("prev", "last"), default="prev")
    args = parser.parse_args()

    t_boot = time.perf_counter()
    import pandas as pd
    import pyarrow.dataset  # noqa: F401  (imported lazily by the first read otherwise)
    from pandas_match_recognize import match_recognize

    define = DEFINE_PREV if args.define == "prev" else DEFINE_LAST
    sql = match_recognize_sql("stock", "timestamp", define)
    startup = time.perf_counter() - t_boot
    cpu = time.process_time()
    start = time.perf_counter()
    events = pd.read_parquet(args.input, columns=["id", "timestamp", "symbol", "price"])
    found = match_recognize(sql, events)
    cols = ["symbol", "a_id", "b_first", "b_last", "c_id"]
    rows = list(found[cols].itertuples(index=False, name=None)) if len(found) else []
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    emit(
        rows,
        {
            "engine": "pandas-match-recognize",
            "version": metadata.version("pandas-match-recognize"),
            "define": args.define,
            "seconds": seconds,
            "cpu_seconds": cpu,
            "startup_seconds": startup,
            "events": len(events),
            "peak_rss_mib": self_peak_mib(),
        },
    )


if __name__ == "__main__":
    main()
