"""Collapsed output on Spark (SIGMOD 2014, section 5.2) against the local engine."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T

import kleene
import kleene.spark as ks
from kleene.datagen import stock
from tests.spark.support import time_sorted, two_file_frame

pytestmark = pytest.mark.spark

# Kleene variable first: every collapsed result fixes its first candidate
KLEENE_FIRST = """
PATTERN SEQ(Stock+ a[], Stock b)
WHERE skip_till_any_match(a[], b) {
    [symbol] and a[i].price > a[i-1].price and b.volume < 100 }
WITHIN 6
RETURN a[1].symbol AS sym, a.LEN AS n, avg(a[].price) AS mean
OUTPUT COLLAPSED
"""

# Kleene variable last: every collapsed result fixes its last candidate
KLEENE_LAST = """
PATTERN SEQ(Stock a, Stock+ b[])
WHERE skip_till_any_match(a, b[]) {
    [symbol] and a.volume < 50 and b[i].price > a.price and b[i].volume > b[i-1].volume }
WITHIN 5
OUTPUT COLLAPSED
"""

# no partition key: the whole stream is one group, or time slices
UNKEYED = """
PATTERN SEQ(Stock a, Stock+ b[], Stock c)
WHERE skip_till_any_match(a, b[], c) {
    b[i].price > a.price and b[i].volume > b[i-1].volume
    and c.price < a.price and c.volume > 900 }
