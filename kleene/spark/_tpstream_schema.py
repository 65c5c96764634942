"""The typed rows of TPStream matches on Spark (:mod:`kleene.spark.tpstream`), and the
way back to the local engine's objects.

A match row has the columns, in the conventions of the other kinds of query
(:mod:`kleene.spark._schema`):

* ``match_id`` (string): a digest of the partition key and the situations' starts
  (what tells two matches apart: situations of one symbol and key never overlap);
* ``partition`` (array<string>): the PARTITION BY values as text, empty without;
* one column per DEFINE symbol, named after it: a struct of the situation's ``start``
  and ``end`` (of the time column's type; ``end`` null for a situation still going on
  at detection) and the input positions of its ``first`` and ``last`` events;
* ``time`` (the largest end) and ``detected`` (when the match was known, section 5.3),
  of the time column's type;
* one column per RETURN item with the type of its values
  (:func:`kleene.tpstream.types.return_type` resolved against the input's columns),
  prefixed ``return:`` when its name is one of the columns above.

A rejected row has ``id`` (of the id column's type; null when the event had no usable
id: it is then known by its position), ``position`` (in the input), ``reason`` and
``record`` (the event's fields as a JSON object).

Both kinds travel in one combined layout (:data:`KIND` tells them apart, ``order`` and
``seq`` keep the local engine's order), as :mod:`kleene.spark._rows` does for SASE+.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kleene.compiler.returns import ValueType
from kleene.errors import QueryError
from kleene.io.schema import RETURN_PREFIX, match_id, partition_text, plain, record_json
from kleene.match import RejectedEvent
from kleene.spark._decode import Converter, partition_types, typed_partition
from kleene.spark._rows import KIND, MATCH_KIND, REASON, RECORD, REJECTED_ID, REJECTED_KIND
from kleene.spark._schema import AttrTypes, EventColumns, spark_type
from kleene.tpstream.model import Situation, TemporalMatch
from kleene.tpstream.query import TemporalQuery

ORDER, SEQ, POSITION = "kleene__order", "kleene__seq", "kleene__position"
FIXED = ("match_id", "partition", "time", "detected")
SITUATION_FIELDS = ("start", "end", "first", "last")


@dataclass(frozen=True)
class TemporalSchema:
    """The match-row layout of one TPStream query over one input schema."""

    symbols: tuple[str, ...]
    return_names: tuple[str, ...]
    id_type: T.DataType
    time_type: T.DataType
    return_types: tuple[T.DataType, ...]
    partition: tuple[str, ...]

    @property
    def return_columns(self) -> tuple[str, ...]:
        taken = {*FIXED, *self.symbols}
        return tuple(f"{RETURN_PREFIX}{n}" if n in taken else n for n in self.return_names)

    def struct(self) -> T.StructType:
        """The match columns."""
        time = self.time_type
        situation = T.StructType(
            [T.StructField(n, time) for n in ("start", "end")]
            + [T.StructField(n, T.LongType()) for n in ("first", "last")]
        )
        fields = [
            T.StructField("match_id", T.StringType(), False),
            T.StructField("partition", T.ArrayType(T.StringType()), False),
        ]
        fields += [T.StructField(s, situation) for s in self.symbols]
        fields += [T.StructField("time", time), T.StructField("detected", time)]
        fields += [
            T.StructField(n, t) for n, t in zip(self.return_columns, self.return_types, strict=True)
        ]
        return T.StructType(fields)

    def combined(self) -> T.StructType:
        """Match and rejected rows in one schema; every column is nullable."""
        fields = [T.StructField(KIND, T.StringType())]
        fields += [T.StructField(n, T.LongType()) for n in (ORDER, SEQ)]
        fields += [T.StructField(f.name, f.dataType, True) for f in self.struct().fields]
        fields += [
            T.StructField(REJECTED_ID, self.id_type),
            T.StructField(POSITION, T.LongType()),
            T.StructField(REASON, T.StringType()),
            T.StructField(RECORD, T.StringType()),
        ]
        return T.StructType(fields)


def temporal_schema(
    query: TemporalQuery, schema: T.StructType, columns: EventColumns
) -> TemporalSchema:
    """The layout of ``query``'s rows over input rows of ``schema``."""
    by_name = {f.name: f.dataType for f in schema.fields}
    id_type = by_name.get(columns.id_field, T.LongType())
    time_type = by_name.get(columns.time_field, T.DoubleType())
    attrs = AttrTypes(by_name, columns, id_type, time_type)
    types = tuple(_return_type(r.type, attrs) for r in query.plan.returns)
    clash = sorted(set(query.symbols) & set(FIXED))
    if clash:
        raise QueryError(
            f"situation {clash[0]!r} is named like an output column ({', '.join(FIXED)}); rename it"
        )
    return TemporalSchema(
        query.symbols, query.return_names, id_type, time_type, types, query.partition_attributes
    )


