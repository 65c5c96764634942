"""Static kinds of expressions, as far as the query text alone shows them.

Literals, ``v.LEN``, comparisons, ``and``/``or``/``not`` and ``count``/``sum``/``avg``
have a known kind; attribute references and ``min``/``max`` may hold anything, so they
never cause an error here. The rules follow docs/semantics.md, "Arithmetic and types":
arithmetic needs numbers, ordering comparisons need two numbers or two strings, and
``and``/``or``/``not`` need conditions.
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


def _describe(expr: ast.Expr, kind: Kind) -> str:
    return f"{expr_to_text(expr)} is {kind.value}"


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
    kind = kind_of(expr.operand, fail)
    if expr.op is ast.UnOp.NOT:
        if kind in (Kind.NUMBER, Kind.STRING):
            fail(f"'not' needs a condition, but {_describe(expr.operand, kind)}", expr.operand.span)
        return Kind.BOOLEAN
    if kind in (Kind.STRING, Kind.BOOLEAN):
        fail(f"unary minus needs a number, but {_describe(expr.operand, kind)}", expr.operand.span)
    return Kind.NUMBER


def _binary(expr: ast.Binary, fail: Fail) -> Kind:
    left = kind_of(expr.left, fail)
    right = kind_of(expr.right, fail)
    op = expr.op
    if op.is_logical:
        for operand, kind in ((expr.left, left), (expr.right, right)):
            if kind in (Kind.NUMBER, Kind.STRING):
                fail(
                    f"'{op.value}' needs conditions on both sides, but {_describe(operand, kind)}",
                    operand.span,
                )
        return Kind.BOOLEAN
    if op.is_arithmetic:
        for operand, kind in ((expr.left, left), (expr.right, right)):
            if kind in (Kind.STRING, Kind.BOOLEAN):
                fail(
                    f"'{op.value}' needs numbers, but {_describe(operand, kind)}",
                    operand.span,
                )
        return Kind.NUMBER
    if op in (ast.BinOp.EQ, ast.BinOp.NE):
        return Kind.BOOLEAN
    for operand, kind in ((expr.left, left), (expr.right, right)):
        if kind is Kind.BOOLEAN:
            fail(
                f"'{op.value}' orders numbers or strings, but {_describe(operand, kind)}",
                operand.span,
            )
    if {left, right} == {Kind.NUMBER, Kind.STRING}:
        fail(
            f"'{op.value}' cannot order a string and a number: "
            f"{_describe(expr.left, left)} and {_describe(expr.right, right)}",
            expr.right.span,
        )
    return Kind.BOOLEAN
