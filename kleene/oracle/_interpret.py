"""An interpreter of WHERE and RETURN expressions over selected events.

References follow the table of docs/semantics.md ("Variables and references", after
SIGMOD 2008, section 2): ``v.x``, ``v[1].x``, ``v[i].x``, ``v[i-1].x``, ``v[v.LEN].x``,
``v.LEN``, ``f(v[..i-1].x)`` and ``f(v[].x)``. Arithmetic and comparisons follow
"Arithmetic and types".

``and`` and ``or`` evaluate left to right and stop once the left operand decides the
result (``b.y == 0 or a.x / b.y > 1`` holds when b.y is 0); every other operator
evaluates both operands. Anything that cannot be evaluated raises :class:`EvalError`: division or
modulo by zero, an ordering comparison of anything but two numbers, two strings or two datetimes,
arithmetic on non-numbers, ``and``/``or``/``not`` on non-booleans, a missing attribute,
an element index outside the array. Numbers are ints and floats; booleans are not numbers.
"""

from __future__ import annotations

import datetime as dt
import numbers
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kleene.lang import ast
from kleene.oracle._stream import Event, MissingAttributeError


class EvalError(Exception):
    """An expression has no value for these events."""


@dataclass(frozen=True)
class Scope:
    """The events bound to variables while evaluating an expression.

    ``events`` maps each bound variable to its events in order (a 1-tuple for a single
    variable); ``kleene`` names the Kleene variables; ``index`` is the current element
    index i (1-based) of the conjunct's iterator variable, or None outside iteration.
    """

    events: Mapping[str, tuple[Event, ...]]
    kleene: frozenset[str]
    index: int | None = None

    def at(self, index: int) -> Scope:
        return Scope(self.events, self.kleene, index)

    def elements(self, var: str) -> tuple[Event, ...]:
        try:
            return self.events[var]
        except KeyError:
            raise EvalError(f"variable {var!r} is not bound here") from None

    def current(self) -> int:
        if self.index is None:
            raise EvalError("v[i] used outside an iterator predicate")
        return self.index


def is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def evaluate(expr: ast.Expr, scope: Scope) -> Any:
    """The value of ``expr`` in ``scope``; raises EvalError when it has none."""
    handler = _HANDLERS.get(type(expr))
    if handler is None:
        raise EvalError(f"cannot evaluate {type(expr).__name__}")
    return handler(expr, scope)


def _literal(expr: Any, scope: Scope) -> Any:
    return expr.value


def _element(var: str, index: ast.IndexKind | None, scope: Scope) -> Event:
    elements = scope.elements(var)
    if var not in scope.kleene:
        if index is not None:
            raise EvalError(f"{var} is not a Kleene variable")
        return elements[0]
    if index is ast.IndexKind.FIRST:
        position = 1
    elif index is ast.IndexKind.CURRENT:
        position = scope.current()
    elif index is ast.IndexKind.PREVIOUS:
        position = scope.current() - 1
    elif index is ast.IndexKind.LAST:
        position = len(elements)
    else:
        raise EvalError(f"Kleene variable {var} needs an index")
    if not 1 <= position <= len(elements):
        raise EvalError(f"{var}[{position}] does not exist")
    return elements[position - 1]


def _attribute(event: Event, attr: str) -> Any:
    try:
        return event.value(attr)
    except MissingAttributeError:
        raise EvalError(f"event {event.id!r} has no attribute {attr!r}") from None


def _attr_ref(expr: Any, scope: Scope) -> Any:
    return _attribute(_element(expr.var, expr.index, scope), expr.attr)


def _len_ref(expr: Any, scope: Scope) -> Any:
    if expr.var not in scope.kleene:
        raise EvalError(f"{expr.var} is not a Kleene variable")
    return len(scope.elements(expr.var))


