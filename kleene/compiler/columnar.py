"""The columnar backend of the expression IR: one expression over a batch of rows.

Evaluated with numpy, it follows the rules of :mod:`kleene.compiler.expr` exactly, or
gives up for the batch (:class:`GiveUp`; the caller then evaluates row by row, or keeps
every row): numbers are evaluated as float64 only while every integer stays within
2**53, where float64 arithmetic is exact and equals Python's. A sub-expression with no
value (a null, a division by zero, arithmetic on a boolean) is tracked as an error mask
beside the values; ``and``/``or`` stop where their left operand decides, so the error of
their right operand counts only where it does not. A conjunct holds where it is true and
not an error (match-windows paper, section 4.2: the prefilter may only drop what the
exact evaluation rejects).

A value is a :class:`Value`; the values at error rows are placeholders. Loads are read
through a callback, ``resolve(load)``, that returns the column's raw values: a numpy
array, a pyarrow array, or a list of Python values (None for a null).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple, TypeAlias

import numpy as np
import pyarrow as pa

from kleene.compiler.expr import Arith, Compare, Const, Expr, Kind, Load, Logic, Neg, Not

EXACT = 2.0**53


class GiveUp(Exception):
    """The batch cannot be evaluated exactly."""


class Value(NamedTuple):
    """A vectorized value: the values (a numpy array, or a 0-d array for a constant),
    where it is an error, whether every number in it is an integer (Python would hold
    an int), and then a bound on their magnitude."""

    values: np.ndarray
    error: np.ndarray
    integer: bool
    bound: float


Raw: TypeAlias = np.ndarray | pa.Array | pa.ChunkedArray | list[Any]
Resolve: TypeAlias = Callable[[Load], Raw]

_NO_ERROR = np.zeros((), dtype=bool)  # broadcasts against any column


def conjunction(
    exprs: Sequence[Expr],
    resolve: Resolve,
    n: int,
    python: bool = True,
    cache: dict[Load, Value] | None = None,
) -> np.ndarray:
    """Per row, whether every expression holds (is true, not an error). ``python`` says
    numeric arrays may stand for Python numbers of any size (see :func:`as_value`);
    ``cache`` keeps the columns read, to share them between calls on one batch."""
    ok = np.ones(n, dtype=bool)
    cache = {} if cache is None else cache
    for node in exprs:
        values, error, _, _ = _value(node, resolve, python, cache)
        if values.dtype != bool:
            raise GiveUp
        ok &= values & ~error  # 0-d values (constants) broadcast
    return ok


def holds(
    node: Expr, resolve: Resolve, n: int, python: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Per row, the truth of a condition and whether it is an error (where it is, the
    truth is meaningless)."""
    values, error, _, _ = _value(node, resolve, python, {})
    if values.dtype != bool:
        raise GiveUp
    return np.broadcast_to(values, (n,)).copy(), np.broadcast_to(error, (n,)).copy()


# --- loads and constants -------------------------------------------------------------


def as_value(values: Raw, python: bool = True, nullable: bool = False) -> Value:
    """Raw values as an exact vectorized value. ``python`` says the numbers of a numpy
    array may stand for Python ints of any size (a float64 array may hold rounded big
    ints): they are then treated as integers and bounded. A null (None, NaN in a float
    array) is an error where ``nullable`` says it may occur; elsewhere it gives up."""
    if isinstance(values, pa.ChunkedArray | pa.Array):
        return _arrow_value(values, nullable)
    if isinstance(values, list):
        return _list_value(values, nullable)
    error = _NO_ERROR
    kind = values.dtype.kind
    if kind == "f" and nullable:
        nan = np.isnan(values)
        if nan.any():
            values, error = np.where(nan, 0.0, values), nan
    if kind in "OUS":
        return Value(values.astype(object), error, False, 0.0)
    if kind == "b":
        return Value(values, error, False, 0.0)
    if kind not in "iuf":
        raise GiveUp  # datetimes are not read here
    if kind in "iu" or python:
        # integers (or Python numbers of unknown mix): exact while within 2**53
        bound = float(np.max(np.abs(values), initial=0))
        if not bound <= EXACT:  # NaN too: numbers of unknown mix with a NaN
            raise GiveUp
        return Value(values.astype(np.float64), error, True, bound)
    return Value(values.astype(np.float64), error, False, 0.0)


def _list_value(values: list[Any], nullable: bool) -> Value:
    error = _NO_ERROR
    kinds = set(map(type, values))
    if type(None) in kinds:
        if not nullable:
            raise GiveUp
        kinds.discard(type(None))
        null = np.fromiter((v is None for v in values), dtype=bool, count=len(values))
        fill = "" if kinds == {str} else False if kinds == {bool} else 0
        values, error = [fill if v is None else v for v in values], null
    if kinds <= {str} and kinds:
        return Value(np.asarray(values, dtype=object), error, False, 0.0)
    if kinds == {bool}:
        return Value(np.asarray(values, dtype=bool), error, False, 0.0)
    if not kinds <= {int, float}:
        raise GiveUp
    if int in kinds and any(abs(v) > EXACT for v in values if type(v) is int):
        raise GiveUp
    array = np.asarray(values, dtype=np.float64)
    if int in kinds:
        return Value(array, error, True, float(np.max(np.abs(array), initial=0)))
    return Value(array, error, False, 0.0)


