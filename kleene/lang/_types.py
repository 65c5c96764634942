"""Static kinds of expressions, as far as the query text alone shows them.

Literals, ``v.LEN``, comparisons, ``and``/``or``/``not`` and ``count``/``sum``/``avg``
have a known kind; attribute references and ``min``/``max`` may hold anything, so they
never cause an error as operands of arithmetic or comparisons. The rules follow
docs/semantics.md, "Arithmetic and types": arithmetic needs numbers; ordering
comparisons need two numbers, two strings or two timestamps (never conditions);
``=``/``!=`` compare values of one kind; ``and``/``or``/``not`` and every WHERE conjunct
need conditions, which an attribute value is not (write ``a.flag = true``). This module
is the one place these checks live.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from kleene.lang import ast
from kleene.lang._printer import expr_to_text


class Kind(Enum):
    NUMBER = "a number"
    STRING = "a string"
    BOOLEAN = "a condition"
    ANY = "any value"


_NUMERIC_AGGREGATES = frozenset({ast.AggFunc.COUNT, ast.AggFunc.SUM, ast.AggFunc.AVG})

Fail = Callable[[str, ast.Span], None]


def _op_text(op: ast.BinOp) -> str:
    return "=" if op is ast.BinOp.EQ else op.value


def _describe(expr: ast.Expr, kind: Kind) -> str:
    if kind is Kind.ANY:
        return f"{expr_to_text(expr)} is a value, not a condition"
    return f"{expr_to_text(expr)} is {kind.value}"


def require_condition(expr: ast.Expr, what: str, fail: Fail) -> None:
    """Fails unless ``expr`` is a condition (a comparison, and/or/not, true/false)."""
    kind = kind_of(expr, fail)
    if kind is not Kind.BOOLEAN:
        hint = f" (compare it, as in {expr_to_text(expr)} = true)" if kind is Kind.ANY else ""
        fail(f"{what} must be a condition, but {_describe(expr, kind)}{hint}", expr.span)


def kind_of(expr: ast.Expr, fail: Fail) -> Kind:
    """The kind of ``expr``; calls ``fail(message, span)`` at the first mismatch inside."""
    if isinstance(expr, ast.Literal):
        if isinstance(expr.value, bool):
            return Kind.BOOLEAN
        return Kind.STRING if isinstance(expr.value, str) else Kind.NUMBER
    if isinstance(expr, ast.LenRef):
        return Kind.NUMBER
    if isinstance(expr, ast.Aggregate):
        return Kind.NUMBER if expr.func in _NUMERIC_AGGREGATES else Kind.ANY
    if isinstance(expr, ast.Equivalence):
        return Kind.BOOLEAN
    if isinstance(expr, ast.Unary):
        return _unary(expr, fail)
    if isinstance(expr, ast.Binary):
        return _binary(expr, fail)
    return Kind.ANY


def _unary(expr: ast.Unary, fail: Fail) -> Kind:
    if expr.op is ast.UnOp.NOT:
        require_condition(expr.operand, "the operand of 'not'", fail)
        return Kind.BOOLEAN
    kind = kind_of(expr.operand, fail)
    if kind in (Kind.STRING, Kind.BOOLEAN):
        fail(f"unary minus needs a number, but {_describe(expr.operand, kind)}", expr.operand.span)
    return Kind.NUMBER


def _binary(expr: ast.Binary, fail: Fail) -> Kind:
    op = expr.op
    if op.is_logical:
        require_condition(expr.left, f"each side of '{op.value}'", fail)
        require_condition(expr.right, f"each side of '{op.value}'", fail)
        return Kind.BOOLEAN
    left = kind_of(expr.left, fail)
    right = kind_of(expr.right, fail)
    if op.is_arithmetic:
        for operand, kind in ((expr.left, left), (expr.right, right)):
            if kind in (Kind.STRING, Kind.BOOLEAN):
                fail(
                    f"'{_op_text(op)}' needs numbers, but {_describe(operand, kind)}",
                    operand.span,
                )
        return Kind.NUMBER
    if op in (ast.BinOp.EQ, ast.BinOp.NE):
        if Kind.ANY not in (left, right) and left is not right:
            fail(
                f"'{_op_text(op)}' compares values of one kind, but {_describe(expr.left, left)} "
                f"and {_describe(expr.right, right)}",
                expr.right.span,
            )
        return Kind.BOOLEAN
    for operand, kind in ((expr.left, left), (expr.right, right)):
        if kind is Kind.BOOLEAN:
            fail(
                f"'{_op_text(op)}' orders numbers, strings or timestamps, but "
                f"{_describe(operand, kind)}",
                operand.span,
            )
    if {left, right} == {Kind.NUMBER, Kind.STRING}:
        fail(
            f"'{_op_text(op)}' cannot order a string and a number: "
            f"{_describe(expr.left, left)} and {_describe(expr.right, right)}",
            expr.right.span,
        )
    return Kind.BOOLEAN
