"""The Python-worker side of TPStream on Spark (:mod:`kleene.spark.tpstream`): one
partition key's events, in input order, through a fresh
:class:`~kleene.tpstream.runtime.TemporalMatcher`, its matches and rejected events as
output rows. No pyspark here: the function is called with Arrow tables.

An output row carries the result twice: as the JSON text of its output record
(:mod:`kleene.io.schema`, for people) and as tagged data (:func:`kleene.runtime.snapshot.dumps`,
lossless: datetimes, integers and floats come back as they were) for
:meth:`TemporalMatchResult.collect`. ``order`` is the input position of the event whose
arrival reported the match (a rejected event's own position), so that the rows sorted by
(``order``, ``seq``) are in the local engine's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa

from kleene.io.jsonl import dumps as json_line
from kleene.io.schema import match_record, rejected_record
from kleene.match import RejectedEvent
from kleene.runtime import snapshot
from kleene.tpstream.matcher import situation_data, situation_from
from kleene.tpstream.model import TemporalMatch
from kleene.tpstream.query import TemporalQuery

POS = "kleene__pos"
MATCH, REJECTED = "match", "rejected"
OUTPUT = pa.schema(
    [
        ("kind", pa.string()),
        ("order", pa.int64()),
        ("seq", pa.int64()),
        ("partition", pa.string()),
        ("record", pa.string()),
        ("data", pa.binary()),
    ]
)


_COMPILED: dict[str, TemporalQuery] = {}


def compiled(text: str, options: dict[str, Any]) -> TemporalQuery:
    """The query of a text and options, compiled once per worker process."""
    key = repr((text, sorted(options.items())))
    if key not in _COMPILED:
        _COMPILED[key] = TemporalQuery(text, **options)
    return _COMPILED[key]


def run_group(query: TemporalQuery, table: pa.Table, drop: Sequence[str] = ()) -> pa.Table:
    """The output rows of one group: ``table`` holds its events with their input
    positions in ``kleene__pos``; the columns in ``drop`` are not the events'."""
    table = table.sort_by(POS)
    positions = table.column(POS).to_pylist()
    events = table.drop_columns([POS, *(c for c in drop if c in table.column_names)])
    matcher = query.matcher()
    found = matcher.push(events) + matcher.flush()
    rejected = matcher.take_rejected()
    refused = {r.position for r in rejected}
    raw_ids = _column(events, query.fields.id_field)
    times = _column(events, query.fields.time_field)
    arrival: dict[Any, int] = {}
    for j, t in enumerate(times):
        if j not in refused:
            arrival.setdefault(t, positions[j])
    rows = [
        match_row(_placed(m, positions), arrival.get(m.detected, positions[-1]), k)
        for k, m in enumerate(found)
    ]
    rows += [_rejected_row(r, positions, raw_ids) for r in rejected]
    return pa.Table.from_pylist(rows, schema=OUTPUT)


def _placed(m: TemporalMatch, positions: list[int]) -> TemporalMatch:
    """The match with its situations' first and last events at their input positions
    (the matcher counted positions within the group)."""
    situations = {
        name: replace(s, first=positions[s.first], last=positions[s.last])
        for name, s in m.situations.items()
    }
    return replace(m, situations=situations)


def _column(table: pa.Table, name: str) -> list[Any]:
    if name not in table.column_names:
        return [None] * table.num_rows
    return table.column(name).to_pylist()


def match_row(m: TemporalMatch, order: int, seq: int) -> dict[str, Any]:
    record = match_record(m)
    tree = [
        list(m.key),
        {name: situation_data(s) for name, s in m.situations.items()},
        m.time,
        m.detected,
        dict(m.returned),
    ]
    return {
        "kind": MATCH,
        "order": order,
        "seq": seq,
        "partition": json_line({"partition": record["partition"]}),
        "record": json_line(record),
        "data": snapshot.dumps(tree),
    }


def _rejected_row(r: RejectedEvent, positions: list[int], raw_ids: list[Any]) -> dict[str, Any]:
    """A rejected event with its input position and, where its id was its position in
    the group (no id), the input position as id."""
    assert r.position is not None  # the TPStream admission gives every one its position
    position = positions[r.position]
    raw = raw_ids[r.position]
    rid = r.id if raw is not None and r.id == raw else position
    return rejected_row(RejectedEvent(rid, position, r.reason, r.record))


def rejected_row(event: RejectedEvent) -> dict[str, Any]:
    """The output row of one rejected event."""
    return {
        "kind": REJECTED,
        "order": event.position if event.position is not None else 0,
        "seq": 0,
        "partition": None,
        "record": json_line(rejected_record(event)),
        "data": snapshot.dumps([event.id, event.position, event.reason, dict(event.record)]),
    }


def decode(kind: str, data: bytes) -> TemporalMatch | RejectedEvent:
    """The match or rejected event of one output row."""
    tree = snapshot.loads(data)
    if kind == REJECTED:
        rid, position, reason, record = tree
        return RejectedEvent(rid, position, reason, record)
    key, situations, time, detected, returned = tree
    return TemporalMatch(
        tuple(key),
        {name: situation_from(d) for name, d in situations.items()},
        time,
        detected,
        returned,
    )
