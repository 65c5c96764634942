"""The Spark schema of match rows, and the type of every RETURN item.

A match row (of a SASE+ query, an event-set pattern, and, with its ``confidence``, a
query over interval events) has the columns

* ``match_id`` (string): a deterministic digest of the match's variables and event ids,
  so the same match found by the local engine, by the batch pipeline or by a stream
  carries the same id;
* ``partition``: the partition key's values with the input columns' own types, as a
  struct with one field per key attribute (named after it); without a key, an empty
  ``array<string>`` (Parquet cannot hold a struct without fields);
* one column per positive variable, named after it, holding the ids of its events as an
  array (a one-element array for a single variable, so every variable column has the
  same shape);
* ``start`` and ``end``: the times of the first and last selected events, of the time
  column's type;
* one column per RETURN item, named as the item (its alias or text); a name that
  clashes with one of the columns above is prefixed with ``return:``, as in match files
  (:mod:`kleene.io.records`).

RETURN types are the compiler's value types of the items (:mod:`kleene.compiler.returns`:
SIGMOD 2008, section 2, attribute references, ``LEN``, aggregates, arithmetic) resolved
against the input schema, since Spark needs the output schema before any match is made.
They follow the values of the local engine: a time has the time column's type;
arithmetic, ``sum`` and ``avg`` over datetimes are in microseconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import types as T

from kleene.compiler.plan import Plan
from kleene.compiler.returns import ValueType
from kleene.io.schema import OutputColumns, match_id, plain
from kleene.match import Match

if TYPE_CHECKING:
    from kleene.spark._rows import Placement

#: a partition key's attributes and their Spark types
Partition = tuple[tuple[str, T.DataType], ...]
NO_PARTITION = T.ArrayType(T.StringType())


def partition_fields(names: Sequence[str], schema: T.StructType) -> Partition:
    """The key attributes ``names`` with their input columns' types (text for an
    attribute the input lacks: it has no values)."""
    by_name = {f.name: f.dataType for f in schema.fields}
    return tuple((n, by_name.get(n, T.StringType())) for n in names)


def partition_type(partition: Partition) -> T.DataType:
    """The ``partition`` column's type: a struct of the key's attributes, or an empty
    array without a key."""
    if not partition:
        return NO_PARTITION
    return T.StructType([T.StructField(n, t) for n, t in partition])


def partition_value(partition: Partition, values: Sequence[Any]) -> Any:
    """A match's key values as the ``partition`` column holds them."""
    if not partition:
        return []
    return {name: plain(v) for (name, _), v in zip(partition, values, strict=False)}


def partition_tuple(value: Any) -> tuple[Any, ...]:
    """The key values of a ``partition`` cell, as a tuple in key order."""
    if value is None:
        return ()
    if isinstance(value, Mapping):
        return tuple(value.values())
    if hasattr(value, "asDict"):  # a pyspark Row
        return tuple(value.asDict().values())
    return tuple(value)


_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_NUMERIC = (*_INTEGRAL, T.FloatType, T.DoubleType, T.DecimalType)


@dataclass(frozen=True)
class EventColumns:
    """Where the type, time and id of an event live in the input DataFrame."""

    time_field: str = "timestamp"
    type_field: str = "type"
    id_field: str = "id"


@dataclass(frozen=True)
class MatchSchema:
    """The match-row layout of one query over one input schema (a
    :class:`kleene.spark._rows.Rows` for results with ids, start and end)."""

    variables: tuple[str, ...]
    return_names: tuple[str, ...]
    id_type: T.DataType
    time_type: T.DataType
    return_types: tuple[T.DataType, ...]
    partition: Partition = ()

    def struct(self) -> T.StructType:
        fields = [
            T.StructField("match_id", T.StringType(), False),
            T.StructField("partition", partition_type(self.partition), False),
        ]
        fields += [T.StructField(v, T.ArrayType(self.id_type), False) for v in self.variables]
        fields += [
            T.StructField("start", self.time_type),
            T.StructField("end", self.time_type),
        ]
        fields += [
            T.StructField(n, t) for n, t in zip(self.return_columns, self.return_types, strict=True)
        ]
        return T.StructType(fields)

    @property
    def columns(self) -> OutputColumns:
        """The column names and row encoding (:mod:`kleene.io.schema`)."""
        return OutputColumns(self.variables, frozenset(), self.return_names)

    @property
    def return_columns(self) -> tuple[str, ...]:
        return self.columns.return_columns

    def row(self, match: Any, at: Placement) -> dict[str, Any]:
        """The row of one match: ids, start, end, partition and RETURN values."""
        ids = match.ids()
        values = match.values()
        row: dict[str, Any] = {
            "match_id": match_id(ids),
            "partition": partition_value(self.partition, tuple(match.partition)),
            "start": plain(match.start),
            "end": plain(match.end),
        }
        for var in self.variables:
            row[var] = [plain(i) for i in ids.get(var, ())]
        for name, column in zip(self.return_names, self.return_columns, strict=True):
            row[column] = plain(values.get(name))
        return row

    def decode(self, row: Mapping[str, Any]) -> Any:
        return Match(
            variables={v: tuple(row[v] or ()) for v in self.variables},
            positions={},
            start=row["start"],
            end=row["end"],
            partition=partition_tuple(row["partition"]),
            returned=self.returned(row),
        )

    def returned(self, row: Mapping[str, Any]) -> dict[str, Any]:
        pairs = zip(self.return_names, self.return_columns, strict=True)
        return {name: row[column] for name, column in pairs}

    def results(self, found: list[Any]) -> list[Any]:
        return found


