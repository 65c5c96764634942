"""kleene.spark.match_stream: micro-batches, late events, restarts from the checkpoint."""

from __future__ import annotations

import itertools
import json
import os
import time
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

import kleene
import kleene.spark as ks
from kleene.datagen import stock
from kleene.spark.sources import decode_json_values
from tests.spark.support import local_keys, spark_keys, time_sorted

pytestmark = pytest.mark.spark

DELAY = 5  # watermark delay, seconds (timestamps are numbers of seconds)

RISE_THEN_DROP = """
PATTERN SEQ(Stock+ a[], Stock b)
WHERE skip_till_next_match(a[], b) {
    [symbol] and a[i].price > a[i-1].price and b.price < a[a.LEN].price }
WITHIN 20
"""

# a trailing negation: decided only when the watermark passes first time + W
TRAILING_NEGATION = """
PATTERN SEQ(Stock a, Stock b, ~(Stock n))
WHERE [symbol] and b.price > a.price and n.price < a.price
WITHIN 6
"""


def _chunks(events: pa.Table, size: int) -> tuple[list[pa.Table], set[int]]:
    """The stream cut into files, with out-of-order and late arrivals.

    The last three events of each file arrive with the next file (out of order, but
    within the watermark delay); file 2 also brings three events from far behind the
    watermark (late). The last file ends with the end marker.
    """
    n = events.num_rows
    cuts = [*list(range(0, n, size)), n]
    files = [events.slice(a, b - a) for a, b in itertools.pairwise(cuts)]
    for i in range(len(files) - 1):
        held = files[i].slice(files[i].num_rows - 3)
        files[i] = files[i].slice(0, files[i].num_rows - 3)
        files[i + 1] = pa.concat_tables([held, files[i + 1]])
    late_ids = [n, n + 1, n + 2]
    late = pa.table(
        {
            "id": late_ids,
            "type": ["Stock"] * 3,
            "timestamp": [40, 41, 42],
            "symbol": [1, 1, 1],
            "price": [1, 2, 3],
            "volume": [10, 10, 10],
        }
    ).cast(events.schema)
    files[2] = pa.concat_tables([files[2], late])
    files[-1] = pa.concat_tables([files[-1], _end_marker(events)])
    # rows inside a file come in no particular order
    files = [f.take(pa.array(list(reversed(range(f.num_rows))))) for f in files]
    return files, set(late_ids)


def _end_marker(events: pa.Table) -> pa.Table:
    """One event of another type far after the stream: it moves the watermark past every
    event, as the end of a stream would."""
    n = events.num_rows
    row = {
        "id": [n + 3],
        "type": ["End"],
        "timestamp": [n + 1000],
        "symbol": [0],
        "price": [0],
        "volume": [0],
    }
    return pa.table(row).cast(events.schema)


def _expected_late(files: list[pa.Table]) -> set[int]:
    """Events at or behind the watermark when their file is read: the largest time of
    the earlier files minus the delay."""
    late: set[int] = set()
    seen = None
    for f in files:
        if seen is not None:
            wm = seen - DELAY
            late |= {
                i
                for i, t in zip(f["id"].to_pylist(), f["timestamp"].to_pylist(), strict=True)
                if t <= wm
            }
        top = max(f["timestamp"].to_pylist())
        seen = top if seen is None else max(seen, top)
    return late


def _arrived(path: Path, index: int) -> None:
    """Give file ``index`` its own modification time: a file source reads files in
    modification-time order, and files written within one millisecond tie."""
    stamp = 1_700_000_000 + index
    os.utime(path, (stamp, stamp))


def _match_rows(spark: SparkSession, out: Path) -> DataFrame:
    return spark.read.parquet(str(out / "matches"))


@pytest.fixture(scope="module")
def events() -> pa.Table:
    return stock.generate(2400, symbols=3, seed=11)


@pytest.mark.parametrize(("text", "one_run"), [(RISE_THEN_DROP, False), (TRAILING_NEGATION, True)])
def test_micro_batches_equal_local_engine_and_late_events_are_rejected(
    spark: SparkSession, events: pa.Table, tmp_path: Path, text: str, one_run: bool
) -> None:
    """Files arrive between runs (one_run=False), or all at once and are read one file
    per micro-batch in a single run (one_run=True)."""
    files, late_ids = _chunks(events, 800)
    assert _expected_late(files) == late_ids
    everything = pa.concat_tables(files)
    on_time = everything.filter(
        pa.compute.invert(
            pa.compute.is_in(everything["id"], pa.array(sorted(late_ids), pa.int64()))
        )
    )
    q = kleene.compile(text)
    expected = local_keys(q.run(time_sorted(on_time)))
    assert len(expected) > 20

    inbox, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    inbox.mkdir()
    for i, f in enumerate(files):
        pq.write_table(f, inbox / f"events-{i:03d}.parquet")
        _arrived(inbox / f"events-{i:03d}.parquet", i)
        if one_run and i < len(files) - 1:
            continue
        summary = ks.run_stream_to_parquet(
            inbox,
            text,
            out,
            ckpt,
            watermark=f"{DELAY} seconds",
            source_options={"maxFilesPerTrigger": 1},
        )
        assert summary["input_rows"] == (everything.num_rows if one_run else f.num_rows)
        so_far = spark_keys(_match_rows(spark, out), q.variables)
        assert set(so_far) <= expected  # nothing premature or wrong on the way
    got = spark_keys(_match_rows(spark, out), q.variables)
    assert len(got) == len(set(got))
    assert set(got) == expected
    rejected = spark.read.parquet(str(out / "rejected")).collect()
    assert {(r["id"], r["reason"]) for r in rejected} == {(i, "late") for i in late_ids}
    record = json.loads(next(r["record"] for r in rejected))
    assert record["type"] == "Stock" and record["timestamp"] in (40, 41, 42)


