"""The expression IR as Spark Columns, for filters Spark evaluates in its scan.

Each IR node (:mod:`kleene.compiler.expr`) becomes a pair of Columns: its value and
whether it is an *error*. The pair follows the IR's rules, not SQL's three-valued
logic: a null operand is an error, ``and``/``or`` look at the left operand first
(``false and <error>`` is false, ``<error> or true`` an error), division and modulo by
zero are errors (the divisor is replaced before dividing, so no ANSI setting matters),
``%`` takes the divisor's sign, ints and floats mix as in Python, and NaN compares as
in Python (equal to nothing). The error column is never null, and the value column is
not null wherever the error column is false.

Spark columns have one type each, so kinds are known before any row is read: an
ordering of a number and a string is an error on every row. Where Spark cannot compute
exactly what Python computes the expression is *not pushable* (:class:`NotPushable`):
integer arithmetic that could leave the 64-bit range (tracked with a bound on each
integer value, from its column type), ``/`` of integers beyond 2**53, datetime
attributes, decimals, an equality of a boolean and a number. The event time is a number
(microseconds for timestamp columns), as in the local engine.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kleene.compiler import expr

LONG_MAX = 2**63 - 1
EXACT = 2**53  # integers up to here convert to double exactly
_INT_BOUNDS = {T.ByteType: 2**7, T.ShortType: 2**15, T.IntegerType: 2**31, T.LongType: 2**63}

INT, FLOAT, STRING, BOOLEAN = "int", "float", "string", "boolean"


class NotPushable(Exception):
    """Spark cannot evaluate this expression exactly as the rules say."""


@dataclass(frozen=True)
class Value:
    """A Column pair: ``value`` and ``error`` (never null); ``kind`` is one of INT
    (a long within ``bound`` in absolute value), FLOAT (a double; ``nan`` says it may
    be NaN), STRING, BOOLEAN."""

    value: Column
    error: Column
    kind: str
    bound: int = 0
    nan: bool = False
    literal: float | None = None  # the value of a float constant

    @property
    def number(self) -> bool:
        return self.kind in (INT, FLOAT)


# How a load reads: the Column and its Spark type
Loader = Callable[[expr.Load], tuple[Column, T.DataType]]


def _false() -> Column:
    return F.lit(False)


def as_columns(node: expr.Expr, load: Loader, present: bool = False) -> Value:
    """The Column pair of an IR expression (NotPushable when Spark cannot be exact).
    With ``present``, the caller vouches that every load is neither null nor NaN."""
    if isinstance(node, expr.Const):
        return _const(node.value)
    if isinstance(node, expr.Load):
        column, dtype = load(node)
        return _loaded(column, dtype, present)
    if isinstance(node, expr.Not):
        x = as_columns(node.operand, load, present)
        if x.kind != BOOLEAN:
            return _error(BOOLEAN)
        return Value(~x.value, x.error, BOOLEAN)
    if isinstance(node, expr.Neg):
        x = as_columns(node.operand, load, present)
        if not x.number:
            return _error(FLOAT)
        return Value(-x.value, x.error, x.kind, _checked(x.bound, x.kind), x.nan)
    assert isinstance(node, expr.Logic | expr.Arith | expr.Compare)
    a, b = as_columns(node.left, load, present), as_columns(node.right, load, present)
    if isinstance(node, expr.Logic):
        return _logic(node.op, a, b)
    if isinstance(node, expr.Arith):
        return _arith(node.op, a, b)
    return _compare(node.op, a, b)


def holds(node: expr.Expr, load: Loader, present: bool = False) -> Column:
    """Where a conjunct holds: its value is true and it is no error (never null)."""
    x = as_columns(node, load, present)
    if x.kind != BOOLEAN:
        return _false()
    return F.when(x.error, _false()).otherwise(x.value)


_SPARK_TYPES = {INT: "long", FLOAT: "double", STRING: "string", BOOLEAN: "boolean"}


def _error(kind: str) -> Value:
    return Value(F.lit(None).cast(_SPARK_TYPES[kind]), F.lit(True), kind)


def _checked(bound: int, kind: str) -> int:
    if kind == INT and bound > LONG_MAX:
        raise NotPushable("integer arithmetic may leave the 64-bit range")
    return bound


def _const(value: int | float | str | bool) -> Value:
    if isinstance(value, bool):
        return Value(F.lit(value), _false(), BOOLEAN)
    if isinstance(value, int):
        return Value(F.lit(value).cast("long"), _false(), INT, _checked(abs(value), INT))
    if isinstance(value, float):
        return Value(F.lit(value).cast("double"), _false(), FLOAT, 0, math.isnan(value), value)
    return Value(F.lit(value), _false(), STRING)


def _loaded(column: Column, dtype: T.DataType, present: bool) -> Value:
    missing = _false() if present else column.isNull()
    for spark_type, bound in _INT_BOUNDS.items():
        if isinstance(dtype, spark_type):
            return Value(column.cast("long"), missing, INT, bound)
    if isinstance(dtype, T.FloatType | T.DoubleType):
        return Value(column.cast("double"), missing, FLOAT, nan=not present)
    if isinstance(dtype, T.StringType):
        return Value(column, missing, STRING)
    if isinstance(dtype, T.BooleanType):
        return Value(column, missing, BOOLEAN)
    raise NotPushable(f"no exact Spark form for values of type {dtype.simpleString()}")


def _logic(op: str, a: Value, b: Value) -> Value:
    if a.kind != BOOLEAN or b.kind != BOOLEAN:
        raise NotPushable(f"{op} of non-booleans")
    decided = ~a.value if op == "and" else a.value  # false and ..., true or ...
    error = F.when(a.error, F.lit(True)).when(decided, _false()).otherwise(b.error)
    value = F.when(a.error, F.lit(None).cast("boolean")).when(decided, a.value).otherwise(b.value)
    return Value(value, error, BOOLEAN)


def _arith(op: str, a: Value, b: Value) -> Value:
    if not (a.number and b.number):
        return _error(FLOAT)
    error = a.error | b.error
    ints = a.kind == INT and b.kind == INT
    if op in ("/", "%"):
        zero = b.value == 0
        error = error | F.coalesce(zero, _false())
        divisor = F.when(zero, F.lit(1)).otherwise(b.value)
        if op == "%":
            return _modulo(a, b, divisor, error)
        if ints and max(a.bound, b.bound) > EXACT:
            raise NotPushable("/ of integers beyond 2**53 rounds twice in Spark")
        quotient = a.value.cast("double") / divisor.cast("double")
        return Value(quotient, error, FLOAT, nan=True)
    if not ints:
        value = _binop(op, a.value.cast("double"), b.value.cast("double"))
        return Value(value, error, FLOAT, nan=True)  # inf - inf, 0 * inf
    bound = a.bound * b.bound if op == "*" else a.bound + b.bound
    return Value(_binop(op, a.value, b.value), error, INT, _checked(bound, INT))


def _binop(op: str, x: Column, y: Column) -> Column:
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    return x * y


def _modulo(a: Value, b: Value, divisor: Column, error: Column) -> Value:
    """Python's ``%``: the truncated remainder moved to the divisor's sign."""
    kind = INT if a.kind == INT and b.kind == INT else FLOAT
    cast = "long" if kind == INT else "double"
    x, d = a.value.cast(cast), divisor.cast(cast)
    r = x % d
    moved = (r != 0) & ((r < 0) != (d < 0))
    value = F.when(moved, r + d).otherwise(r)
    return Value(value, error, kind, b.bound if kind == INT else 0, kind == FLOAT)


# Column overloads the operators, so one table serves Columns and Python numbers
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "=": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _compare(op: str, a: Value, b: Value) -> Value:
    error = a.error | b.error
    if a.number and b.number:
        return Value(_numbers(op, a, b), error, BOOLEAN)
    if a.kind == b.kind and a.kind == STRING:
        return Value(_COMPARE[op](a.value, b.value), error, BOOLEAN)
    if op in expr.ORDERING:
        return _error(BOOLEAN)  # booleans do not order; nor do values of two kinds
    if a.kind == b.kind:  # two booleans
        return Value(_COMPARE[op](a.value, b.value), error, BOOLEAN)
    if BOOLEAN in (a.kind, b.kind) and (a.number or b.number):
        raise NotPushable("= of a boolean and a number")
    return Value(F.lit(op == "!="), error, BOOLEAN)  # a string and a number: never equal


def _numbers(op: str, a: Value, b: Value) -> Column:
    """A comparison of two numbers as Python makes it: exact between ints and floats,
    and false for NaN except ``!=``."""
    if a.kind == INT and b.kind == INT:
        return _COMPARE[op](a.value, b.value)
    if a.kind == FLOAT and b.kind == FLOAT:
        test = _COMPARE[op](a.value, b.value)
    else:
        swapped = a.kind == FLOAT
        i, f = (b, a) if swapped else (a, b)
        if f.literal is not None:
            return _int_vs_constant(_MIRROR[op] if swapped else op, i.value, f.literal)
        if i.bound <= EXACT:  # the int converts to double exactly
            test = _COMPARE[op](a.value.cast("double"), b.value.cast("double"))
        else:
            sign = _sign_int_minus_float(i.value, f.value)
            test = _COMPARE[op](-sign if swapped else sign, F.lit(0))
    if not (a.nan or b.nan):
        return test
    nan = F.isnan(a.value) if a.nan else F.isnan(b.value)
    if a.nan and b.nan:
        nan = nan | F.isnan(b.value)
    return F.when(nan, F.lit(op == "!=")).otherwise(test)


_MIRROR = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _int_vs_constant(op: str, i: Column, c: float) -> Column:
    """``i op c`` for a long ``i`` and a float constant, as an integer comparison (so
    that a file scan can take it): ``i < 2.5`` is ``i < 3``, ``i = 2.5`` is false."""
    if not math.isfinite(c):  # every long compares alike with inf and NaN
        return F.lit(_COMPARE[op](0, c))
    if op in ("=", "!="):
        if not c.is_integer():
            return F.lit(op == "!=")
        t = int(c)
    else:
        t = math.ceil(c) if op in ("<", ">=") else math.floor(c)
    if not -LONG_MAX - 1 <= t <= LONG_MAX:  # beyond every long: alike for all of them
        return F.lit(_COMPARE[op](0, t))
    return _COMPARE[op](i, F.lit(t).cast("long"))


_TWO_63 = float(2**63)


def _sign_int_minus_float(i: Column, f: Column) -> Column:
    """The sign of ``i - f`` for a long ``i`` and a (non-NaN) double ``f``, exactly:
    ``f`` splits into its floor (a long, when in range) and a fraction in [0, 1)."""
    floor = F.floor(f)  # a double holding an integer
    whole = F.when((f >= F.lit(-_TWO_63)) & (f < F.lit(_TWO_63)), floor).cast("long")
    fraction = f - floor  # exact for doubles
    return (
        F.when(f >= F.lit(_TWO_63), F.lit(-1))
        .when(f < F.lit(-_TWO_63), F.lit(1))
        .when(i < whole, F.lit(-1))
        .when(i > whole, F.lit(1))
        .when(fraction > 0, F.lit(-1))
        .otherwise(F.lit(0))
    )