def _aggregate(expr: Any, scope: Scope) -> Any:
    if expr.var not in scope.kleene:
        raise EvalError(f"{expr.var} is not a Kleene variable")
    elements = scope.elements(expr.var)
    if expr.range is ast.AggRange.BEFORE_CURRENT:
        elements = elements[: scope.current() - 1]
    if expr.attr is None:
        if expr.func is not ast.AggFunc.COUNT:
            raise EvalError(f"{expr.func.value} needs an attribute")
        values: list[Any] = list(elements)
    else:
        values = [_attribute(e, expr.attr) for e in elements]
    if not values:
        raise EvalError(f"aggregate over no elements of {expr.var}")
    func = expr.func
    if func is ast.AggFunc.COUNT:
        return len(values)
    if func in (ast.AggFunc.SUM, ast.AggFunc.AVG):
        if not all(is_number(v) for v in values):
            raise EvalError(f"{func.value} over non-numbers")
        total = sum(values)
        return total if func is ast.AggFunc.SUM else total / len(values)
    if not (all(is_number(v) for v in values) or all(isinstance(v, str) for v in values)):
        raise EvalError(f"{func.value} over values that cannot be ordered")
    return min(values) if func is ast.AggFunc.MIN else max(values)


def _divide(left: Any, right: Any) -> Any:
    if right == 0:
        raise EvalError("division by zero")
    return left / right


def _modulo(left: Any, right: Any) -> Any:
    if right == 0:
        raise EvalError("modulo by zero")
    return left % right


_ARITHMETIC: dict[ast.BinOp, Callable[[Any, Any], Any]] = {
    ast.BinOp.ADD: operator.add,
    ast.BinOp.SUB: operator.sub,
    ast.BinOp.MUL: operator.mul,
    ast.BinOp.DIV: _divide,
    ast.BinOp.MOD: _modulo,
}
_ORDERING: dict[ast.BinOp, Callable[[Any, Any], Any]] = {
    ast.BinOp.LT: operator.lt,
    ast.BinOp.LE: operator.le,
    ast.BinOp.GT: operator.gt,
    ast.BinOp.GE: operator.ge,
}


def _binary(expr: Any, scope: Scope) -> Any:
    op: ast.BinOp = expr.op
    left = evaluate(expr.left, scope)
    if op.is_logical:
        if not isinstance(left, bool):
            raise EvalError(f"{op.value} on {left!r}")
        if left is (op is ast.BinOp.OR):  # false and ..., true or ...: decided
            return left
    right = evaluate(expr.right, scope)
    if op is ast.BinOp.EQ:
        return bool(left == right)
    if op is ast.BinOp.NE:
        return bool(left != right)
    if op in _ORDERING:
        comparable = (
            (is_number(left) and is_number(right))
            or (isinstance(left, str) and isinstance(right, str))
            or (isinstance(left, dt.datetime) and isinstance(right, dt.datetime))
        )
        if not comparable:
            raise EvalError(f"cannot order {left!r} and {right!r}")
        return bool(_ORDERING[op](left, right))
    if op in _ARITHMETIC:
        if not (is_number(left) and is_number(right)):
            raise EvalError(f"arithmetic on {left!r} and {right!r}")
        return _ARITHMETIC[op](left, right)
    if not (isinstance(left, bool) and isinstance(right, bool)):
        raise EvalError(f"{op.value} on {left!r} and {right!r}")
    return (left and right) if op is ast.BinOp.AND else (left or right)


def _unary(expr: Any, scope: Scope) -> Any:
    value = evaluate(expr.operand, scope)
    if expr.op is ast.UnOp.NEG:
        if not is_number(value):
            raise EvalError(f"cannot negate {value!r}")
        return -value
    if not isinstance(value, bool):
        raise EvalError(f"not on {value!r}")
    return not value


_HANDLERS: dict[type, Callable[[Any, Scope], Any]] = {
    ast.Literal: _literal,
    ast.AttrRef: _attr_ref,
    ast.LenRef: _len_ref,
    ast.Aggregate: _aggregate,
    ast.Binary: _binary,
    ast.Unary: _unary,
}


def truth(expr: ast.Expr, scope: Scope) -> bool:
    """True when ``expr`` evaluates to the boolean True; False when it evaluates to
    anything else or cannot be evaluated."""
    try:
        return evaluate(expr, scope) is True
    except EvalError:
        return False
