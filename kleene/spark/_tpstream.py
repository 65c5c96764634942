"""TPStream queries on Spark (EDBT 2018, Figure 2 per partition): situations are
derived and matched per PARTITION BY key.

**Grouping** is the default of every kind (:meth:`kleene.spark._kind.SparkKind.group`):
the events, numbered in input order with their ids as read, are grouped by the query's
PARTITION BY attributes (one group without PARTITION BY, or when the input lacks one of
them: every event is then rejected for it, as locally), and each group is fed in input
order to one :class:`~kleene.tpstream.runtime.TemporalMatcher`. A TPStream matcher's
state per key does not depend on other keys (only the stream's time kind and attribute
kinds are shared, and a Spark column has one type), so the result equals
``TemporalQuery.run_detailed`` over the input: the same matches with their detection
times and the same rejected events, positions and reasons, in the same order (a match
is placed at the input position of the event whose arrival reported it).

**Rows.** A match row has the columns, in the conventions of the other kinds:

* ``match_id`` (string): a digest of the partition key and the situations' starts
  (what tells two matches apart: situations of one symbol and key never overlap);
* ``partition``: the PARTITION BY values with their columns' types (a struct; an empty
  array without PARTITION BY, :mod:`kleene.spark._schema`);
* one column per DEFINE symbol, named after it: a struct of the situation's ``start``
  and ``end`` (of the time column's type; ``end`` null for a situation still going on
  at detection) and the input positions of its ``first`` and ``last`` events;
* ``time`` (the largest end) and ``detected`` (when the match was known, section 5.3),
  of the time column's type;
* one column per RETURN item with the type of its values
  (:func:`kleene.tpstream.types.return_type` resolved against the input's columns),
  prefixed ``return:`` when its name is one of the columns above.

**Streams** take each micro-batch of a key as it comes, in time order (then id): a
match leaves in the micro-batch of the event that reports it, at its detection time,
not when its situations end; an event behind its partition's latest is rejected with
the reason the local engine gives. Positions count the key's events.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pyspark.sql import types as T

from kleene.compiler.returns import ValueType
from kleene.errors import QueryError
from kleene.io.schema import RETURN_PREFIX, match_id, plain
from kleene.spark._kind import SparkKind
from kleene.spark._rows import ORDER, Placement
from kleene.spark._schema import (
    AttrTypes,
    EventColumns,
    Partition,
    partition_fields,
    partition_tuple,
    partition_type,
    partition_value,
    spark_type,
)
from kleene.tpstream.model import Situation, TemporalMatch

FIXED = ("match_id", "partition", "time", "detected")


@dataclass(frozen=True)
class TemporalSchema:
    """The match-row layout of one TPStream query over one input schema."""

    symbols: tuple[str, ...]
    return_names: tuple[str, ...]
    id_type: T.DataType
    time_type: T.DataType
    return_types: tuple[T.DataType, ...]
    partition: Partition

    @property
    def return_columns(self) -> tuple[str, ...]:
        taken = {*FIXED, *self.symbols}
        return tuple(f"{RETURN_PREFIX}{n}" if n in taken else n for n in self.return_names)

    def struct(self) -> T.StructType:
        time = self.time_type
        situation = T.StructType(
            [T.StructField(n, time) for n in ("start", "end")]
            + [T.StructField(n, T.LongType()) for n in ("first", "last")]
        )
        fields = [
            T.StructField("match_id", T.StringType(), False),
            T.StructField("partition", partition_type(self.partition), False),
        ]
        fields += [T.StructField(s, situation) for s in self.symbols]
        fields += [T.StructField("time", time), T.StructField("detected", time)]
        fields += [
            T.StructField(n, t) for n, t in zip(self.return_columns, self.return_types, strict=True)
        ]
        return T.StructType(fields)

    def row(self, m: Any, at: Placement) -> dict[str, Any]:
        """The row of one match, its situations' events at their input positions, placed
        at the arrival of the event that reported it."""
        key = m.partition
        starts = {name: [plain(s.start)] for name, s in m.situations.items()}
        row: dict[str, Any] = {
            ORDER: at.arrival(m.detected),
            "match_id": match_id({"partition": [plain(k) for k in key], **starts}),
            "partition": partition_value(self.partition, key),
            "time": plain(m.time),
            "detected": plain(m.detected),
        }
        for name, s in m.situations.items():
            row[name] = {
                "start": plain(s.start),
                "end": plain(s.end),
                "first": at.position(s.first),
                "last": at.position(s.last),
            }
        for name, column in zip(self.return_names, self.return_columns, strict=True):
            row[column] = plain(m.returned.get(name))
        return row

    def decode(self, row: Mapping[str, Any]) -> TemporalMatch:
        """The match of a row. A situation keeps its start, end and event positions; the
        aggregates the runtime kept for RETURN are not carried (the RETURN values are)."""
        key = partition_tuple(row["partition"])
        situations = {}
        for name in self.symbols:
            s = row[name]
            situations[name] = Situation(name, key, s["start"], s["end"], s["first"], s["last"])
        pairs = zip(self.return_names, self.return_columns, strict=True)
        returned = {name: row[column] for name, column in pairs}
        return TemporalMatch(key, situations, row["time"], row["detected"], returned)

    def results(self, found: list[Any]) -> list[Any]:
        return found


def temporal_schema(query: Any, schema: T.StructType, columns: EventColumns) -> TemporalSchema:
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
    partition = partition_fields(query.partition_attributes, schema)
    return TemporalSchema(query.symbols, query.return_names, id_type, time_type, types, partition)


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


class TemporalSpark(SparkKind):
    """The Spark part of TPStream queries (:class:`kleene.tpstream.query.TemporalQuery`)."""

    watermark = False
    positions = True

    def options_of(self, query: Any) -> dict[str, Any]:
        f = query.fields
        return {
            "time_field": f.time_field,
            "type_field": f.type_field,
            "id_field": f.id_field,
            "time_unit": query.time_unit,
            "low_latency": query.low_latency,
            "order": query.order,
            "max_matches": None,  # the driver applies it (kleene run): a worker error loses all
        }

    def layout(self, q: Any, schema: T.StructType, columns: EventColumns) -> TemporalSchema:
        return temporal_schema(q, schema, columns)


TPSTREAM = TemporalSpark()
