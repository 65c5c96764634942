"""kleene on the peer comparison's query (see ``_shared.py``), in kleene's own venv.

    python bench/peers/run_kleene.py --input stock.parquet

Processing time covers reading the Parquet file, matching and collecting the matches;
compiling the query and the imports come before the clock starts.
"""

from __future__ import annotations

import argparse
import time

from _shared import KLEENE_QUERY, emit, self_peak_mib


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="Parquet file of stock events")
    args = parser.parse_args()

    t_boot = time.perf_counter()
    import pyarrow.dataset  # noqa: F401  (imported lazily by the first read otherwise)
    import pyarrow.parquet as pq

    import kleene

    query = kleene.compile(KLEENE_QUERY)
    startup = time.perf_counter() - t_boot
    cpu = time.process_time()
    start = time.perf_counter()
    events = pq.read_table(args.input)
    found = query.run(events)
    rows = [
        (
            m.partition[0],
            m.ids()["a"][0],
            m.ids()["b"][0],
            m.ids()["b"][-1],
            m.ids()["c"][0],
        )
        for m in found
    ]
    seconds = time.perf_counter() - start
    cpu = time.process_time() - cpu
    emit(
        rows,
        {
            "engine": "kleene",
            "version": kleene.__version__,
            "seconds": seconds,
            "cpu_seconds": cpu,
            "startup_seconds": startup,
            "events": events.num_rows,
            "peak_rss_mib": self_peak_mib(),
        },
    )


if __name__ == "__main__":
    main()
