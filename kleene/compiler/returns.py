"""Which RETURN items give a time (SIGMOD 2008, section 2: RETURN may read any
attribute, the timestamp included).

An engine keeps times of datetime streams as microseconds since the epoch; a RETURN item
that is a time (``a.timestamp``, ``a[1].timestamp``, ``min``/``max`` over timestamps) is
given back as a datetime, like a match's start and end. Arithmetic on times stays in
microseconds.
"""

from __future__ import annotations

from kleene.lang import ast

TIME_ATTR = "timestamp"


def is_time(expr: ast.Expr) -> bool:
    """Whether the RETURN expression's value is an event time."""
    if isinstance(expr, ast.AttrRef):
        return expr.attr == TIME_ATTR
    if isinstance(expr, ast.Aggregate):
        return expr.func in (ast.AggFunc.MIN, ast.AggFunc.MAX) and expr.attr == TIME_ATTR
    return False


def time_items(query: ast.Query) -> tuple[bool, ...]:
    """One flag per RETURN item: whether it gives a time."""
    return tuple(is_time(item.expr) for item in query.returns)