def _return_type(vt: ValueType, attrs: AttrTypes) -> T.DataType:
    """A RETURN type as a Spark type: a duration is a number of time units (seconds, a
    double, for datetimes); arithmetic over one is resolved here, the rest by
    :func:`kleene.spark._schema.spark_type`."""
    if vt.kind == "duration":
        time = attrs.time_type
        return T.LongType() if isinstance(time, T.IntegralType) else T.DoubleType()
    if vt.kind == "number":  # datetimes take part as microseconds, integers
        operands = [_return_type(o, attrs) for o in vt.operands]
        whole = (T.IntegralType, T.TimestampType, T.TimestampNTZType)
        return T.LongType() if all(isinstance(o, whole) for o in operands) else T.DoubleType()
    return spark_type(vt, attrs)


# --- rows ------------------------------------------------------------------------------


def match_row(schema: TemporalSchema, m: TemporalMatch, order: int, seq: int) -> dict[str, Any]:
    """The combined-layout row of one match (situation positions as in the input)."""
    starts = {name: plain(s.start) for name, s in m.situations.items()}
    row: dict[str, Any] = {
        KIND: MATCH_KIND,
        ORDER: order,
        SEQ: seq,
        "match_id": match_id({"partition": [plain(k) for k in m.partition], **_listed(starts)}),
        "partition": partition_text(m.partition),
        "time": plain(m.time),
        "detected": plain(m.detected),
    }
    for name, s in m.situations.items():
        row[name] = {"start": plain(s.start), "end": plain(s.end), "first": s.first, "last": s.last}
    for name, column in zip(schema.return_names, schema.return_columns, strict=True):
        row[column] = plain(m.returned.get(name))
    return row


def _listed(values: Mapping[str, Any]) -> dict[str, list[Any]]:
    return {name: [value] for name, value in values.items()}


def rejected_row(event: RejectedEvent, own_id: bool) -> dict[str, Any]:
    """The combined-layout row of one rejected event; ``own_id``: whether ``event.id``
    is the event's own id (else its position stands for it)."""
    position = event.position if event.position is not None else 0
    return {
        KIND: REJECTED_KIND,
        ORDER: position,
        SEQ: 0,
        REJECTED_ID: plain(event.id) if own_id else None,
        POSITION: event.position,
        REASON: event.reason,
        RECORD: record_json(event.record),
    }


def split(rows: DataFrame, schema: TemporalSchema) -> tuple[DataFrame, DataFrame]:
    """The match rows and the rejected rows of the combined layout."""
    matches = rows.where(F.col(KIND) == MATCH_KIND).select(
        *[F.col(f"`{f.name}`") for f in schema.struct().fields]
    )
    rejected = rows.where(F.col(KIND) == REJECTED_KIND).select(
        F.col(REJECTED_ID).alias("id"),
        F.col(POSITION).alias("position"),
        F.col(REASON).alias("reason"),
        F.col(RECORD).alias("record"),
    )
    return matches, rejected


# --- back to kleene objects -------------------------------------------------------------


def decoded(
    rows: Sequence[Mapping[str, Any]], schema: TemporalSchema, input_schema: T.StructType
) -> tuple[list[TemporalMatch], list[RejectedEvent]]:
    """Combined-layout rows as the local engine's matches and rejected events, in its
    order. A situation keeps its start, end and event positions; the aggregates the
    runtime kept for RETURN are not carried (the RETURN values are)."""
    types = partition_types(input_schema, schema.partition)
    ordered = sorted(rows, key=lambda r: (r[ORDER], r[SEQ]))
    matches = [_match(r, schema, types) for r in ordered if r[KIND] == MATCH_KIND]
    rejected = [_rejected(r) for r in ordered if r[KIND] == REJECTED_KIND]
    return matches, rejected


def _match(row: Mapping[str, Any], schema: TemporalSchema, types: list[Converter]) -> TemporalMatch:
    key = typed_partition(row["partition"] or (), types)
    situations = {}
    for name in schema.symbols:
        s = row[name]
        situations[name] = Situation(name, key, s["start"], s["end"], s["first"], s["last"])
    returned = {
        name: row[column]
        for name, column in zip(schema.return_names, schema.return_columns, strict=True)
    }
    return TemporalMatch(key, situations, row["time"], row["detected"], returned)


def _rejected(row: Mapping[str, Any]) -> RejectedEvent:
    position = row[POSITION]
    rid = row[REJECTED_ID] if row[REJECTED_ID] is not None else position
    record = json.loads(row[RECORD]) if row[RECORD] else {}
    return RejectedEvent(rid, position, row[REASON] or "", record)
