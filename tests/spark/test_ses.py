"""``kleene run --engine spark`` writes the files of ``--engine local`` for event-set
patterns (match windows per partition key, :mod:`kleene.spark.eventsets`), on awkward
inputs: nulls in the partitioning attribute, missing attribute values, ties in time,
events out of time order (rejected as late), no id column, datetimes, and a pattern
without partitioning attributes (one group)."""

from __future__ import annotations

import datetime as dt
import json
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from kleene.cli import EXIT_OK, main
from kleene.io import write_table
from kleene.io.records import match_order, rejected_order

pytestmark = pytest.mark.spark

CHEMO = (
    "PATTERN SEQ({C c, P+ p}, {B b}) WHERE c.PID = p.PID AND p.PID = b.PID "
    "AND prev(p.V) < p.V AND b.V < 50 WITHIN 6"
)
UNPARTITIONED = "PATTERN SEQ({C c, P+ p}, {B b}) WHERE p.V > c.V WITHIN 4 OUTPUT EARLIEST MAXIMAL"


def awkward(n: int, seed: int) -> pa.Table:
    """Events of four types over three patients and a null one; some V missing; times
    with ties (steps of 0) and some moved back by up to 3 (late unless tied)."""
    rng = random.Random(seed)
    rows: list[dict[str, Any]] = []
    time = 0
    for k in range(n):
        time += rng.choice([0, 1, 1, 2])
        rows.append(
            {
                "id": k,
                "type": rng.choice("CPPBBD"),
                "timestamp": time - (rng.choice([1, 3]) if rng.random() < 0.08 else 0),
                "PID": rng.choice([1, 2, 3, None]),
                "V": None if rng.random() < 0.05 else rng.randint(0, 99),
            }
        )
    return pa.Table.from_pylist(rows)


def datetimes(table: pa.Table) -> pa.Table:
    base = dt.datetime(2011, 7, 1, tzinfo=dt.UTC)
    days = [base + dt.timedelta(days=t) for t in table["timestamp"].to_pylist()]
    at = table.schema.get_field_index("timestamp")
    return table.set_column(at, "timestamp", pa.array(days, pa.timestamp("us", tz="UTC")))


CASES: list[tuple[str, str, Callable[[], pa.Table], str, tuple[str, ...]]] = [
    ("partitioned-csv", CHEMO, lambda: awkward(300, 1), "csv", ()),
    (
        "partitioned-datetimes-no-id",
        CHEMO.replace("WITHIN 6", "WITHIN 6 days"),
        lambda: datetimes(awkward(300, 2)).drop_columns(["id"]),
        "parquet",
        ("--algorithm", "jointree", "--preprocessing", "fp"),
    ),
    ("one-group", UNPARTITIONED, lambda: awkward(200, 3), "parquet", ()),
]


def _lines(path: Path, key: Callable[[dict[str, Any]], Any]) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return sorted(lines, key=lambda line: key(json.loads(line)))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_engines_write_the_same_files(
    spark: SparkSession, case: tuple[Any, ...], tmp_path: Path
) -> None:
    _, text, events, suffix, options = case
    source = tmp_path / f"events.{suffix}"
    write_table(events(), source)
    query = tmp_path / "q.ses"
    query.write_text(text)
    written = {}
    for engine in ("local", "spark"):
        output = tmp_path / f"{engine}.jsonl"
        args = ["run", str(query), "-i", str(source), "-o", str(output), "-q", *options]
        args += ["--engine", engine] + (["--master", "local[1]"] if engine == "spark" else [])
        assert main(args) == EXIT_OK
        rejected = tmp_path / f"{engine}.jsonl.rejected.jsonl"
        written[engine] = (_lines(output, match_order), _lines(rejected, rejected_order))
    matches, rejected = written["local"]
    assert matches  # the case exercises the matcher
    assert any("late event" in line for line in rejected)
    assert written["spark"] == written["local"]


def test_match_takes_a_compiled_query_with_its_fields(spark: SparkSession) -> None:
    """Q1 over the Chemo events (type in L, time in T, days) through kleene.spark.match:
    the query's fields and options carry over; the matches are the local ones."""
    import kleene
    import kleene.spark as ks
    from tests.eventsets.chemo import Q1, events

    q = kleene.compile(Q1, type_field="L", time_field="T", time_unit="d", algorithm="jointree")
    frame = pd.DataFrame(events())  # V as doubles (Figure 1 mixes 88 and 111.5)
    result = ks.match(spark.createDataFrame(frame), q).persist()  # one run, two reads
    assert result.layout.key == ("PID",)
    found, rejected = result.collect()
    assert rejected == []
    local = q.run(frame)
    assert len(local) == 11
    assert sorted(tuple(m.ids().items()) for m in found) == sorted(
        tuple(m.ids().items()) for m in local
    )
    result.unpersist()


