"""A sixth kind of query on Spark, defined in this file alone: what a new kind supplies.

``TAP <type> BY <attribute>`` makes every event of ``<type>`` a match (its variable
``e``), partitioned by ``<attribute>``; events without a time, or behind their
partition's latest time, are rejected. The kind is a compiled query and a matcher on
the contract of :mod:`kleene.runtime.contract`, plus a Spark part that says only what
is its own: its matcher counts its events (``positions``), and its rows add the
event's ``x`` and place each match at its event's arrival. Registered in
:mod:`kleene.kinds`, it runs through ``kleene.spark.match`` and ``match_stream`` with
the pipelines every kind uses, and gives what its local run gives.

Spark's Python workers compile the query from the class the registry holds, sent by
cloudpickle: by reference (the worker imports this module, found on its path) or, once
the module is registered for it, by value (the worker needs nothing but kleene).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark import cloudpickle
from pyspark.sql import SparkSession
from pyspark.sql import types as T

import kleene.spark as ks
from kleene import kinds
from kleene.errors import QueryError
from kleene.match import RejectedEvent
from kleene.runtime.contract import CompiledQuery, StreamMatcher
from kleene.spark._rows import ORDER, Placement
from kleene.spark._schema import EventColumns, MatchSchema, generic_schema, partition_tuple

pytestmark = pytest.mark.spark


@dataclass(frozen=True)
class TapMatch:
    """One event of the tapped type (a :class:`kleene.match.MatchLike`)."""

    variables: Mapping[str, tuple[Any, ...]]
    start: Any
    end: Any
    partition: tuple[Any, ...]
    x: Any
    returned: Mapping[str, Any] = field(default_factory=dict)

    def ids(self) -> dict[str, tuple[Any, ...]]:
        return dict(self.variables)

    def values(self) -> dict[str, Any]:
        return dict(self.returned)


class TapMatcher(StreamMatcher[TapMatch]):
    def __init__(self, q: TapQuery, state: bytes | None) -> None:
        self.q = q
        saved = json.loads(state) if state else {"position": 0, "latest": [], "rejected": 0}
        self.position: int = saved["position"]
        self.latest = {tuple(k): t for k, t in saved["latest"]}
        self.total: int = saved["rejected"]
        self.pending: list[RejectedEvent] = []
        self.count = 0

    def push(self, events: Any) -> list[TapMatch]:
        rows = events.to_pylist() if isinstance(events, pa.Table) else list(events)
        out = []
        for row in rows:
            position, self.position = self.position, self.position + 1
            key = tuple(row.get(a) for a in self.q.partition_attributes)
            t, latest = row.get("timestamp"), self.latest.get(key)
            if t is None or (latest is not None and t < latest):
                why = "missing timestamp" if t is None else f"time {t} is behind {latest}"
                rid = row["id"] if row.get("id") is not None else position
                self.pending.append(RejectedEvent(rid, position, why, row))
                self.total += 1
                continue
            self.latest[key] = t
            if row.get("type") == self.q.event_type:
                out.append(TapMatch({"e": (row.get("id"),)}, t, t, key, row.get("x")))
        self.count += len(out)
        return out

    def advance_to(self, time: Any) -> list[TapMatch]:
        return []  # a match is final when its event arrives

    def flush(self) -> list[TapMatch]:
        return []

    def take_rejected(self) -> list[RejectedEvent]:
        out, self.pending = self.pending, []
        return out

    def snapshot(self) -> bytes:
        latest = [[list(k), t] for k, t in self.latest.items()]
        state = {"position": self.position, "latest": latest, "rejected": self.total}
        return json.dumps(state).encode()

    @property
    def rejected_count(self) -> int:
        return self.total

    @property
    def reported(self) -> int:
        return self.count


class TapQuery(CompiledQuery[TapMatch]):
    kind = "tap"

    def __init__(self, text: str) -> None:
        words = text.split()
        self.text = text
        self.event_type = words[1]
        self.by = tuple(words[3:4])

    @property
    def variables(self) -> tuple[str, ...]:
        return ("e",)

    @property
    def partition_attributes(self) -> tuple[str, ...]:
        return self.by

    def matcher(self, *, state: bytes | None = None, on_matches: Any = None) -> TapMatcher:
        return TapMatcher(self, state)

    def explain(self) -> str:
        return f"every {self.event_type} event, per {self.by}"


# --- its Spark part: what is its own -------------------------------------------------


@dataclass(frozen=True)
class TapRows(MatchSchema):
    """The rows every kind has, plus the event's ``x``; a match is placed at the arrival
    of its event."""

    x_type: T.DataType = field(default_factory=T.LongType)

    def struct(self) -> T.StructType:
        return T.StructType([*super().struct().fields, T.StructField("x", self.x_type)])

    def row(self, match: Any, at: Placement) -> dict[str, Any]:
        return {**super().row(match, at), "x": match.x, ORDER: at.arrival(match.end)}

    def decode(self, row: Mapping[str, Any]) -> TapMatch:
        key = partition_tuple(row["partition"])
        return TapMatch({"e": tuple(row["e"])}, row["start"], row["end"], key, row["x"])


class TapSpark(ks.SparkKind):
    positions = True  # its matcher counts its events: rejected events' positions

    def layout(self, q: Any, schema: T.StructType, columns: EventColumns) -> TapRows:
        base = generic_schema(q, schema, columns)
        return TapRows(*base.__dict__.values(), x_type=schema["x"].dataType)


@pytest.fixture(scope="module")
def tap() -> Iterator[kinds.Kind]:
    kind = kinds.register(
        kinds.Kind(
            "tap",
            "tap query",
            TapQuery,
            recognises=lambda lead: lead.first == "TAP",
            snapshot_tag=b"X",
            spark=TapSpark(),
        )
    )
    yield kind
    kinds.unregister("tap")


def events(n: int) -> list[dict[str, Any]]:
    """Events of three types over two cars (and a car of its own: None), in input order,
    some without a time or behind their car's latest one, some without an id."""
    out = []
    for k in range(n):
        time: int | None = k // 2
        if k % 11 == 5:
            time = None
        elif k % 13 == 7:
            time = max(0, k // 2 - 3)
        car = None if k % 17 == 3 else k % 2
        kid = None if k % 19 == 4 or k % 22 == 5 else k
        out.append({"id": kid, "type": "ABC"[k % 3], "timestamp": time, "car": car, "x": k * 3})
    return out


SCHEMA = T.StructType(
    [
        T.StructField("id", T.LongType()),
        T.StructField("type", T.StringType()),
        T.StructField("timestamp", T.LongType()),
        T.StructField("car", T.LongType()),
        T.StructField("x", T.LongType()),
    ]
)


@pytest.mark.parametrize("by_value", [False, True], ids=["by-reference", "by-value"])
def test_match_gives_the_local_run(spark: SparkSession, tap: kinds.Kind, by_value: bool) -> None:
    """Matches, rejected events (their input positions, their ids or positions) and the
    local engine's order; the partition keeps the input's type; the query as text or
    compiled; the kind's class sent to the workers either way."""
    assert kinds.kind_of_text("// a TAP\nTAP A BY car") is tap
    rows = events(120)
    local = TapQuery("TAP A BY car").run_detailed(rows)
    assert len(local.matches) > 20 and len(local.rejected) > 10
    assert any(r.id == r.position and rows[r.position]["id"] is None for r in local.rejected)
    df = spark.createDataFrame(rows, SCHEMA)
    module = sys.modules[__name__]
    if by_value:
        cloudpickle.register_pickle_by_value(module)
    # by reference: the module's name and the class's (the worker imports them); by
    # value: the class itself
    assert (len(cloudpickle.dumps(TapQuery)) > 1000) is by_value
    try:
        by_text = ks.match(df, "TAP A BY car").persist()
        found, rejected = by_text.collect()
        compiled = ks.match(df, TapQuery("TAP A BY car")).collect()
    finally:
        if by_value:
            cloudpickle.unregister_pickle_by_value(module)
    assert found == local.matches and rejected == local.rejected
    assert compiled == (local.matches, local.rejected)
    assert by_text.layout.key == ("car",)
    assert by_text.matches.schema["partition"].dataType == T.StructType(
        [T.StructField("car", T.LongType())]
    )
    assert by_text.matches.columns == ["match_id", "partition", "e", "start", "end", "x"]
    assert by_text.rejected.columns == ["id", "position", "reason", "record"]
    by_text.unpersist()


def test_spark_options_it_does_not_take_are_refused(spark: SparkSession, tap: kinds.Kind) -> None:
    df = spark.createDataFrame(events(10), SCHEMA)
    with pytest.raises(QueryError, match="slice does not apply to a tap query"):
        ks.match(df, "TAP A BY car", slice=2)
    with pytest.raises(QueryError, match="'lateness' is not an option of a tap query"):
        ks.match(df, "TAP A BY car", lateness=2)


def test_match_stream_gives_the_local_matches(
    spark: SparkSession, tap: kinds.Kind, tmp_path: Path
) -> None:
    """Two files, one micro-batch each, behind a watermark: each car's matcher lives on
    as a snapshot between them (the contract's ``snapshot`` and ``matcher(state=)``);
    an end marker moves the watermark past every event."""
    rows = [r for r in events(80) if r["id"] is not None and r["timestamp"] is not None]
    rows.sort(key=lambda r: (r["timestamp"], r["id"]))
    end = {"id": 1000, "type": "End", "timestamp": 1000, "car": 7, "x": 0}
    local = TapQuery("TAP A BY car").run_detailed([*rows, end])
    inbox, out = tmp_path / "in", tmp_path / "out"
    inbox.mkdir()
    cut = rows[40]["timestamp"]  # the second file is ahead of the first's watermark
    first = [r for r in rows if r["timestamp"] < cut]
    second = [*(r for r in rows if r["timestamp"] >= cut), end]
    for i, part in enumerate((first, second)):
        table = pa.Table.from_pylist(part).select(SCHEMA.fieldNames())
        pq.write_table(table, inbox / f"events-{i}.parquet")
    ks.run_stream_to_parquet(
        inbox, "TAP A BY car", out, tmp_path / "ckpt", source_options={"maxFilesPerTrigger": 1}
    )
    got = spark.read.parquet(str(out / "matches")).collect()
    assert sorted((r["e"][0], r["partition"]["car"], r["x"]) for r in got) == sorted(
        (m.ids()["e"][0], m.partition[0], m.x) for m in local.matches
    )
    assert len({r["batch_id"] for r in got}) == 2  # matches leave as the watermark passes
