"""The straw man's approaches of TPStream (EDBT 2018, section 1) in Apache Flink's SQL
MATCH_RECOGNIZE, over the point events of boolean situation attributes (``kleene
generate situations``). Two questions, as bench/tpstream_strawman.py asks them:
``overlap`` (A overlaps B) and ``disconnected`` (A before B AND B overlaps C, WITHIN W).

**One query** (``--form one``, the second straw man, ``overlap`` only): A overlaps B
(A.ts < B.ts < A.te < B.te) over rows ordered by time is ``PATTERN (P X*? W Y+ Z)``:
P is the row before A starts (not A), X*? and W rows of A with W the last one without B
(so B starts after A), Y+ rows of both, Z the first row after A with B still holding
(with a greedy ``X*`` Flink 2.3 finds no match at all). Rows are contiguous, so X*WY+
is A's whole run and the match is reported at Z, A's end: the earliest moment, as
TPStream's low-latency matcher. The decomposition is unique: one match per A.

**Two queries** (``--form two``, the first straw man): query 1 derives each situation
with one MATCH_RECOGNIZE per definition, ``PATTERN (P S+ Q)`` (not S, a run of S, not
S; AFTER MATCH SKIP TO LAST Q, so the row ending one run may begin the next), and
stamps it with its end (``MATCH_ROWTIME()``, Q's time); the situations of all
definitions form one stream in end order. Query 2 matches the sequence of situations in
end order on that stream, checking the start order and TPStream's window (``t_d - min
start <= W``) in DEFINE:

* ``overlap``: ``PATTERN (SA Z*? SB) WITHIN ...``, AFTER MATCH SKIP TO NEXT ROW, Z any
  situation but a B. Only the B holding at A's end can overlap A, and it is the first B
  to end after A (B situations do not overlap each other), so the first B row after SA
  decides: at most one match per A row, the one MATCH_RECOGNIZE (one match per start
  row) reports. With Z unrestricted the matches are the same, but Flink 2.3 then holds
  each match until the partial matches begun before it fail at WITHIN, and stamps it
  (``MATCH_ROWTIME()``) with that later time.
* ``disconnected``: B overlaps C is ``PATTERN (SB Z*? SC)`` (at most one C per B, by
  the same argument). A before (B overlaps C) pairs every A with every B that starts
  after it within W: many to many, which MATCH_RECOGNIZE (one match per start row, no
  "all matches" option in Flink SQL) cannot enumerate, so the last step is Flink SQL's
  interval join of the A situations with the (B, C) matches, bounded in event time.

Each match is known at its last situation's end: reported as ``[A.ts, B.ts, t]`` or
``[A.ts, B.ts, C.ts, t]``, ``t`` the detection time.

Runs in bench/peers/.venv-flink (setup.sh; Java 11 or 17):

    bench/peers/.venv-flink/bin/python bench/peers/run_flink_tpstream.py \
        --input events.parquet --workdir /tmp/flink-tp [--form two] \
        [--question disconnected --window 2000]

Output follows ``_shared.py``'s runner protocol (matches, then a summary line); the job
runs once on ``--warmup`` events before the measured job. Timestamps are the stream's
integer time units, read as milliseconds.
"""

from __future__ import annotations

import argparse
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from _shared import TreeMemory, emit, self_peak_mib, tree_cpu_seconds
from run_flink import _read_matches, _write_csv

ONE_QUERY = """INSERT INTO {sink}
SELECT a_ts, b_ts, t FROM {source} MATCH_RECOGNIZE (
  ORDER BY rowtime
  MEASURES COALESCE(FIRST(X.ts), W.ts) AS a_ts, FIRST(Y.ts) AS b_ts, Z.ts AS t
  ONE ROW PER MATCH
  AFTER MATCH SKIP PAST LAST ROW
  PATTERN (P X*? W Y+ Z)
  DEFINE P AS NOT P.A, X AS X.A, W AS W.A AND NOT W.B,
    Y AS Y.A AND Y.B, Z AS NOT Z.A AND Z.B
)"""

# query 1: the situations of one definition, stamped with their end
DERIVE = """SELECT '{x}' AS kind, s_ts, s_te, rt FROM {source} MATCH_RECOGNIZE (
  ORDER BY rowtime
  MEASURES FIRST(S.ts) AS s_ts, Q.ts AS s_te, MATCH_ROWTIME() AS rt
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO LAST Q
  PATTERN (P S+ Q)
  DEFINE P AS NOT P.{x}, S AS S.{x}, Q AS NOT Q.{x}
)"""

# query 2, overlap: A then B in end order, B starting within A and ending after it
A_OVERLAPS_B = """INSERT INTO {sink}
SELECT a_ts, b_ts, t FROM {sits} MATCH_RECOGNIZE (
  ORDER BY rt
  MEASURES SA.s_ts AS a_ts, SB.s_ts AS b_ts, SB.s_te AS t
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO NEXT ROW
  PATTERN (SA Z*? SB) WITHIN INTERVAL '{within}' SECOND
  DEFINE SA AS SA.kind = 'A', Z AS Z.kind <> 'B',
    SB AS SB.kind = 'B' AND SA.s_ts < SB.s_ts AND SB.s_ts < SA.s_te
      AND SA.s_te < SB.s_te AND SA.s_te - SA.s_ts <= {w}
)"""

