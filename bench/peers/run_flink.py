"""Apache Flink's SQL MATCH_RECOGNIZE (flink-cep) on the peer comparison's query (see
``_shared.py``).

Runs in bench/peers/.venv-flink (made by setup.sh; needs Java 11 or 17):

    bench/peers/.venv-flink/bin/python bench/peers/run_flink.py --input stock.parquet

The wheel ships no Parquet format, so the events are first copied to CSV (``prepare``,
not timed). A streaming TableEnvironment (local mini-cluster) reads the CSV through the
filesystem connector with an event-time attribute and a watermark, runs the query with
``ORDER BY rowtime`` and writes the matches to a CSV sink. Before the measured job the
same job runs once on the first ``--warmup`` events, so class loading and JIT warm-up of
the planner and the operators are out of the measurement.

Reported times: ``startup_seconds`` (JVM and TableEnvironment), ``seconds`` = the
measured job's net runtime as Flink reports it (JobExecutionResult; the job's execution
in the cluster, reading the CSV, matching, writing the sink), and ``job_wall_seconds``
(submit to finish, which adds planning and starting the local mini-cluster).
``cpu_seconds`` is the CPU time of this process and the JVM over submit to finish (every
JVM thread: operators, garbage collector, JIT compiler). Peak memory is sampled over this
process and the JVM it launched.
"""

from __future__ import annotations

import argparse
import glob
import os
import shutil
import time
from importlib import metadata
from pathlib import Path

from _shared import (
    DEFINE_LAST,
    TreeMemory,
    emit,
    match_recognize_sql,
    self_peak_mib,
    tree_cpu_seconds,
)

COLUMNS = ["id", "timestamp", "symbol", "price"]


def _write_csv(table: object, directory: Path) -> None:
    import pyarrow.csv as pcsv

    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    options = pcsv.WriteOptions(include_header=False)
    pcsv.write_csv(table, directory / "events.csv", write_options=options)


def _source_ddl(name: str, directory: Path) -> str:
    # timestamps are the stream's integer time units, read as milliseconds
    return f"""CREATE TABLE {name} (
  id BIGINT, ts BIGINT, symbol BIGINT, price BIGINT,
  rowtime AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rowtime AS rowtime
) WITH ('connector' = 'filesystem', 'path' = 'file://{directory}', 'format' = 'csv')"""


def _sink_ddl(name: str, directory: Path) -> str:
    return f"""CREATE TABLE {name} (
  symbol BIGINT, a_id BIGINT, b_first BIGINT, b_last BIGINT, c_id BIGINT
) WITH ('connector' = 'filesystem', 'path' = 'file://{directory}', 'format' = 'csv')"""


def _read_matches(directory: Path) -> list[tuple[int, ...]]:
    rows = []
    for path in sorted(glob.glob(str(directory / "**"), recursive=True)):
        if os.path.isfile(path) and not os.path.basename(path).startswith("."):
            with open(path) as f:
                rows += [tuple(int(v) for v in line.split(",")) for line in f if line.strip()]
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="Parquet file of stock events")
    parser.add_argument("--workdir", required=True, help="scratch folder for CSV in and out")
    parser.add_argument("--parallelism", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=20_000, help="events of the warm-up job")
    args = parser.parse_args()
    work = Path(args.workdir).resolve()

    t_prep = time.perf_counter()
    import pyarrow.parquet as pq

    events = pq.read_table(args.input, columns=COLUMNS)
    _write_csv(events, work / "in")
    _write_csv(events.slice(0, args.warmup), work / "warm_in")
    prepare = time.perf_counter() - t_prep

    with TreeMemory() as memory:
        t_boot = time.perf_counter()
        from pyflink.table import EnvironmentSettings, TableEnvironment

        env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        env.get_config().set("parallelism.default", str(args.parallelism))
        startup = time.perf_counter() - t_boot

        for name, folder in (("stock", "in"), ("stock_warm", "warm_in")):
            env.execute_sql(_source_ddl(name, work / folder))
        for name, folder in (("found", "out"), ("found_warm", "warm_out")):
            shutil.rmtree(work / folder, ignore_errors=True)
            env.execute_sql(_sink_ddl(name, work / folder))

        t_warm = time.perf_counter()
        sql = match_recognize_sql("stock_warm", "rowtime", DEFINE_LAST, into="found_warm")
        env.execute_sql(sql).wait()
        warmup = time.perf_counter() - t_warm

        cpu = tree_cpu_seconds()
        t_job = time.perf_counter()
        result = env.execute_sql(match_recognize_sql("stock", "rowtime", DEFINE_LAST, into="found"))
        client = result.get_job_client()
        assert client is not None
        net_ms = client.get_job_execution_result().result().get_net_runtime()
        job_wall = time.perf_counter() - t_job
        cpu = tree_cpu_seconds() - cpu

    rows = _read_matches(work / "out")
    emit(
        rows,
        {
            "engine": "Apache Flink (SQL MATCH_RECOGNIZE)",
            "version": metadata.version("apache-flink"),
            "parallelism": args.parallelism,
            "seconds": net_ms / 1000.0,
            "job_wall_seconds": job_wall,
            "cpu_seconds": cpu,
            "warmup_seconds": warmup,
            "startup_seconds": startup,
            "prepare_seconds": prepare,
            "events": events.num_rows,
            "peak_rss_mib": max(self_peak_mib(), memory.peak_mib),
        },
    )


if __name__ == "__main__":
    main()
