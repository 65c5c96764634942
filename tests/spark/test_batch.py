"""kleene.spark.match against the local engine on stock streams (SIGMOD 2008, section 6)."""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import Row, SparkSession
from pyspark.sql import types as T

import kleene
import kleene.spark as ks
from kleene.datagen import stock
from tests.spark.support import local_keys, time_sorted, two_file_frame

pytestmark = pytest.mark.spark

RISE_THEN_DROP = """
PATTERN SEQ(Stock+ a[], Stock b)
WHERE skip_till_next_match(a[], b) {
    [symbol] and a[i].price > a[i-1].price and b.price < a[a.LEN].price }
WITHIN 20
RETURN a[1].symbol AS sym, avg(a[].price) AS avg_price, a.LEN AS n
"""

# no partition key: three rising prices of any symbols, the last with a big volume
THREE_RISES = """
PATTERN SEQ(Stock a, Stock b, Stock c)
WHERE skip_till_next_match(a, b, c) {
    a.price < b.price and b.price < c.price and c.volume > 900 }
WITHIN 6
"""

KEYED_NEGATIONS = """
PATTERN SEQ(Stock a, ~(Stock n), Stock b, ~(Stock m))
WHERE [symbol] and b.price > a.price and n.price > b.price and m.volume > 700
WITHIN 8
"""

# the negation is not tied to the key: it sees every symbol, so no split by key
FREE_NEGATION = """
PATTERN SEQ(Stock a, ~(Stock n), Stock b)
WHERE a.symbol = b.symbol and b.price > a.price + 1 and n.volume > 980
WITHIN 10
"""


@pytest.fixture(scope="module")
def events() -> pa.Table:
    return stock.generate(6000, symbols=4, seed=7)


@pytest.fixture(scope="module")
def events_df(spark: SparkSession, events: pa.Table, tmp_path_factory: pytest.TempPathFactory):
    return two_file_frame(spark, events, tmp_path_factory.mktemp("stock"))


def _check_same(result: ks.MatchResult, q: kleene.Query, local: list[kleene.Match]) -> list[Row]:
    """Assert the Spark matches are the local ones, each once; the rows (one Spark job)."""
    rows = result.matches.collect()
    got = [frozenset((v, tuple(row[v])) for v in q.variables) for row in rows]
    assert len(got) == len(set(got)), "a match was emitted twice"
    assert set(got) == local_keys(local)
    return rows


@pytest.mark.parametrize(
    ("slice_", "method"), [(None, "map"), (5, "map"), (None, "group"), (3, "group")]
)
def test_keyed_kleene_query_equals_local_engine(events_df, events, slice_, method) -> None:
    q = kleene.compile(RISE_THEN_DROP)
    local = q.run(events)
    assert len(local) > 100
    result = ks.match(events_df, RISE_THEN_DROP, slice=slice_, method=method)
    assert result.layout.key == ("symbol",)
    assert result.layout.slices > 1 if slice_ else result.layout.slices == 1
    by_id = {row["match_id"]: row for row in _check_same(result, q, local)}
    expected = {frozenset((v, tuple(i)) for v, i in m.ids().items()): m for m in local}
    for row in by_id.values():
        m = expected[frozenset((v, tuple(row[v])) for v in q.variables)]
        assert (row["start"], row["end"]) == (m.start, m.end)
        assert tuple(row["partition"]) == m.partition  # the key's values in their types
        values = m.values()
        assert row["sym"] == values["sym"] and row["n"] == values["n"]
        assert row["avg_price"] == pytest.approx(values["avg_price"])


def test_query_without_key_uses_time_slices(events_df, events) -> None:
    q = kleene.compile(THREE_RISES)
    assert q.partition_attributes == ()
    local = q.run(events)
    assert len(local) > 50
    whole = ks.match(events_df, q)
    assert whole.layout.key == () and whole.layout.slices == 1
    _check_same(whole, q, local)
    sliced = ks.match(events_df, q, slice=7)
    assert sliced.layout.slices == 7
    _check_same(sliced, q, local)
    auto = ks.match(events_df, q, slice="auto")
    assert auto.layout.slices == 2 * events_df.sparkSession.sparkContext.defaultParallelism
    _check_same(auto, q, local)


