"""Spark result rows back as kleene objects on the driver, in the documented order.

The batch pipeline's rows (:mod:`kleene.spark._schema`, :mod:`kleene.spark._collapsed`)
become :class:`kleene.Match`, :class:`kleene.CollapsedMatch` and
:class:`kleene.match.RejectedEvent` objects equal to the local engine's, so one writer
(:mod:`kleene.io.sinks`) gives the same files for both engines. Spark carries partition
values as text; the input column types turn them back into the local engine's values.
Matches and rejected events come sorted as :mod:`kleene.io.records` documents.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pyspark.sql import types as T

import kleene
from kleene.collapsed import CollapsedMatch
from kleene.errors import KleeneError
from kleene.io.records import match_order, rejected_order
from kleene.io.schema import match_record, rejected_record
from kleene.match import Match, RejectedEvent
from kleene.spark._schema import MatchSchema

Converter = Any  # a function from the text of a value to the value, or None to keep text


def matches_from_rows(
    rows: Sequence[Mapping[str, Any]],
    query: kleene.Query,
    schema: MatchSchema,
    partition_types: Sequence[Converter] = (),
) -> list[Match]:
    """Match rows (one id array per variable) as matches, in the documented order."""
    returns = tuple(zip(schema.return_names, schema.return_columns, strict=True))
    out = [
        Match(
            variables={v: tuple(row[v] or ()) for v in query.variables},
            positions={},
            start=row["start"],
            end=row["end"],
            partition=typed_partition(row["partition"] or (), partition_types),
            returned={name: row[column] for name, column in returns},
        )
        for row in rows
    ]
    return sorted(out, key=lambda m: match_order(match_record(m)))


def collapsed_from_rows(
    rows: Sequence[Mapping[str, Any]],
    query: kleene.Query,
    partition_types: Sequence[Converter] = (),
) -> list[CollapsedMatch]:
    """Collapsed rows as collapsed matches (SIGMOD 2014, section 5.2), in the documented
    order. Their ``expand()`` needs the events and raises: expand on Spark with
    :meth:`kleene.spark.MatchResult.expand`. ``count()`` is the one Spark computed."""
    kleene_vars = query.kleene_variables
    out: list[CollapsedMatch] = []
    for row in rows:
        collapsed = CollapsedMatch(
            singles={v: row[v] for v in query.variables if v not in kleene_vars},
            candidates={
                v: tuple((c["id"], c["label"]) for c in row[v] or ())
                for v in query.variables
                if v in kleene_vars
            },
            first_fixed=frozenset(row["first_fixed"] or ()),
            last_fixed=frozenset(row["last_fixed"] or ()),
            start=row["start"],
            end=row["end"],
            partition=typed_partition(row["partition"] or (), partition_types),
            exact=bool(row["exact"]),
            _expand=_no_events,
        )
        out.append(_Counted(collapsed, int(row["count"])))
    out.sort(key=lambda c: match_order(match_record(c)))
    return out


class _Counted(CollapsedMatch):
    """A collapsed match read back from Spark, which knows its count but not its events."""

    def __init__(self, c: CollapsedMatch, count: int) -> None:
        fields = {f: getattr(c, f) for f in CollapsedMatch.__dataclass_fields__}
        super().__init__(**fields)
        object.__setattr__(self, "_count", count)

    def count(self) -> int:
        return int(self._count)  # type: ignore[attr-defined]


def _no_events() -> list[Match]:
    raise KleeneError(
        "a collapsed result read back from Spark has no events to expand: "
        "use kleene.spark.MatchResult.expand()"
    )


def rejected_from_rows(rows: Sequence[Mapping[str, Any]]) -> list[RejectedEvent]:
    """Rejected rows (id, reason, record as JSON text), in the documented order."""
    events = []
    for row in rows:
        record = row.get("record")
        try:
            fields = json.loads(record) if record else {}
        except json.JSONDecodeError:
            fields = {"record": record}
        events.append(RejectedEvent(row.get("id"), None, row.get("reason") or "", fields))
    return sorted(events, key=lambda e: rejected_order(rejected_record(e)))


def partition_types(schema: T.StructType, names: Sequence[str]) -> list[Converter]:
    """A converter per partition attribute, from the input column's type."""
    kinds = {f.name: f.dataType for f in schema.fields}
    converters: list[Converter] = []
    for name in names:
        kind = kinds.get(name)
        if isinstance(kind, T.ByteType | T.ShortType | T.IntegerType | T.LongType):
            converters.append(int)
        elif isinstance(kind, T.FloatType | T.DoubleType):
            converters.append(float)
        elif isinstance(kind, T.BooleanType):
            converters.append(lambda text: {"true": True, "false": False}[text.lower()])
        else:
            converters.append(None)
    return converters


def typed_partition(values: Sequence[Any], converters: Sequence[Converter]) -> tuple[Any, ...]:
    if len(converters) != len(values):
        return tuple(values)
    out = []
    for value, convert in zip(values, converters, strict=True):
        try:
            out.append(value if convert is None or value is None else convert(value))
        except (ValueError, KeyError):
            out.append(value)
    return tuple(out)
