"""The Spark worker of event-set queries gathers a group's rows, however they are split
into Arrow batches, and matches them at once with ``SesMatcher.run`` when the group
ends: the matches and rejections of the local engine over the same rows. No Spark
session: the worker's group run is driven directly."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import types as T

from kleene.spark._worker import GroupMatcher
from kleene.spark.eventsets import ses_schema, ses_spec

QUERY = "PATTERN SEQ({A a, B+ b}, {C c}) WHERE prev(b.x) < b.x WITHIN 4"


def _rows() -> list[dict[str, Any]]:
    types = "ABBCABACBBCCAXBC"
    rows: list[dict[str, Any]] = [
        {"id": k, "type": t, "timestamp": k // 2, "x": (k * 7) % 5} for k, t in enumerate(types)
    ]
    rows[9]["timestamp"] = None  # rejected by admission, reported when the group ends
    return rows


@pytest.mark.parametrize("cuts", [(), (5,), (1, 8, 9), (3, 6, 11, 14)])
def test_a_group_split_into_batches_equals_the_local_run(cuts: tuple[int, ...]) -> None:
    spec = ses_spec(QUERY, None, None, None, {})
    q = spec.compile()
    struct = T.StructType(
        [T.StructField("id", T.LongType()), T.StructField("timestamp", T.LongType())]
    )
    worker = GroupMatcher(
        spec, ses_schema(q, struct, spec.columns), ("kleene__one",), (), whole=True
    )
    table = pa.Table.from_pylist(_rows())
    run = worker._start((0,))
    found, rejected = [], []
    for start, end in zip((0, *cuts), (*cuts, len(table)), strict=True):
        more, gone = run.push(table.slice(start, end - start))
        assert more == []  # nothing is matched before the group's end
        rejected += gone
    more, gone = run.finish()
    found, rejected = found + more, rejected + gone
    local = q.matcher()
    want = local.run(table)
    assert len(want) >= 3
    assert sorted(m.key() for m in found) == sorted(m.key() for m in want)
    assert [(r.id, r.reason) for r in rejected] == [(r.id, r.reason) for r in local.take_rejected()]
    assert [r.id for r in rejected] == [9]
