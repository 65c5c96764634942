"""TPStream queries on Spark (kleene/spark/_tpstream.py): ``kleene run --engine spark``
writes the files ``--engine local`` writes, on awkward input (nulls, a missing
attribute, repeated and out-of-order timestamps in a partition, another stream's events,
a null partition key, several partitions), with and without PARTITION BY; and
``kleene.spark.match`` gives the local engine's objects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import types as T

import kleene.spark as ks
from kleene.cli import EXIT_OK, main
from kleene.io.schema import match_record
from kleene.spark._schema import EventColumns
from kleene.spark._tpstream import temporal_schema
from kleene.tpstream.model import TemporalMatch
from kleene.tpstream.query import TemporalQuery
from tests.tpstream.test_runtime import DRIVERS, cars

pytestmark = pytest.mark.spark

UNPARTITIONED = """FROM CarSensors
DEFINE A AS CarSensors.accel > 8, B AS CarSensors.speed > 70
PATTERN A overlaps B; A starts B; A meets B WITHIN 20
RETURN count(B) AS n, max(B.speed) AS top"""


def awkward() -> list[dict[str, Any]]:
    """The two cars of the worked example, a third car driving like car 1 shifted by
    one, and the troubles the admission must report alike on both engines."""
    rows = cars() + [dict(r, car_id=3, timestamp=r["timestamp"] + 1) for r in cars()[::2]]
    rows.sort(key=lambda r: r["timestamp"])
    rows[5] = dict(rows[5], speed=None)  # a null
    del rows[9]["accel"]  # a missing attribute
    rows.insert(12, dict(rows[11]))  # a repeated timestamp in its partition
    rows.insert(20, dict(rows[3], speed=99))  # an event behind its partition's latest
    rows.insert(2, dict(rows[2], type="Other"))  # another stream's event
    rows.append({"type": "CarSensors", "timestamp": 30, "car_id": None, "speed": 90, "accel": 9})
    return rows


def run(query: Path, source: Path, output: Path, engine: str) -> int:
    args = ["run", str(query), "-i", str(source), "-o", str(output), "-q", "--engine", engine]
    return main([*args, "--master", "local[1]"] if engine == "spark" else args)


@pytest.mark.parametrize("text", [DRIVERS, UNPARTITIONED], ids=["partitioned", "one-group"])
def test_engines_write_the_same_files(spark: SparkSession, tmp_path: Path, text: str) -> None:
    source = tmp_path / "cars.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in awkward()), encoding="utf-8")
    query = tmp_path / "q.tps"
    query.write_text(text, encoding="utf-8")
    written = {}
    for engine in ("local", "spark"):
        output = tmp_path / f"{engine}.jsonl"
        assert run(query, source, output, engine) == EXIT_OK
        rejected = Path(f"{output}.rejected.jsonl")
        written[engine] = (output.read_text(), rejected.read_text())
    matches, rejected = written["local"]
    assert matches and rejected.count("\n") >= 4  # the case exercises both
    assert written["spark"] == written["local"]


def test_match_gives_the_local_engines_objects_and_typed_columns(spark: SparkSession) -> None:
    """One persisted result read both ways: ``collect`` gives the local engine's objects
    (records, situations' events, keys, rejected events), and the matches and rejected
    events are typed columns holding the same values."""
    rows = awkward()[:-1]  # (a null key is not a Spark-inferable column in a list)
    result = ks.match(spark.createDataFrame(rows), DRIVERS).persist()
    local = TemporalQuery(DRIVERS).run_detailed(rows)
    found, rejected = result.collect()
    # the records and the situations' events; the runtime's own aggregates stay local
    assert [match_record(m) for m in found] == [match_record(m) for m in local.matches]
    assert [spans(m) for m in found] == [spans(m) for m in local.matches]
    assert [m.partition for m in found] == [(1,), (3,)]
    assert [(r.position, r.reason) for r in rejected] == [
        (r.position, r.reason) for r in local.rejected
    ]

    time = T.LongType()  # the input's timestamp column
    situation = T.StructType(
        [T.StructField(n, time) for n in ("start", "end")]
        + [T.StructField(n, T.LongType()) for n in ("first", "last")]
    )
    types = {f.name: f.dataType for f in result.matches.schema.fields}
    assert types == {
        "match_id": T.StringType(),
        "partition": T.StructType([T.StructField("car_id", T.LongType())]),
        **{symbol: situation for symbol in "ABC"},
        "time": time,
        "detected": time,
        "id": T.LongType(),  # first(B.car_id): car_id's type
        "avg_speed": T.DoubleType(),
        "b_length": time,  # duration(B): a number of time units
    }
    got = sorted(
        (
            r["partition"]["car_id"],
            {k: (r[k]["start"], r[k]["end"]) for k in "ABC"},
            r["time"],
            r["detected"],
            r["id"],
            r["avg_speed"],
            r["b_length"],
        )
        for r in result.matches.collect()
    )
    assert got == sorted(
        (
            m.partition[0],
            {k: (s.start, s.end) for k, s in m.situations.items()},
            m.time,
            m.detected,
            m.returned["id"],
            m.returned["avg_speed"],
            m.returned["b_length"],
        )
        for m in local.matches
    )
    assert len(got) == 2 and got[0][1]["C"][1] is None  # C still going on at detection
    refused = result.rejected.collect()
    assert result.rejected.columns == ["id", "position", "reason", "record"]
    assert sorted((r["position"], r["reason"]) for r in refused) == sorted(
        (r.position, r.reason) for r in local.rejected
    )
    result.unpersist()


def test_return_types_follow_the_input_columns() -> None:
    """Datetime timestamps: starts and ends are timestamps, a duration is seconds (a
    double); aggregates take their attribute's type; arithmetic widens as in SASE+."""
    query = TemporalQuery(
        "FROM S DEFINE A AS S.x > 1, B AS S.y > 2 PATTERN A before B WITHIN 10 "
        "RETURN start(A) AS s, duration(B) AS d, max(A.x) AS top, sum(B.y) AS total, "
        "count(B) + 1 AS n, avg(A.x) AS mean, first(A.name) AS name, duration(B) * 2 AS d2"
    )
    schema = T.StructType(
        [
            T.StructField("timestamp", T.TimestampType()),
            T.StructField("x", T.IntegerType()),
            T.StructField("y", T.DoubleType()),
            T.StructField("name", T.StringType()),
        ]
    )
    layout = temporal_schema(query, schema, EventColumns())
    assert dict(zip(layout.return_names, layout.return_types, strict=True)) == {
        "s": T.TimestampType(),
        "d": T.DoubleType(),
        "top": T.IntegerType(),
        "total": T.DoubleType(),
        "n": T.LongType(),
        "mean": T.DoubleType(),
        "name": T.StringType(),
        "d2": T.DoubleType(),
    }


def test_match_stream_carries_the_matchers_across_micro_batches(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Car 1's situations start in the first file and its match is detected (at 8) in
    the second: the matcher's snapshot is carried from micro-batch to micro-batch, and
    the rows of both batches are the local engine's matches and rejected events (each
    micro-batch in time order, as the stream matches it)."""
    rows = [dict(r, id=k) for k, r in enumerate(awkward()[:-1])]
    first = [r for r in rows if r["timestamp"] <= 5]
    second = [r for r in rows if r["timestamp"] > 5]
    folder = tmp_path / "in"
    folder.mkdir()
    for name, part in (("a", first), ("b", second)):
        (folder / f"{name}.json").write_text("".join(json.dumps(r) + "\n" for r in part))
    schema = spark.read.json(str(folder)).schema
    events = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(str(folder))
    result = ks.match_stream(events, DRIVERS, checkpoint=str(tmp_path / "checkpoint"))
    out = tmp_path / "out"
    result.to_parquet(str(out / "matches"), str(out / "rejected")).awaitTermination()
    rows = spark.read.parquet(str(out / "matches")).toArrow().to_pylist()
    found = [result.schema.decode(r) for r in rows]
    assert all(isinstance(r["partition"]["car_id"], int) for r in rows)
    refused = [(r["id"], r["reason"]) for r in spark.read.parquet(str(out / "rejected")).collect()]
    q = TemporalQuery(DRIVERS)
    local = q.run_detailed(first)
    assert local.matches == []  # nothing is known after the first file
    # a micro-batch is matched in time order (then id): the local engine fed so
    local = q.run_detailed([r for part in (first, second) for r in sorted(part, key=by_time)])
    assert sorted(returned(m) for m in found) == sorted(returned(m) for m in local.matches)
    assert sorted(refused) == sorted((r.id, r.reason) for r in local.rejected)


def spans(m: TemporalMatch) -> dict[str, tuple[Any, ...]]:
    return {k: (s.symbol, s.key, s.start, s.end, s.first, s.last) for k, s in m.situations.items()}


def by_time(r: dict[str, Any]) -> tuple[Any, ...]:
    return (r["timestamp"], r["id"])


def returned(m: TemporalMatch) -> tuple[Any, ...]:
    spans = tuple(sorted((k, s.start, s.end) for k, s in m.situations.items()))
    return (m.partition, spans, m.detected, tuple(sorted(m.returned.items())))