def test_auto_does_not_slice_a_keyed_query(events_df) -> None:
    result = ks.match(events_df, RISE_THEN_DROP, slice="auto")
    assert result.layout.key == ("symbol",) and result.layout.slices == 1
    assert "key" in result.layout.note


def test_keyed_inner_and_trailing_negation_with_slices(events_df, events) -> None:
    q = kleene.compile(KEYED_NEGATIONS)
    local = q.run(events)
    assert len(local) > 50
    result = ks.match(events_df, q, slice=4)
    assert result.layout.key == ("symbol",) and result.layout.slices == 4
    _check_same(result, q, local)


def test_negation_outside_the_key_is_not_split_by_key(events_df, events) -> None:
    q = kleene.compile(FREE_NEGATION)
    assert q.plan.routed and q.plan.key.names == ("symbol",)  # a hash key, no partition
    local = q.run(events)
    # the negation really removes matches that a per-symbol run would keep
    per_symbol = set()
    for s in range(1, 5):
        per_symbol |= local_keys(q.run(events.filter(pa.compute.equal(events["symbol"], s))))
    assert local_keys(local) < per_symbol
    result = ks.match(events_df, q, slice="auto")
    assert result.layout.key == () and result.layout.slices > 1
    _check_same(result, q, local)


HASHED = """
PATTERN SEQ(Stock a, Stock b)
WHERE skip_till_next_match(a, b) { a.symbol = b.symbol and b.price > a.price + 3 }
WITHIN 6
"""


def test_equality_hash_key_splits_without_a_partition(events_df, events) -> None:
    # docs/semantics.md, "Partitions": the equality forms no partition, but under skip
    # till next match the runs (and Spark's groups) may be split by it
    q = kleene.compile(HASHED)
    assert q.partition_attributes == ()
    local = q.run(events)
    assert len(local) > 50
    result = ks.match(events_df, q)
    assert result.layout.key == ("symbol",)
    assert {tuple(row["partition"]) for row in _check_same(result, q, local)} == {()}
    # under partition contiguity the same text has one partition: no split by key
    strict = kleene.compile(HASHED, strategy="partition_contiguity")
    contiguous = ks.match(events_df, strict)
    assert contiguous.layout.key == ()
    strict_local = strict.run(events)
    _check_same(contiguous, strict, strict_local)
    assert len(strict_local) < len(local)


def test_non_overlap_output_runs_as_one_slice(events_df, events) -> None:
    q = kleene.compile(RISE_THEN_DROP, output="non-overlap")
    local = q.run(events)
    result = ks.match(events_df, RISE_THEN_DROP, output="non-overlap", slice=4)
    assert result.layout.slices == 1 and "non-overlap" in result.layout.note
    _check_same(result, q, local)


def test_strict_contiguity_sees_the_whole_stream(events_df, events) -> None:
    text = """PATTERN SEQ(Stock a, Stock b) WHERE strict_contiguity(a, b) {
        [symbol] and b.price > a.price } WITHIN 5"""
    q = kleene.compile(text)
    local = q.run(events)
    assert local
    result = ks.match(events_df, q, slice=3)
    assert result.layout.key == () and result.layout.slices == 3
    _check_same(result, q, local)


def test_ids_are_input_positions_without_id_column(
    spark: SparkSession, events, tmp_path: Path
) -> None:
    table = events.slice(0, 3000).drop_columns(["id"])
    # events arrive out of time order: each moved by up to 8 places, in two files
    rng = random.Random(3)
    order = sorted(range(table.num_rows), key=lambda i: i + rng.uniform(0, 8))
    arrived = table.take(pa.array(order))
    df = two_file_frame(spark, arrived, tmp_path)
    # the local engine numbers events by their position in the input: the files' order
    tagged = arrived.append_column("id", pa.array(range(arrived.num_rows), pa.int64()))
    # the input order is the arrival order: both engines reject the same late events ...
    q = kleene.compile(RISE_THEN_DROP)
    local = q.run_detailed(tagged)
    assert len(local.rejected) > 100
    result = ks.match(df, q, slice=2).persist()
    _check_same(result, q, local.matches)
    assert sorted(r["id"] for r in result.rejected.collect()) == [r.id for r in local.rejected]
    # ... while an unbounded allowed lateness takes every event, in time order
    unbounded = kleene.compile(RISE_THEN_DROP, allowed_lateness=float("inf"))
    local_sorted = q.run(time_sorted(tagged))
    assert local_sorted
    _check_same(ks.match(df, unbounded, slice=2), q, local_sorted)