def test_stop_and_restart_from_checkpoint_loses_and_repeats_nothing(
    spark: SparkSession, events: pa.Table, tmp_path: Path
) -> None:
    files, late_ids = _chunks(events, 600)
    q = kleene.compile(RISE_THEN_DROP)
    everything = pa.concat_tables(files)
    on_time = everything.filter(
        pa.compute.invert(
            pa.compute.is_in(everything["id"], pa.array(sorted(late_ids), pa.int64()))
        )
    )
    expected = local_keys(q.run(time_sorted(on_time)))

    inbox, out, ckpt = tmp_path / "in", tmp_path / "out", tmp_path / "ckpt"
    inbox.mkdir()
    for i, f in enumerate(files):  # JSON lines this time
        (inbox / f"events-{i:03d}.json").write_text(
            "\n".join(json.dumps(row) for row in f.to_pylist()) + "\n"
        )
        _arrived(inbox / f"events-{i:03d}.json", i)
    schema = "id long, type string, timestamp long, symbol long, price long, volume long"
    source = {
        "format": "json",
        "path": str(inbox),
        "schema": schema,
        "options": {"maxFilesPerTrigger": 1},
    }

    # 1. a continuous query, stopped after two micro-batches
    stream = ks.match_stream(
        ks.read_event_stream(spark, source),
        RISE_THEN_DROP,
        checkpoint=str(ckpt),
        watermark=f"{DELAY} seconds",
    )
    before = ks.read_output(spark, out / "matches", stream.schema.struct())
    assert before.count() == 0 and before.columns[: len(q.variables) + 2] == [
        "match_id",
        "partition",
        *q.variables,
    ]
    running = stream.to_parquet(
        str(out / "matches"), str(out / "rejected"), processing_time="0 seconds"
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = [p for p in running.recentProgress if p["numInputRows"] > 0]
        if len(done) >= 2:
            break
        time.sleep(0.2)
    running.stop()
    partial = spark_keys(_match_rows(spark, out), q.variables)
    assert 0 < len(partial) < len(expected)

    # 2. restart from the checkpoint and read the rest
    stream = ks.match_stream(
        ks.read_event_stream(spark, source),
        RISE_THEN_DROP,
        checkpoint=str(ckpt),
        watermark=f"{DELAY} seconds",
    )
    stream.to_parquet(str(out / "matches"), str(out / "rejected")).awaitTermination()
    assert Counter(spark_keys(_match_rows(spark, out), q.variables)) == Counter(expected)

    # 3. a crash after the sink wrote the last micro-batch but before Spark committed
    #    it: the batch runs again on restart and its output replaces the first attempt
    commits = sorted(
        (p for p in (ckpt / "commits").iterdir() if p.name.isdigit()), key=lambda p: int(p.name)
    )
    last = commits[-1]
    last.unlink()
    (ckpt / "commits" / f".{last.name}.crc").unlink(missing_ok=True)
    batch_dir = out / "matches" / f"batch_id={last.name}"
    before = batch_dir.stat().st_mtime_ns
    stream = ks.match_stream(
        ks.read_event_stream(spark, source),
        RISE_THEN_DROP,
        checkpoint=str(ckpt),
        watermark=f"{DELAY} seconds",
    )
    stream.to_parquet(str(out / "matches"), str(out / "rejected")).awaitTermination()
    assert batch_dir.stat().st_mtime_ns > before  # replayed
    got = spark_keys(ks.read_output(spark, out / "matches", stream.schema.struct()), q.variables)
    assert Counter(got) == Counter(expected)
    rejected = spark.read.parquet(str(out / "rejected")).collect()
    assert sorted(r["id"] for r in rejected) == sorted(late_ids)


def test_stream_needs_an_id_column(spark: SparkSession, tmp_path: Path) -> None:
    pq.write_table(stock.generate(10).drop_columns(["id"]), tmp_path / "e.parquet")
    events = ks.read_event_stream(spark, {"format": "parquet", "path": str(tmp_path)})
    with pytest.raises(kleene.EventError, match="id"):
        ks.match_stream(events, RISE_THEN_DROP, checkpoint=str(tmp_path / "ck"))


def test_json_values_decode_like_a_kafka_source(spark: SparkSession) -> None:
    schema = T.StructType(
        [T.StructField("id", T.LongType()), T.StructField("type", T.StringType())]
    )
    raw = spark.createDataFrame(
        [(b'{"id": 1, "type": "Stock"}',), (b'{"id": 2, "type": "End"}',)], "value binary"
    )
    rows = decode_json_values(raw, schema).collect()
    assert [(r["id"], r["type"]) for r in rows] == [(1, "Stock"), (2, "End")]


def test_console_sink_prints_matches(
    spark: SparkSession, events: pa.Table, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = pa.concat_tables([events.slice(0, 300), _end_marker(events.slice(0, 300))])
    pq.write_table(table, tmp_path / "events.parquet")
    source = {"format": "parquet", "path": str(tmp_path)}
    q = kleene.compile(RISE_THEN_DROP)
    expected = local_keys(q.run(table))
    stream = ks.match_stream(
        ks.read_event_stream(spark, source),
        q,
        checkpoint=str(tmp_path / "ck"),
        watermark=f"{DELAY} seconds",
    )
    stream.to_console().awaitTermination()
    printed = capsys.readouterr().out
    assert printed.count("match   ") == len(expected) > 0