def _arrow_value(values: pa.ChunkedArray | pa.Array, nullable: bool) -> Value:
    if values.null_count and not nullable:
        raise GiveUp
    kind = values.type
    if not (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_boolean(kind)):
        return _list_value(values.to_pylist(), nullable)
    error = _NO_ERROR
    if values.null_count:
        error = np.asarray(values.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    filled = values.fill_null(False if pa.types.is_boolean(kind) else 0)
    value = as_value(np.asarray(filled.to_numpy(zero_copy_only=False)), False, nullable)
    return value._replace(error=value.error | error)


def _load(node: Load, resolve: Resolve, python: bool, cache: dict[Load, Value]) -> Value:
    value = cache.get(node)
    if value is None:
        value = as_value(resolve(node), python, node.nullable)
        dtype = value.values.dtype
        if (node.kind is Kind.NUMBER and dtype != np.float64) or (
            node.kind is Kind.STRING and dtype.kind != "O"
        ):
            raise GiveUp  # not what admission guarantees: leave it to the row evaluation
        cache[node] = value
    return value


def _const(value: int | float | str | bool) -> Value:
    """A constant, as a 0-d array that broadcasts against the columns."""
    if isinstance(value, bool):
        return Value(np.asarray(value), _NO_ERROR, False, 0.0)
    if isinstance(value, int):
        if abs(value) > EXACT:
            raise GiveUp
        return Value(np.asarray(float(value)), _NO_ERROR, True, float(abs(value)))
    if isinstance(value, float):
        return Value(np.asarray(value), _NO_ERROR, False, 0.0)
    return Value(np.asarray(value, dtype=object), _NO_ERROR, False, 0.0)


# --- operators -----------------------------------------------------------------------


def _value(node: Expr, resolve: Resolve, python: bool, cache: dict[Load, Value]) -> Value:
    if isinstance(node, Const):
        return _const(node.value)
    if isinstance(node, Load):
        return _load(node, resolve, python, cache)
    if isinstance(node, Not):
        values, error, _, _ = _value(node.operand, resolve, python, cache)
        if values.dtype != bool:
            raise GiveUp
        return Value(~values, error, False, 0.0)
    if isinstance(node, Neg):
        operand = _value(node.operand, resolve, python, cache)
        if operand.values.dtype == bool:
            return _all_error(np.float64, operand)  # a boolean is not a number
        if operand.values.dtype != np.float64:
            raise GiveUp
        return operand._replace(values=-operand.values)
    if isinstance(node, Logic):
        return _logic(node, resolve, python, cache)
    if isinstance(node, Arith):
        return _arith(node, resolve, python, cache)
    if isinstance(node, Compare):
        return _compare(node, resolve, python, cache)
    raise GiveUp


def _all_error(dtype: type, *operands: Value) -> Value:
    """Every row an error (the rules say so for every value the operands can hold)."""
    shape = np.broadcast_shapes(*(v.values.shape for v in operands))
    return Value(np.zeros(shape, dtype=dtype), np.ones(shape, dtype=bool), False, 0.0)


def _logic(node: Logic, resolve: Resolve, python: bool, cache: dict[Load, Value]) -> Value:
    lv, le, _, _ = _value(node.left, resolve, python, cache)
    rv, re, _, _ = _value(node.right, resolve, python, cache)
    if lv.dtype != bool or rv.dtype != bool:
        raise GiveUp
    if node.op == "and":  # the right side counts only where the left one holds
        return Value(lv & rv, le | (lv & re), False, 0.0)
    return Value(lv | rv, le | (~lv & re), False, 0.0)


_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "=": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}


def _compare(node: Compare, resolve: Resolve, python: bool, cache: dict[Load, Value]) -> Value:
    left = _value(node.left, resolve, python, cache)
    right = _value(node.right, resolve, python, cache)
    lv, rv = left.values, right.values
    error = left.error | right.error
    if node.ordering:
        if lv.dtype == bool or rv.dtype == bool:
            return _all_error(bool, left, right)  # booleans do not order
        numeric = lv.dtype == np.float64 and rv.dtype == np.float64
        if not numeric and not (lv.dtype == object and rv.dtype == object):
            raise GiveUp  # a number against a string: admission keeps them apart
    elif (lv.dtype == bool) != (rv.dtype == bool):
        raise GiveUp  # a boolean against a number or string: left to the row evaluation
    try:
        result = _COMPARE[node.op](lv, rv)
    except TypeError:
        raise GiveUp from None  # objects that Python cannot order (guarded above)
    return Value(np.asarray(result, dtype=bool), error, False, 0.0)


def _arith(node: Arith, resolve: Resolve, python: bool, cache: dict[Load, Value]) -> Value:
    left = _value(node.left, resolve, python, cache)
    right = _value(node.right, resolve, python, cache)
    lv, le, li, lb = left
    rv, re, ri, rb = right
    if lv.dtype == bool or rv.dtype == bool:
        return _all_error(np.float64, left, right)  # a boolean is not a number
    if lv.dtype != np.float64 or rv.dtype != np.float64:
        raise GiveUp
    error = le | re
    op = node.op
    with np.errstate(all="ignore"):
        if op in ("+", "-", "*"):
            bound = lb * rb if op == "*" else lb + rb
            if li and ri and bound > EXACT:
                raise GiveUp  # Python's exact integers could differ from float64 here
            result = lv * rv if op == "*" else lv + rv if op == "+" else lv - rv
            return Value(result, error, li and ri, bound)
        zero = rv == 0
        divisor = np.where(zero, 1.0, rv)
        if op == "/":
            return Value(lv / divisor, error | zero, False, 0.0)
        # numpy's remainder takes the divisor's sign, as Python's % does
        return Value(np.remainder(lv, divisor), error | zero, li and ri, rb)