def test_rejected_events_equal_local_and_are_reported_once(spark, tmp_path: Path) -> None:
    table = stock.generate(2000, symbols=2, seed=3)
    price = table["price"].to_pylist()
    times = table["timestamp"].to_pylist()
    for i in (5, 700, 1400):
        price[i] = None
    times[1000] = None
    table = table.set_column(
        table.schema.get_field_index("price"), "price", pa.array(price, pa.int64())
    )
    table = table.set_column(
        table.schema.get_field_index("timestamp"), "timestamp", pa.array(times, pa.int64())
    )
    pq.write_table(table, tmp_path / "events.parquet")
    df = spark.read.parquet(str(tmp_path / "events.parquet"))
    q = kleene.compile(RISE_THEN_DROP)
    detail = q.run_detailed(time_sorted(table))
    expected_rejected = {(r.id, r.reason) for r in detail.rejected}
    assert {i for i, _ in expected_rejected} == {5, 700, 1000, 1400}
    for slice_ in (None, 3):
        result = ks.match(df, q, slice=slice_).persist()
        rows = result.rejected.collect()
        assert len(rows) == len(expected_rejected)
        assert {(r["id"], r["reason"]) for r in rows} == expected_rejected
        assert all(r["record"].startswith("{") for r in rows)
        _check_same(result, q, detail.matches)
        result.unpersist()


def test_timestamp_time_column_with_slices(spark: SparkSession, events, tmp_path: Path) -> None:
    base = dt.datetime(2024, 3, 1, tzinfo=dt.UTC)
    table = events.slice(0, 3000)
    stamps = [base + dt.timedelta(seconds=2 * t) for t in table["timestamp"].to_pylist()]
    table = table.set_column(
        table.schema.get_field_index("timestamp"),
        "timestamp",
        pa.array(stamps, pa.timestamp("us", tz="UTC")),
    )
    pq.write_table(table, tmp_path / "events.parquet")
    df = spark.read.parquet(str(tmp_path / "events.parquet"))
    assert isinstance(df.schema["timestamp"].dataType, T.TimestampType)
    text = RISE_THEN_DROP.replace("WITHIN 20", "WITHIN 40 seconds")
    q = kleene.compile(text)
    local = q.run(table)
    result = ks.match(df, q, slice=4)
    assert result.layout.slices == 4
    _check_same(result, q, local)
    first = min(local, key=lambda m: m.start)
    row = result.matches.orderBy("start").first()
    # Spark returns naive datetimes in the session time zone (UTC)
    assert row is not None
    assert row["start"] == first.start.astimezone(dt.UTC).replace(tzinfo=None)


def test_output_schema(events_df) -> None:
    result = ks.match(events_df, RISE_THEN_DROP)
    fields = {f.name: f.dataType for f in result.matches.schema.fields}
    assert list(fields) == [
        "match_id",
        "partition",
        "a",
        "b",
        "start",
        "end",
        "sym",
        "avg_price",
        "n",
    ]
    assert fields["a"] == T.ArrayType(T.LongType()) == fields["b"]
    # the key [symbol] with the type of the input's symbol column
    assert fields["partition"] == T.StructType([T.StructField("symbol", T.LongType())])
    assert fields["avg_price"] == T.DoubleType() and fields["n"] == T.LongType()
    assert result.rejected.columns == ["id", "position", "reason", "record"]
    unkeyed = ks.match(events_df, THREE_RISES).matches.schema["partition"].dataType
    assert unkeyed == T.ArrayType(T.StringType())  # no key: always empty


def test_return_names_of_fixed_columns_are_prefixed(events_df) -> None:
    text = "PATTERN SEQ(Stock a, Stock b) WHERE [symbol] WITHIN 5 RETURN a.price AS start"
    result = ks.match(events_df, text)
    assert "return:start" in result.matches.columns  # as in match files