WITHIN 5
RETURN a.symbol AS sym, sum(b[].volume) AS vol
OUTPUT COLLAPSED
"""


@pytest.fixture(scope="module")
def events() -> pa.Table:
    return stock.generate(3000, symbols=3, seed=7)


@pytest.fixture(scope="module")
def events_df(spark: SparkSession, events: pa.Table, tmp_path_factory: pytest.TempPathFactory):
    return two_file_frame(spark, events, tmp_path_factory.mktemp("stock-collapsed"))


def local_collapsed(c: kleene.CollapsedMatch) -> tuple[Any, ...]:
    """A collapsed result in a comparable form, from the public API."""
    return (
        tuple(c.partition),
        tuple(sorted(c.singles.items())),
        tuple(sorted((v, tuple(cs)) for v, cs in c.candidates.items())),
        tuple(sorted(c.first_fixed)),
        tuple(sorted(c.last_fixed)),
        c.start,
        c.end,
        c.exact,
        c.count(),
    )


def spark_collapsed(df: DataFrame, q: kleene.Query) -> list[tuple[Any, ...]]:
    """The collapsed rows of a Spark result in the same form (a list: duplicates show)."""
    out = []
    for row in df.collect():
        singles = [(v, row[v]) for v in q.variables if v not in q.kleene_variables]
        cands = [
            (v, tuple((c["id"], c["label"]) for c in row[v]))
            for v in q.variables
            if v in q.kleene_variables
        ]
        out.append(
            (
                tuple(row["partition"]),
                tuple(sorted(singles)),
                tuple(sorted(cands)),
                tuple(row["first_fixed"]),
                tuple(row["last_fixed"]),
                row["start"],
                row["end"],
                row["exact"],
                row["count"],
            )
        )
    return out


def local_rows(matches: list[kleene.Match], q: kleene.Query) -> Counter[tuple[Any, ...]]:
    """Matches as the all-output rows hold them: ids, times, partition, RETURN values."""
    return Counter(
        (
            tuple(sorted((v, tuple(ids)) for v, ids in m.ids().items())),
            m.start,
            m.end,
            tuple(m.partition),
            tuple(m.values()[n] for n in q.return_names),
        )
        for m in matches
    )


def spark_rows(df: DataFrame, q: kleene.Query) -> Counter[tuple[Any, ...]]:
    return Counter(
        (
            tuple(sorted((v, tuple(row[v])) for v in q.variables)),
            row["start"],
            row["end"],
            tuple(row["partition"]),
            tuple(row[n] for n in q.return_names),
        )
        for row in df.collect()
    )


@pytest.mark.parametrize(
    ("text", "key", "slice_", "method"),
    [
        (KLEENE_FIRST, ("symbol",), None, "map"),
        (KLEENE_LAST, ("symbol",), None, "group"),
        (UNKEYED, (), None, "map"),
        (UNKEYED, (), 3, "map"),
    ],
    ids=["keyed-first", "keyed-last-group", "unkeyed", "unkeyed-sliced"],
)
def test_collapsed_rows_equal_local_and_expand_to_all_matches(
    events_df, events, text, key, slice_, method
) -> None:
    q = kleene.compile(text)
    local = q.run_collapsed(events)
    assert len(local) > 50
    assert {c.exact for c in local} == {True, False}  # both the closed form and enumeration

    result = ks.match(events_df, text, slice=slice_, method=method).persist()
    try:
        assert result.expandable
        assert result.layout.key == key
        if slice_ is not None:
            assert result.layout.slices > 1, result.layout.note
        got = spark_collapsed(result.matches, q)
        assert len(got) == len(set(got)), "a collapsed result was emitted twice"
        assert Counter(got) == Counter(local_collapsed(c) for c in local)
        ids = [r["collapsed_id"] for r in result.matches.select("collapsed_id").collect()]
        assert len(set(ids)) == len(ids)
        assert result.rejected.count() == 0
        expanded = result.expand()
    finally:
        result.unpersist()

    all_matches = kleene.compile(text, output="all").run(events)
    assert sum(row[-1] for row in got) == len(all_matches)
    assert spark_rows(expanded, q) == local_rows(all_matches, q)
    assert expanded.columns == ks.match(events_df, text, output="all").matches.columns


def test_collapsed_schema(events_df) -> None:
    result = ks.match(events_df, KLEENE_FIRST)
    fields = {f.name: f.dataType for f in result.matches.schema.fields}
    assert list(fields) == [
        "collapsed_id",
        "partition",
        "a",
        "b",
        "first_fixed",
        "last_fixed",
        "start",
        "end",
        "exact",
        "count",
    ]
    candidate = fields["a"]
    assert isinstance(candidate, T.ArrayType)
    assert isinstance(candidate.elementType, T.StructType)
    assert candidate.elementType.fieldNames() == ["id", "label"]
    assert fields["b"] == T.LongType() and fields["count"] == T.LongType()
    assert fields["exact"] == T.BooleanType()
    assert fields["partition"] == T.StructType([T.StructField("symbol", T.LongType())])


def test_variable_named_like_a_collapsed_column_is_refused(events_df) -> None:
    text = (
        "PATTERN SEQ(Stock exact, Stock+ b[]) WHERE skip_till_any_match { [symbol] } "
        "WITHIN 5 OUTPUT COLLAPSED"
    )
    with pytest.raises(kleene.QueryError, match="exact"):
        ks.match(events_df, text)


def test_stream_gives_the_local_collapsed_results(
    spark: SparkSession, events: pa.Table, tmp_path: Path
) -> None:
    """Two files, read one per micro-batch; an event of another type far later moves
    the watermark past everything."""
    part = events.slice(0, 1200)
    n = part.num_rows
    end = pa.table(
        {
            "id": [n],
            "type": ["End"],
            "timestamp": [n + 1000],
            "symbol": [0],
            "price": [0],
            "volume": [0],
        }
    ).cast(events.schema)
    inbox = tmp_path / "in"
    inbox.mkdir()
    pq.write_table(part.slice(0, 600), inbox / "events-0.parquet")
    pq.write_table(pa.concat_tables([part.slice(600), end]), inbox / "events-1.parquet")
    q = kleene.compile(KLEENE_FIRST)
    expected = Counter(local_collapsed(c) for c in q.run_collapsed(time_sorted(part)))
    assert len(expected) > 20

    out = tmp_path / "out"
    summary = ks.run_stream_to_parquet(
        inbox,
        KLEENE_FIRST,
        out,
        tmp_path / "ckpt",
        watermark="5 seconds",
        source_options={"maxFilesPerTrigger": 1},
    )
    assert summary["input_rows"] == n + 1
    got = spark_collapsed(spark.read.parquet(str(out / "matches")), q)
    assert Counter(got) == expected
