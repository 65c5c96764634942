"""The Spark worker of event-set queries gathers a group's rows, however they are split
into Arrow batches, and matches them at once with ``SesMatcher.run`` when the group
ends: the matches and rejections of the local engine over the same rows. No Spark
session: the worker's group run is driven directly."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from kleene.spark._eventsets import EVENTSETS
from kleene.spark._kind import query_spec, resolve
from kleene.spark._prepare import POS
from kleene.spark._schema import EventColumns
from kleene.spark._worker import GroupWorker

QUERY = "PATTERN SEQ({A a, B+ b}, {C c}) WHERE prev(b.x) < b.x WITHIN 4"


def _rows() -> list[dict[str, Any]]:
    types = "ABBCABACBBCCAXBC"
    rows: list[dict[str, Any]] = [
        {"id": k, "type": t, "timestamp": k // 2, "x": (k * 7) % 5, POS: k}
        for k, t in enumerate(types)
    ]
    rows[9]["timestamp"] = None  # rejected by admission, reported when the group ends
    return rows


@pytest.mark.parametrize("cuts", [(), (5,), (1, 8, 9), (3, 6, 11, 14)])
def test_a_group_split_into_batches_equals_the_local_run(cuts: tuple[int, ...]) -> None:
    kind, part = resolve(QUERY, {})
    assert part is EVENTSETS
    spec, q = query_spec(kind, part, QUERY, {}, {})
    struct = T.StructType(
        [T.StructField("id", T.LongType()), T.StructField("timestamp", T.LongType())]
    )
    layout = part.layout(q, struct, EventColumns())
    worker = GroupWorker(spec, layout, ("kleene__one",), (), whole=True)
    table = pa.Table.from_pylist(_rows())
    run = worker.start((0,))
    rows = []
    for start, end in zip((0, *cuts), (*cuts, len(table)), strict=True):
        out = run.push(table.slice(start, end - start))
        assert out == []  # nothing is matched or rejected before the group's end
        rows += out
    rows += run.finish()
    local = q.matcher()
    want = local.run(table.drop_columns([POS]))
    assert len(want) >= 3
    found = [layout.decode(r) for r in rows if r["kleene__kind"] == "match"]
    rejected = [r for r in rows if r["kleene__kind"] == "rejected"]
    assert sorted(m.key() for m in found) == sorted(m.key() for m in want)
    got = [(r["kleene__rejected_id"], r["kleene__reason"]) for r in rejected]
    assert got == [(r.id, r.reason) for r in local.take_rejected()]
    assert [r["kleene__rejected_id"] for r in rejected] == [9]
