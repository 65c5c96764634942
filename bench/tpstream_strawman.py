"""TPStream vs the straw man's approaches of EDBT 2018, section 1, side by side.

Two situation questions over ``kleene generate situations`` events (1 Hz, boolean
attributes A, B, C; situations 10-100 s, gaps 10-50 s):

* ``overlap``: A overlaps B (WITHIN 1000, which never binds: both last at most 100);
* ``disconnected``: A before B AND B overlaps C, WITHIN ``--window``.

Engines:

* **TPStream**: ``kleene.compile("FROM Synthetic ...")``, low-latency matcher.
* **SASE+ two queries** (the first straw man): one kleene SASE+ query per situation
  derives it from the point events (``SEQ(p, s+, q)`` under strict contiguity: not S, a
  run of S, not S), the derived situations become events stamped with their end, and a
  second SASE+ query (skip till any match) finds the sequence of situations in end order,
  checking the start timestamps and the window (``t_d - min start <= W``, TPStream's
  reading, as a predicate) in WHERE. Each match is known when its last situation ends.
* **SASE+ one query** (the second straw man, ``overlap`` only): the pattern as one
  sequence of point events, ``SEQ(p, x+, y+, z)`` under strict contiguity, reported at
  A's end like TPStream. kleene has one event selection strategy per query, so the
  ``disconnected`` question (contiguous runs, skipped gaps) has no single-query form.
* **Flink SQL MATCH_RECOGNIZE** (when bench/peers/.venv-flink exists; set up by
  ``bash bench/peers/setup.sh flink``): bench/peers/run_flink_tpstream.py, both straw
  men. *Two queries*: query 1 derives each situation with a MATCH_RECOGNIZE
  (``PATTERN (P S+ Q)``), query 2 matches the sequence of situations in end order with
  a MATCH_RECOGNIZE (and, for ``disconnected``, an interval join: A before B pairs many
  to many, which MATCH_RECOGNIZE's one match per start row cannot enumerate). *One
  query* (``overlap`` only): ``PATTERN (P X*? W Y+ Z)``. Measured: CPU of the JVM and
  Python over the job (after a warm-up job); the net run time Flink reports is printed.

Matches are compared as sets of (situation starts) and must be equal. Throughput is
events per CPU second (kleene: fastest of ``--repeat`` runs in this process; Flink: CPU
of the JVM and Python over the measured job); latency is application time, mean
detection time minus TPStream's.
The one-query straw man cannot express duration constraints on a situation still
running at the match (``AT LEAST`` on B), nor aggregates over a situation whose events
it splits (A's events are x[] and part of y[]).

    python -m bench.tpstream_strawman [--events N] [--window W] [--repeat R] [--no-flink]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

import kleene
from bench._common import RESULTS, machine, table
from kleene.datagen import situations

PEERS = Path(__file__).parent / "peers"
FLINK = PEERS / ".venv-flink" / "bin" / "python"
IMG = Path(__file__).parent.parent / "docs" / "img"

# (TPStream relations, the detection query's SEQ over situations in end order, its WHERE)
QUESTIONS = {
    "overlap": (
        ["A overlaps B"],
        "SEQ(SitA a, SitB b)",
        "a.ts < b.ts and b.ts < a.te and a.te < b.te and a.te - a.ts <= {w}",
    ),
    "disconnected": (
        ["A before B", "B overlaps C"],
        "SEQ(SitA a, SitB b, SitC c)",
        "a.te < b.ts and b.ts < c.ts and c.ts < b.te and b.te < c.te and b.te - a.ts <= {w}",
    ),
}

DERIVE = """PATTERN SEQ(Synthetic p, Synthetic+ s[], Synthetic q)
WHERE strict_contiguity {{ p.{x} = false and s[i].{x} = true and q.{x} = false }}
WITHIN 1000 RETURN s[1].timestamp AS ts, q.timestamp AS te"""

ONE_QUERY = """PATTERN SEQ(Synthetic p, Synthetic+ x[], Synthetic+ y[], Synthetic z)
WHERE strict_contiguity { p.A = false and x[i].A = true and x[x.LEN].B = false
  and y[i].A = true and y[i].B = true and z.A = false and z.B = true }
