"""Every registered kind with a Spark part, through the one adapter: ``kleene.spark.match``
gives the local run's matches and rejected events (the Spark leg of the contract
suite), its ``partition`` column keeps the input's types, and options the kind does
not take are refused naming the kind."""

from __future__ import annotations

import json
import random
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import types as T

import kleene
import kleene.spark as ks
from kleene import kinds
from kleene.errors import QueryError
from kleene.io.schema import match_record, rejected_record
from tests.tpstream.test_runtime import DRIVERS, cars

pytestmark = pytest.mark.spark


def points(n: int, seed: int) -> list[dict[str, Any]]:
    """Point events of types A, B, C over two cars, some late or without a value."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        time = k - (3 if rng.random() < 0.06 else 0)
        x = None if rng.random() < 0.04 else rng.randint(0, 9)
        out.append({"id": k, "type": rng.choice("ABC"), "timestamp": time, "car": k % 2, "x": x})
    return out


def intervals(n: int, seed: int) -> list[dict[str, Any]]:
    """Interval events in an arrival order that keeps section 2.2's assumption, two
    with lower > upper."""
    rng = random.Random(seed)
    out = []
    for k in range(n):
        lower = 2 * k + rng.randint(0, 1)
        upper = lower + rng.randint(0, 3) - (5 if k in (7, 19) else 0)
        out.append({"id": k, "type": rng.choice("AB"), "lower": lower, "upper": upper})
    return out


def drives() -> list[dict[str, Any]]:
    rows = cars()
    rows[5] = dict(rows[5], speed=None)
    return [dict(r, id=k) for k, r in enumerate(rows)]


#: per kind: a query, its options, its events, the partition column's type
CASES: dict[str, tuple[str, dict[str, Any], Any, T.DataType]] = {
    "sase": (
        "PATTERN SEQ(A a, B b) WHERE [car] AND b.x > a.x WITHIN 4 RETURN b.x - a.x AS d",
        {},
        lambda: points(300, 1),
        T.StructType([T.StructField("car", T.LongType())]),
    ),
    "eventset": (
        "PATTERN SEQ({A a, B+ b}, {C c}) WHERE a.car = b.car AND b.car = c.car WITHIN 5",
        {},
        lambda: points(200, 2),
        T.StructType([T.StructField("car", T.LongType())]),  # its Definition 6 attribute
    ),
    "interval": (
        "PATTERN SEQ(A a, B b) WHERE skip_till_any_match WITHIN 3",
        {"time": "interval"},
        lambda: intervals(60, 3),
        T.ArrayType(T.StringType()),  # nor has an interval result
    ),
    "tpstream": (
        DRIVERS,
        {},
        drives,
        T.StructType([T.StructField("car_id", T.LongType())]),
    ),
}


def spark_kinds() -> list[str]:
    return [k.name for k in kinds.kinds() if k.spark is not None]


def test_every_kind_but_programs_has_a_spark_part_and_a_case() -> None:
    assert sorted(spark_kinds()) == sorted(CASES)
    assert kinds.get("program").spark is None


def _records(found: list[Any]) -> list[str]:
    return sorted(json.dumps(match_record(m), default=str, sort_keys=True) for m in found)


@pytest.mark.parametrize("name", sorted(CASES))
def test_spark_gives_the_local_run(spark: SparkSession, name: str) -> None:
    text, options, make, partition = CASES[name]
    rows = make()
    q = kleene.compile(text, **options)
    assert kinds.kind_of(q) is kinds.get(name)
    local = q.run_detailed(rows)
    assert local.matches and local.rejected  # the case exercises both outputs
    frame = spark.createDataFrame(pa.Table.from_pylist(rows))  # the fields in their order
    result = ks.match(frame, text, **options).persist()
    found, rejected = result.collect()
    assert _records(found) == _records(local.matches)
    assert sorted(map(str, map(rejected_record, rejected))) == sorted(
        map(str, map(rejected_record, local.rejected))
    )
    assert result.matches.schema["partition"].dataType == partition
    assert result.rejected.columns == ["id", "position", "reason", "record"]
    assert result.rejected.count() == len(local.rejected)
    result.unpersist()


def test_options_a_kind_does_not_take_are_refused(spark: SparkSession) -> None:
    df = spark.createDataFrame(points(10, 4))
    with pytest.raises(QueryError, match="slice does not apply to a TPStream query"):
        ks.match(df, DRIVERS, slice=2)
    with pytest.raises(QueryError, match="partition_by does not apply to an event-set pattern"):
        ks.match(df, CASES["eventset"][0], partition_by="car")
    with pytest.raises(QueryError, match="'algorithm' is not an option of a SASE\\+ query"):
        ks.match(df, CASES["sase"][0], algorithm="jointree")
    with pytest.raises(QueryError, match="runs on the local engine"):
        ks.match(df, "DEFINE X AS PATTERN SEQ(A a) PATTERN SEQ(X x, B b)")