# query 2, disconnected: B overlaps C as above (stamped with C's end), then A before it
B_OVERLAPS_C = """SELECT b_ts, b_te, c_ts, t, rt FROM {sits} MATCH_RECOGNIZE (
  ORDER BY rt
  MEASURES SB.s_ts AS b_ts, SB.s_te AS b_te, SC.s_ts AS c_ts, SC.s_te AS t,
    MATCH_ROWTIME() AS rt
  ONE ROW PER MATCH
  AFTER MATCH SKIP TO NEXT ROW
  PATTERN (SB Z*? SC) WITHIN INTERVAL '{within}' SECOND
  DEFINE SB AS SB.kind = 'B', Z AS Z.kind <> 'C',
    SC AS SC.kind = 'C' AND SB.s_ts < SC.s_ts AND SC.s_ts < SB.s_te AND SB.s_te < SC.s_te
)"""

A_BEFORE = """INSERT INTO {sink}
SELECT a.s_ts, bc.b_ts, bc.c_ts, bc.t FROM {sits} a, {pairs} bc
WHERE a.kind = 'A' AND a.s_te < bc.b_ts AND bc.b_te - a.s_ts <= {w}
  AND bc.rt BETWEEN a.rt AND a.rt + INTERVAL '{within}' SECOND"""

QUESTIONS = {"overlap": "AB", "disconnected": "ABC"}


def _source_ddl(name: str, directory: Path, names: str) -> str:
    columns = ", ".join(f"{x} BOOLEAN" for x in names)
    return f"""CREATE TABLE {name} (
  ts BIGINT, {columns},
  rowtime AS TO_TIMESTAMP_LTZ(ts, 3),
  WATERMARK FOR rowtime AS rowtime
) WITH ('connector' = 'filesystem', 'path' = 'file://{directory}', 'format' = 'csv')"""


def _sink_ddl(name: str, directory: Path, width: int) -> str:
    columns = ", ".join(f"c{i} BIGINT" for i in range(width))
    return f"""CREATE TABLE {name} ({columns})
WITH ('connector' = 'filesystem', 'path' = 'file://{directory}', 'format' = 'csv')"""


def _seconds(units: int) -> str:
    """Time units (read as milliseconds) as an SQL interval's seconds."""
    return f"{units // 1000}.{units % 1000:03d}"


def two_query_statements(question: str, source: str, sink: str, window: int) -> list[str]:
    """The views of query 1 and the INSERT of query 2 for one question over ``source``."""
    sits = f"{source}_sits"
    union = "\nUNION ALL\n".join(DERIVE.format(x=x, source=source) for x in QUESTIONS[question])
    views = [f"CREATE TEMPORARY VIEW {sits} AS {union}"]
    # situations last at most 100 units in the generator: the bound on the end order
    within = _seconds(window + 200)
    if question == "overlap":
        return [*views, A_OVERLAPS_B.format(sink=sink, sits=sits, within=within, w=window)]
    pairs = f"{source}_bc"
    views.append(
        f"CREATE TEMPORARY VIEW {pairs} AS {B_OVERLAPS_C.format(sits=sits, within=within)}"
    )
    return [*views, A_BEFORE.format(sink=sink, sits=sits, pairs=pairs, w=window, within=within)]


def _statements(args: argparse.Namespace, source: str, sink: str) -> list[str]:
    if args.form == "one":
        return [ONE_QUERY.format(sink=sink, source=source)]
    return two_query_statements(args.question, source, sink, args.window)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--input", required=True, help="Parquet file of situation events")
    parser.add_argument("--workdir", required=True, help="scratch folder for CSV in and out")
    parser.add_argument("--form", choices=("one", "two"), default="one")
    parser.add_argument("--question", choices=tuple(QUESTIONS), default="overlap")
    parser.add_argument("--window", type=int, default=1000, help="WITHIN, in time units")
    parser.add_argument("--warmup", type=int, default=20_000, help="events of the warm-up job")
    args = parser.parse_args()
    if args.form == "one" and args.question != "overlap":
        parser.error("the one-query form is written for the overlap question only")
    names = QUESTIONS[args.question]
    work = Path(args.workdir).resolve()
    import pyarrow.parquet as pq

    events = pq.read_table(args.input, columns=["timestamp", *names])
    _write_csv(events, work / "in")
    _write_csv(events.slice(0, args.warmup), work / "warm_in")
    width = 3 if args.question == "overlap" else 4

    with TreeMemory() as memory:
        from pyflink.table import EnvironmentSettings, TableEnvironment

        env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
        env.get_config().set("parallelism.default", "1")
        for suffix, folder in (("_warm", "warm_in"), ("", "in")):
            env.execute_sql(_source_ddl("ev" + suffix, work / folder, names))
            env.execute_sql(_sink_ddl("found" + suffix, work / ("out" + suffix), width))
        *views, insert = _statements(args, "ev_warm", "found_warm")
        for view in views:
            env.execute_sql(view)
        env.execute_sql(insert).wait()
        *views, insert = _statements(args, "ev", "found")
        for view in views:
            env.execute_sql(view)

        cpu = tree_cpu_seconds()
        began = time.perf_counter()
        client = env.execute_sql(insert).get_job_client()
        assert client is not None
        net_ms = client.get_job_execution_result().result().get_net_runtime()
        wall = time.perf_counter() - began
        cpu = tree_cpu_seconds() - cpu

    summary: dict[str, Any] = {
        "engine": f"Apache Flink (SQL MATCH_RECOGNIZE, {args.form} query form)",
        "version": metadata.version("apache-flink"),
        "seconds": net_ms / 1000.0,
        "job_wall_seconds": wall,
        "cpu_seconds": cpu,
        "events": events.num_rows,
        "peak_rss_mib": max(self_peak_mib(), memory.peak_mib),
    }
    emit(_read_matches(work / "out"), summary)


if __name__ == "__main__":
    main()