def build_match_schema(
    plan: Plan,
    schema: T.StructType,
    columns: EventColumns,
    partition: Partition = (),
) -> MatchSchema:
    """The match-row layout for ``plan`` over input rows of ``schema``.

    Raises QueryError when two output columns would share a name.
    """
    variables = plan.positive_vars
    by_name = {f.name: f.dataType for f in schema.fields}
    id_type = by_name.get(columns.id_field, T.LongType())
    time_type = by_name.get(columns.time_field, T.DoubleType())
    attr_types = AttrTypes(by_name, columns, id_type, time_type)
    return_types = tuple(spark_type(item.type, attr_types) for item in plan.return_items)
    ms = MatchSchema(variables, plan.return_names, id_type, time_type, return_types, partition)
    ms.columns.check_matches()
    return ms


def generic_schema(q: Any, schema: T.StructType, columns: EventColumns) -> MatchSchema:
    """The match-row layout of a query of any kind from its contract alone
    (:class:`kleene.runtime.contract.CompiledQuery`): its variables, its partition
    attributes' column types, and RETURN values as text (their types are the kind's)."""
    by_name = {f.name: f.dataType for f in schema.fields}
    returns = tuple(q.return_names)
    ms = MatchSchema(
        tuple(q.variables),
        returns,
        by_name.get(columns.id_field, T.LongType()),
        by_name.get(columns.time_field, T.DoubleType()),
        tuple(T.StringType() for _ in returns),
        partition_fields(q.partition_attributes, schema),
    )
    ms.columns.check_matches()
    return ms


@dataclass(frozen=True)
class AttrTypes:
    by_name: Mapping[str, T.DataType]
    columns: EventColumns
    id_type: T.DataType
    time_type: T.DataType

    def of(self, attr: str) -> T.DataType:
        if attr == "timestamp":
            return self.time_type
        if attr == "id":
            return self.id_type
        if attr == "type":
            return T.StringType()
        return self.by_name.get(attr, T.StringType())


_FIXED = {
    "boolean": T.BooleanType(),
    "long": T.LongType(),
    "double": T.DoubleType(),
    "string": T.StringType(),
}


def spark_type(vt: ValueType, attrs: AttrTypes) -> T.DataType:
    """The Spark type of a RETURN item's values (:class:`kleene.compiler.returns.ValueType`
    resolved against the input's column types)."""
    if vt.kind in _FIXED:
        return _FIXED[vt.kind]
    if vt.kind == "time":
        return attrs.time_type
    if vt.kind == "attr" and vt.attr is not None:
        return attrs.of(vt.attr)
    if vt.kind == "widened" and vt.attr is not None:
        return _widen(_micros(attrs.of(vt.attr)))
    if vt.kind == "number":
        operands = [_micros(spark_type(o, attrs)) for o in vt.operands]
        return T.LongType() if all(isinstance(o, _INTEGRAL) for o in operands) else T.DoubleType()
    raise ValueError(f"unknown value type {vt}")


def _widen(dtype: T.DataType) -> T.DataType:
    """Integral types become long, floating ones double; others stay."""
    if isinstance(dtype, _INTEGRAL):
        return T.LongType()
    if isinstance(dtype, T.FloatType | T.DecimalType):
        return T.DoubleType()
    return dtype


def _micros(dtype: T.DataType) -> T.DataType:
    """Datetimes take part in arithmetic as microseconds since the epoch."""
    return T.LongType() if isinstance(dtype, T.TimestampType | T.TimestampNTZType) else dtype
