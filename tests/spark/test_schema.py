"""RETURN types of match rows: the compiler's value types resolved against the input
schema (no Spark session needed)."""

from __future__ import annotations

import pytest
from pyspark.sql import types as T

import kleene
from kleene.spark._collapsed import build_collapsed_schema
from kleene.spark._schema import EventColumns, build_match_schema

INPUT = T.StructType(
    [
        T.StructField("id", T.IntegerType()),
        T.StructField("type", T.StringType()),
        T.StructField("timestamp", T.TimestampType()),
        T.StructField("n", T.ShortType()),
        T.StructField("x", T.FloatType()),
        T.StructField("d", T.DecimalType(10, 2)),
        T.StructField("day", T.DateType()),
        T.StructField("at", T.TimestampType()),
        T.StructField("s", T.StringType()),
    ]
)

CASES = [
    ("a.n", T.ShortType()),  # an attribute keeps its column's type
    ("a.id", T.IntegerType()),
    ("a.timestamp", T.TimestampType()),
    ("max(b[].timestamp)", T.TimestampType()),  # a time is a time
    ("min(b[].n)", T.LongType()),  # min/max widen
    ("max(b[].x)", T.DoubleType()),
    ("max(b[].d)", T.DoubleType()),
    ("max(b[].day)", T.DateType()),
    ("max(b[].at)", T.LongType()),  # datetimes other than the time: microseconds
    ("sum(b[].n)", T.LongType()),
    ("sum(b[].x)", T.DoubleType()),
    ("avg(b[].n)", T.DoubleType()),
    ("count(b[])", T.LongType()),
    ("b.LEN", T.LongType()),
    ("a.n + b[1].n", T.LongType()),
    ("a.n + a.x", T.DoubleType()),
    ("a.at - a.timestamp", T.LongType()),  # arithmetic on times: microseconds
    ("a.n / 2", T.DoubleType()),
    ("-a.n", T.LongType()),
    ("-a.x", T.DoubleType()),
    ("a.n > 1", T.BooleanType()),
    ("not (a.n > 1)", T.BooleanType()),
    ("a.s", T.StringType()),
    ("a.missing", T.StringType()),  # an attribute the input lacks: read as text
    ("3", T.LongType()),
    ("'z'", T.StringType()),
]


@pytest.mark.parametrize(("item", "dtype"), CASES)
def test_return_types_follow_the_input_schema(item: str, dtype: T.DataType) -> None:
    plan = kleene.compile(f"PATTERN SEQ(A a, B+ b[]) RETURN {item} AS r").plan
    schema = build_match_schema(plan, INPUT, EventColumns())
    assert schema.struct()["r"].dataType == dtype


def test_match_and_collapsed_layouts_come_from_the_plan() -> None:
    text = "PATTERN SEQ(A a, B+ b[]) WHERE skip_till_any_match RETURN a.n, b.LEN AS start"
    plan = kleene.compile(text, output="collapsed").plan
    rows = build_match_schema(plan, INPUT, EventColumns())
    assert rows.variables == ("a", "b") and rows.return_names == ("a.n", "start")
    assert rows.return_columns == ("a.n", "return:start")
    collapsed = build_collapsed_schema(plan, INPUT, EventColumns())
    assert collapsed.variables == ("a", "b") and collapsed.kleene == frozenset({"b"})
    assert collapsed.struct()["a"].dataType == T.IntegerType()
