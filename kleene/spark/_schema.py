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

RETURN types are inferred from the query's AST (SIGMOD 2008, section 2: attribute
references, ``LEN``, aggregates, arithmetic) and the input schema, since Spark needs the
output schema before any match is made. They follow the values of the local engine: a
time (:mod:`kleene.compiler.returns`) has the time column's type; arithmetic, ``sum`` and
``avg`` over datetimes are in microseconds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyspark.sql import types as T

from kleene.compiler.returns import is_time
from kleene.io.schema import REJECTED_COLUMNS, OutputColumns
from kleene.lang import ast


def rejected_schema(id_type: T.DataType) -> T.StructType:
    """Rejected events: the event id, why it was rejected, the event as a JSON object."""
    types = (id_type, T.StringType(), T.StringType())
    return T.StructType([T.StructField(n, t) for n, t in zip(REJECTED_COLUMNS, types, strict=True)])


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
    query: ast.Query,
    return_names: Sequence[str],
    schema: T.StructType,
    columns: EventColumns,
) -> MatchSchema:
    """The match-row layout for ``query`` over input rows of ``schema``.

    Raises QueryError when two output columns would share a name.
    """
    variables = tuple(c.var for c in query.pattern.positive)
    by_name = {f.name: f.dataType for f in schema.fields}
    id_type = by_name.get(columns.id_field, T.LongType())
    time_type = by_name.get(columns.time_field, T.DoubleType())
    attr_types = _AttrTypes(by_name, columns, id_type, time_type)
    return_types = tuple(infer_type(item.expr, attr_types) for item in query.returns)
    ms = MatchSchema(variables, tuple(return_names), id_type, time_type, return_types)
    ms.columns.check_matches()
    return ms


@dataclass(frozen=True)
class _AttrTypes:
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


def infer_type(expr: ast.Expr, attrs: _AttrTypes) -> T.DataType:
    """The Spark type of a RETURN expression's value."""
    if isinstance(expr, ast.Literal):
        return _literal_type(expr.value)
    if is_time(expr):
        return attrs.time_type
    if isinstance(expr, ast.AttrRef):
        return attrs.of(expr.attr)
    if isinstance(expr, ast.LenRef):
        return T.LongType()
    if isinstance(expr, ast.Aggregate):
        return _aggregate_type(expr, attrs)
    if isinstance(expr, ast.Unary):
        if expr.op is ast.UnOp.NOT:
            return T.BooleanType()
        return _numeric(infer_type(expr.operand, attrs))
    if isinstance(expr, ast.Binary):
        if not expr.op.is_arithmetic:
            return T.BooleanType()
        if expr.op is ast.BinOp.DIV:
            return T.DoubleType()
        left = _micros(infer_type(expr.left, attrs))
        right = _micros(infer_type(expr.right, attrs))
        if isinstance(left, _INTEGRAL) and isinstance(right, _INTEGRAL):
            return T.LongType()
        return T.DoubleType()
    if isinstance(expr, ast.Equivalence):
        return T.BooleanType()
    return T.StringType()


def _aggregate_type(expr: ast.Aggregate, attrs: _AttrTypes) -> T.DataType:
    if expr.func is ast.AggFunc.COUNT:
        return T.LongType()
    if expr.func is ast.AggFunc.AVG:
        return T.DoubleType()
    element = _micros(attrs.of(expr.attr)) if expr.attr is not None else T.LongType()
    if expr.func is ast.AggFunc.SUM:
        return T.LongType() if isinstance(element, _INTEGRAL) else T.DoubleType()
    return _widen(element)


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


def _numeric(dtype: T.DataType) -> T.DataType:
    dtype = _micros(dtype)
    return T.LongType() if isinstance(dtype, _INTEGRAL) else T.DoubleType()


def _literal_type(value: object) -> T.DataType:
    if isinstance(value, bool):
        return T.BooleanType()
    if isinstance(value, int):
        return T.LongType()
    if isinstance(value, float):
        return T.DoubleType()
    return T.StringType()