DELAY = 2  # the stream's watermark delay, seconds (times are numbers of seconds)


def ordered(n: int, seed: int) -> list[dict[str, Any]]:
    """Events in time order (ties in id order) from time 1 on, over three patients and a
    null one; some V missing (rejected events)."""
    rng = random.Random(seed)
    rows, time = [], 1
    for k in range(n):
        time += rng.choice([0, 1, 1, 2])
        pid = rng.choice([1, 2, 3, None])
        value = None if rng.random() < 0.03 else rng.randint(0, 99)
        rows.append(
            {"id": k, "type": rng.choice("CPPBBD"), "timestamp": time, "PID": pid, "V": value}
        )
    return rows


def stream_files(
    rows: list[dict[str, Any]], size: int
) -> tuple[list[list[dict[str, Any]]], set[int]]:
    """``rows`` cut into files of ``size``, each file's last three events arriving with the
    next one (out of order within the watermark delay), two events far behind the
    watermark in the second file (late), rows within a file in reverse order, and an end
    marker far after everything that moves the watermark past every window."""
    files = [rows[a : a + size] for a in range(0, len(rows), size)]
    for i in range(len(files) - 1):
        files[i], files[i + 1] = files[i][:-3], files[i][-3:] + files[i + 1]
    n = len(rows)
    late = [dict(rows[0], id=n, type="C"), dict(rows[1], id=n + 1, type="B", V=1)]
    files[1] += late
    end = {"id": n + 2, "type": "End", "timestamp": rows[-1]["timestamp"] + 1000, "PID": 0, "V": 0}
    files[-1].append(end)
    return [list(reversed(f)) for f in files], {n, n + 1}


def test_match_stream_closes_match_windows_per_key_and_equals_batch_and_local(
    spark: SparkSession, tmp_path: Path
) -> None:
    """An SES query over a stream of two files (one micro-batch each, then the batch
    the end marker's watermark brings): each patient's matcher lives on as a snapshot
    between micro-batches; every match leaves in the first micro-batch whose watermark
    is past its window (first event + τ) and not before; the matches equal those of
    ``kleene.spark.match`` and of the local matcher over the on-time events in time
    order; the late events are rejected as late, the others as the local matcher
    rejects them."""
    import kleene
    import kleene.spark as ks
    from kleene.io.schema import match_id

    text = CHEMO.replace("WITHIN 6", "WITHIN 8")
    rows = ordered(160, 7)
    files, late = stream_files(rows, 80)
    on_time = sorted(
        (r for f in files for r in f if r["id"] not in late),
        key=lambda r: (r["timestamp"], r["id"]),
    )
    local = kleene.compile(text).run_detailed(on_time)
    want = {match_id(m.ids()) for m in local.matches}
    assert len(want) >= 8 and local.rejected  # the case exercises both outputs
    batch = ks.match(spark.createDataFrame(pd.DataFrame(on_time)), text).persist()
    batch_matches, _ = batch.collect()
    batch.unpersist()
    assert {match_id(m.ids()) for m in batch_matches} == want

    inbox, out = tmp_path / "in", tmp_path / "out"
    inbox.mkdir()
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("type", pa.string()),
            ("timestamp", pa.int64()),
            ("PID", pa.int64()),
            ("V", pa.int64()),
        ]
    )
    for i, f in enumerate(files):
        path = inbox / f"events-{i}.parquet"
        write_table(pa.Table.from_pylist(f, schema), path)
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))  # read in this order
    ks.run_stream_to_parquet(
        inbox,
        text,
        out,
        tmp_path / "ckpt",
        watermark=f"{DELAY} seconds",
        source_options={"maxFilesPerTrigger": 1},
    )
    found = spark.read.parquet(str(out / "matches")).collect()
    assert sorted(r["match_id"] for r in found) == sorted(want)  # each once
    tops = [max(r["timestamp"] for r in f) for f in files]
    # the watermark of micro-batch k: the latest time of the files before it - the delay
    watermarks = [max(tops[:k], default=0) - DELAY for k in range(len(files) + 1)]
    for r in found:
        closing = [k for k, w in enumerate(watermarks) if r["start"] + 8 < w]
        assert r["batch_id"] == closing[0]
    assert len({r["batch_id"] for r in found}) >= 2  # matches leave as windows close
    rejected = spark.read.parquet(str(out / "rejected")).collect()
    got = {(r["id"], r["reason"]) for r in rejected}
    assert got == {(i, "late") for i in late} | {(r.id, r.reason) for r in local.rejected}
