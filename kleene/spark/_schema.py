"""The Spark schema of match rows, and the type of every RETURN item.

A match row has the columns

* ``match_id`` (string): a deterministic digest of the match's variables and event ids,
  so the same match found by the local engine, by the batch pipeline or by a stream
  carries the same id;
* ``partition`` (array<string>): the partition key values as text, empty when the query
  has no partition key;
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

from collections.abc import Mapping
from dataclasses import dataclass

from pyspark.sql import types as T

from kleene.compiler.plan import Plan
from kleene.compiler.returns import ValueType
from kleene.io.schema import OutputColumns

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
    """The match-row layout of one query over one input schema."""

    variables: tuple[str, ...]
    return_names: tuple[str, ...]
    id_type: T.DataType
    time_type: T.DataType
    return_types: tuple[T.DataType, ...]

    def struct(self) -> T.StructType:
        fields = [
            T.StructField("match_id", T.StringType(), False),
            T.StructField("partition", T.ArrayType(T.StringType()), False),
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


def build_match_schema(
    plan: Plan,
    schema: T.StructType,
    columns: EventColumns,
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
    ms = MatchSchema(variables, plan.return_names, id_type, time_type, return_types)
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
