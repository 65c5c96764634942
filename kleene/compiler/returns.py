"""The RETURN items of a plan: each one's name, whether it gives a time, and the type
of its values (SIGMOD 2008, section 2: RETURN may read any attribute, the timestamp
included, ``LEN``, aggregates and arithmetic over them).

An engine keeps times of datetime streams as microseconds since the epoch; a RETURN item
that is a time (``a.timestamp``, ``a[1].timestamp``, ``min``/``max`` over timestamps) is
given back as a datetime, like a match's start and end. Arithmetic on times stays in
microseconds.

A value's type can depend on the input (an attribute's type is the type of its
column), so the compiler records it as a :class:`ValueType` term that a writer resolves
against its input schema, as the Spark pipeline does before any match is made
(:mod:`kleene.spark._schema`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kleene.lang import ast, expr_to_text

TIME_ATTR = "timestamp"


@dataclass(frozen=True)
class ValueType:
    """The type of a RETURN item's values, as far as the query fixes it.

    ``kind`` is one of

    * ``"boolean"``, ``"long"``, ``"double"``, ``"string"``: that type;
    * ``"time"``: the type of the input's time column;
    * ``"attr"``: the type of attribute ``attr`` (the time column for ``timestamp``);
    * ``"widened"``: attribute ``attr``'s type widened as ``min``/``max`` give it:
      integral types to long, floating and decimal ones to double, datetimes to long
      (microseconds), any other type kept;
    * ``"number"``: long when every one of ``operands`` is integral (datetimes count,
      as microseconds), else double.
    """

    kind: str
    attr: str | None = None
    operands: tuple[ValueType, ...] = ()


BOOLEAN, LONG, DOUBLE, STRING = (ValueType(k) for k in ("boolean", "long", "double", "string"))
TIME = ValueType("time")


@dataclass(frozen=True)
class ReturnItem:
    """One RETURN item: its output name (alias or text), whether its value is an event
    time, and its type."""

    name: str
    time: bool
    type: ValueType


def return_items(query: ast.Query) -> tuple[ReturnItem, ...]:
    """The RETURN clause of ``query`` as plan facts."""
    return tuple(
        ReturnItem(item.alias or expr_to_text(item.expr), is_time(item.expr), value_type(item.expr))
        for item in query.returns
    )


def window_text(within: ast.Window | None) -> str | None:
    """The WITHIN size as written, with its unit (``"5 minutes"``), for messages."""
    if within is None:
        return None
    return f"{within.amount} {within.unit.name.lower()}" if within.unit else f"{within.amount}"


def is_time(expr: ast.Expr) -> bool:
    """Whether the RETURN expression's value is an event time."""
    if isinstance(expr, ast.AttrRef):
        return expr.attr == TIME_ATTR
    if isinstance(expr, ast.Aggregate):
        return expr.func in (ast.AggFunc.MIN, ast.AggFunc.MAX) and expr.attr == TIME_ATTR
    return False


def value_type(expr: ast.Expr) -> ValueType:
    """The type of a RETURN expression's values."""
    if isinstance(expr, ast.Literal):
        return _literal_type(expr.value)
    if is_time(expr):
        return TIME
    if isinstance(expr, ast.AttrRef):
        return ValueType("attr", expr.attr)
    if isinstance(expr, ast.LenRef):
        return LONG
    if isinstance(expr, ast.Aggregate):
        return _aggregate_type(expr)
    if isinstance(expr, ast.Unary):
        if expr.op is ast.UnOp.NOT:
            return BOOLEAN
        return ValueType("number", operands=(value_type(expr.operand),))
    if isinstance(expr, ast.Binary):
        if not expr.op.is_arithmetic:
            return BOOLEAN
        if expr.op is ast.BinOp.DIV:
            return DOUBLE
        return ValueType("number", operands=(value_type(expr.left), value_type(expr.right)))
    if isinstance(expr, ast.Equivalence):
        return BOOLEAN
    return STRING


def _aggregate_type(expr: ast.Aggregate) -> ValueType:
    if expr.func is ast.AggFunc.AVG:
        return DOUBLE
    if expr.func is ast.AggFunc.COUNT or expr.attr is None:
        return LONG
    element = ValueType("attr", expr.attr)
    if expr.func is ast.AggFunc.SUM:
        return ValueType("number", operands=(element,))
    return ValueType("widened", expr.attr)


def _literal_type(value: object) -> ValueType:
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        return LONG
    if isinstance(value, float):
        return DOUBLE
    return STRING
