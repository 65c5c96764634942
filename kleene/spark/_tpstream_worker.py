"""The Python-worker side of TPStream on Spark (:mod:`kleene.spark.tpstream`): one
partition key's events, in input order, through a fresh
:class:`~kleene.tpstream.runtime.TemporalMatcher`, its matches and rejected events as
typed rows of the combined layout (:mod:`kleene.spark._tpstream_schema`). The function
is called with Arrow tables.

``order`` is the input position of the event whose arrival reported the match (a
rejected event's own position), so that the rows sorted by (``order``, ``seq``) are in
the local engine's order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pyarrow as pa

from kleene.match import RejectedEvent
from kleene.spark._rows import arrow_array
from kleene.spark._tpstream_schema import TemporalSchema, match_row, rejected_row
from kleene.tpstream.model import TemporalMatch
from kleene.tpstream.query import TemporalQuery

POS = "kleene__pos"

_COMPILED: dict[str, TemporalQuery] = {}


def compiled(text: str, options: dict[str, Any]) -> TemporalQuery:
    """The query of a text and options, compiled once per worker process."""
    key = repr((text, sorted(options.items())))
    if key not in _COMPILED:
        _COMPILED[key] = TemporalQuery(text, **options)
    return _COMPILED[key]


def run_group(
    query: TemporalQuery,
    schema: TemporalSchema,
    arrow: pa.Schema,
    table: pa.Table,
    drop: Sequence[str] = (),
) -> pa.Table:
    """The output rows (of Arrow schema ``arrow``) of one group: ``table`` holds its
    events with their input positions in ``kleene__pos``; the columns in ``drop`` are
    not the events'."""
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
        match_row(schema, _placed(m, positions), arrival.get(m.detected, positions[-1]), k)
        for k, m in enumerate(found)
    ]
    rows += [_rejected_row(r, positions, raw_ids) for r in rejected]
    return to_arrow(rows, arrow)


def to_arrow(rows: list[dict[str, Any]], arrow: pa.Schema) -> pa.Table:
    """Rows as a table of the combined layout (values coerced to the column types)."""
    arrays = [arrow_array([row.get(f.name) for row in rows], f.type) for f in arrow]
    return pa.Table.from_arrays(arrays, schema=arrow)


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


def _rejected_row(r: RejectedEvent, positions: list[int], raw_ids: list[Any]) -> dict[str, Any]:
    """A rejected event at its input position; its id is its own only when it had one
    the admission took (else the input position stands for it, as locally)."""
    assert r.position is not None  # the TPStream admission gives every one its position
    position = positions[r.position]
    raw = raw_ids[r.position]
    own = raw is not None and r.id == raw
    return rejected_row(RejectedEvent(r.id if own else position, position, r.reason, r.record), own)