WITHIN 1000 RETURN x[1].timestamp AS a, y[1].timestamp AS b, z.timestamp AS t"""

FORMS = {"two": "two queries", "one": "one query"}

Found = dict[tuple[int, ...], int]  # situation starts -> detection time


def tpstream(data: pa.Table, relations: list[str], names: str, window: int) -> Found:
    define = ", ".join(f"{n} AS S.{n}" for n in names)
    q = kleene.compile(
        f"FROM Synthetic S DEFINE {define} PATTERN {' AND '.join(relations)} WITHIN {window}"
    )
    return {tuple(m.situations[n].start for n in names): m.detected for m in q.run(data)}


def two_phases(data: pa.Table, seq: str, where: str, names: str, window: int) -> Found:
    rows: list[tuple[str, int, int]] = []
    for x in names:
        for m in kleene.compile(DERIVE.format(x=x)).run(data):
            rows.append((f"Sit{x}", m.returned["ts"], m.returned["te"]))
    rows.sort(key=lambda r: r[2])
    derived = pa.table(
        {
            "id": list(range(len(rows))),
            "type": [r[0] for r in rows],
            "timestamp": [r[2] for r in rows],
            "ts": [r[1] for r in rows],
            "te": [r[2] for r in rows],
        }
    )
    detect = kleene.compile(
        f"PATTERN {seq} WHERE skip_till_any_match {{ {where.format(w=window)} }} "
        f"WITHIN {window + 200} RETURN "
        + ", ".join(f"{v}.ts AS {v}" for v in names.lower())
        + f", {names.lower()[-1]}.te AS t"
    )
    found = {}
    for m in detect.run(derived):
        found[tuple(m.returned[v] for v in names.lower())] = m.returned["t"]
    return found


def one_query(data: pa.Table) -> Found:
    return {
        (m.returned["a"], m.returned["b"]): m.returned["t"]
        for m in kleene.compile(ONE_QUERY).run(data)
    }


def flink(data: pa.Table, question: str, form: str, window: int) -> tuple[Found, dict[str, Any]]:
    """One Flink job of bench/peers/run_flink_tpstream.py: its matches (situation starts
    -> detection time) and its summary."""
    names = ["A", "B"] if question == "overlap" else ["A", "B", "C"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "events.parquet"
        pq.write_table(data.select(["timestamp", *names]), path)
        command = [str(FLINK), "run_flink_tpstream.py", "--input", str(path), "--workdir", tmp]
        command += ["--form", form, "--question", question, "--window", str(window)]
        done = subprocess.run(
            command,
            cwd=PEERS,
            capture_output=True,
            text=True,
            check=True,
        )
    lines = [json.loads(x) for x in done.stdout.splitlines() if x.startswith(("[", "{"))]
    summary = lines[-1]["summary"]
    return {tuple(m[:-1]): m[-1] for m in lines[:-1]}, summary


def timed(fn: Callable[[], Found], repeat: int) -> tuple[float, Found]:
    best, out = float("inf"), {}
    for _ in range(repeat):
        began = time.process_time()
        out = fn()
        best = min(best, time.process_time() - began)
    return best, out


def compare(question: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    relations, seq, where = QUESTIONS[question]
    names = "AB" if question == "overlap" else "ABC"
    data = situations.generate(args.events, names=tuple(names), seed=7)
    w = 1000 if question == "overlap" else args.window
    engines: dict[str, Callable[[], Found]] = {
        "TPStream": lambda: tpstream(data, relations, names, w),
        "SASE+ two queries": lambda: two_phases(data, seq, where, names, w),
    }
    if question == "overlap":
        engines["SASE+ one query"] = lambda: one_query(data)
    results = {name: timed(fn, args.repeat) for name, fn in engines.items()}
    if FLINK.exists() and not args.no_flink:
        forms = ["two", "one"] if question == "overlap" else ["two"]
        for form in forms:
            found, summary = flink(data, question, form, w)
            # CPU of the JVM and Python over the job, like the CPU time of the kleene runs
            # (the net run time Flink reports is wall time, which the shared machine inflates)
            results[f"Flink MATCH_RECOGNIZE {FORMS[form]}"] = (summary["cpu_seconds"], found)
            print(
                f"Flink {FORMS[form]} on {question}: net run time {summary['seconds']:.2f} s, "
                f"CPU {summary['cpu_seconds']:.2f} s"
            )
    base_cpu, base = results["TPStream"]
    rows = []
    for name, (cpu, found) in results.items():
        if set(found) != set(base):
            raise SystemExit(
                f"{name} disagrees with TPStream on {question}: {len(found)} vs {len(base)} matches"
            )
        delay = [found[k] - base[k] for k in base]
        rows.append(
            {
                "question": question,
                "engine": name,
                "events": data.num_rows,
                "matches": len(found),
                "seconds": cpu,
                "events_per_s": data.num_rows / cpu,
                "TPStream speed-up": cpu / base_cpu,
                "mean later than TPStream": statistics.fmean(delay) if delay else 0.0,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=50_000)
    parser.add_argument("--window", type=int, default=2000, help="the disconnected question's")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-flink", action="store_true")
    args = parser.parse_args()
    print(machine())
    rows = [r for q in QUESTIONS for r in compare(q, args)]
    print(table(rows, list(rows[0])))
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "tpstream_strawman.json").write_text(json.dumps(rows, indent=1))
    _plot(rows)


def _plot(rows: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 1.2 + 0.4 * len(rows)))
    labels = [f"{r['question']}: {r['engine']}" for r in rows]
    axes[0].barh(labels, [r["events_per_s"] for r in rows])
    axes[0].set_xscale("log")
    axes[0].set_xlabel("events per second (log)")
    axes[1].barh(labels, [r["mean later than TPStream"] for r in rows])
    axes[1].set_xlabel("mean detection later than TPStream (time units)")
    axes[1].set_yticks([])
    for ax in axes:
        ax.invert_yaxis()
        ax.grid(alpha=0.3, axis="x")
    fig.suptitle("TPStream vs the straw man's approaches (EDBT 2018, section 1)")
    fig.tight_layout()
    IMG.mkdir(parents=True, exist_ok=True)
    fig.savefig(IMG / "tpstream_strawman.png", dpi=80)
    print(f"plot: {IMG / 'tpstream_strawman.png'}")


if __name__ == "__main__":
    main()
