"""The straw man's second approach of TPStream (EDBT 2018, section 1) in Apache Flink's
SQL MATCH_RECOGNIZE: "A overlaps B" as one pattern over the point events of two boolean
situation attributes (``kleene generate situations``).

A overlaps B (A.ts < B.ts < A.te < B.te) over rows ordered by time is
``PATTERN (P X*? W Y+ Z)``: P is the row before A starts (not A), X*? and W rows of A
with W the last one without B (so B starts after A), Y+ rows of both, Z the first row
after A with B still holding (with a greedy ``X*`` Flink 2.3 finds no match at all).
Rows are contiguous, so X*WY+ is A's whole run and the match is reported at Z, A's
end: the earliest moment, as TPStream's low-latency matcher. The decomposition is
unique, so one match per A situation. Reported per match:
``[A.ts, B.ts, detection time]``.

Runs in bench/peers/.venv-flink (setup.sh; Java 11 or 17):

    bench/peers/.venv-flink/bin/python bench/peers/run_flink_tpstream.py \
        --input events.parquet --workdir /tmp/flink-tp

Output follows ``_shared.py``'s runner protocol (matches, then a summary line); the job
runs once on ``--warmup`` events before the measured job.
"""

from __future__ import annotations

import argparse
import time
from importlib import metadata
from pathlib import Path

from _shared import TreeMemory, emit, self_peak_mib, tree_cpu_seconds
from run_flink import _read_matches, _write_csv

COLUMNS = ["timestamp", "A", "B"]

SQL = """INSERT INTO {sink}
SELECT a_ts, b_ts, t FROM {source} MATCH_RECOGNIZE (
  ORDER BY rowtime
  MEASURES COALESCE(FIRST(X.ts), W.ts) AS a_ts, FIRST(Y.ts) AS b_ts, Z.ts AS t
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (P X*? W Y+ Z)
  DEFINE P AS NOT P.A, X AS X.A, W AS W.A AND NOT W.B,
    Y AS Y.A AND Y.B, Z AS NOT Z.A AND Z.B
)"""


def _source_ddl(name: str, directory: Path) -> str:
    # timestamps are the stream's integer time units, read as milliseconds
    return f"""CREATE TABLE {name} (
  ts BIGINT, A BOOLEAN, B BOOLEAN,
  rowtime AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rowtime AS rowtime
) WITH ('connector' = 'filesystem', 'path' = 'file://{directory}', 'format' = 'csv')"""


def _sink_ddl(name: str, directory: Path) -> str:
    return f"""CREATE TABLE {name} (a_ts BIGINT, b_ts BIGINT, t BIGINT)
WITH ('connector' = 'filesystem', 'path' = 'file://{directory}', 'format' = 'csv')"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="Parquet file of situation events")
    parser.add_argument("--workdir", required=True, help="scratch folder for CSV in and out")
    parser.add_argument("--warmup", type=int, default=20_000, help="events of the warm-up job")
    args = parser.parse_args()
    work = Path(args.workdir).resolve()
    import pyarrow.parquet as pq

    events = pq.read_table(args.input, columns=COLUMNS)
    _write_csv(events, work / "in")
    _write_csv(events.slice(0, args.warmup), work / "warm_in")

    with TreeMemory() as memory:
        from pyflink.table import EnvironmentSettings, TableEnvironment

        env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        env.get_config().set("parallelism.default", "1")
        for suffix in ("", "_warm"):
            env.execute_sql(_source_ddl("ev" + suffix, work / ("in" if not suffix else "warm_in")))
            env.execute_sql(_sink_ddl("found" + suffix, work / ("out" + suffix)))
        env.execute_sql(SQL.format(sink="found_warm", source="ev_warm")).wait()

        cpu = tree_cpu_seconds()
        began = time.perf_counter()
        result = env.execute_sql(SQL.format(sink="found", source="ev"))
        client = result.get_job_client()
        assert client is not None
        net_ms = client.get_job_execution_result().result().get_net_runtime()
        wall = time.perf_counter() - began
        cpu = tree_cpu_seconds() - cpu

    emit(
        _read_matches(work / "out"),
        {
            "engine": "Apache Flink (SQL MATCH_RECOGNIZE)",
            "version": metadata.version("apache-flink"),
            "seconds": net_ms / 1000.0,
            "job_wall_seconds": wall,
            "cpu_seconds": cpu,
            "events": events.num_rows,
            "peak_rss_mib": max(self_peak_mib(), memory.peak_mib),
        },
    )


if __name__ == "__main__":
    main()
