"""Terse builders of query ASTs for the oracle tests (the parser is not needed)."""

from __future__ import annotations

from typing import Any

from kleene.lang import ast


def one(event_type: str, var: str) -> ast.Component:
    return ast.Component(event_type, var)


def plus(event_type: str, var: str) -> ast.Component:
    return ast.Component(event_type, var, kleene=True)


def neg(event_type: str, var: str) -> ast.Component:
    return ast.Component(event_type, var, negated=True)


def query(
    *components: ast.Component,
    where: tuple[ast.Expr, ...] = (),
    within: float | None = None,
    unit: ast.TimeUnit | None = None,
    strategy: ast.Strategy | None = None,
    scope: tuple[str, ...] | None = None,
    returns: tuple[ast.ReturnItem, ...] = (),
    output: ast.OutputFormat | None = None,
) -> ast.Query:
    return ast.Query(
        pattern=ast.Seq(tuple(components)),
        strategy=strategy,
        strategy_vars=scope,
        where=where,
        within=None if within is None else ast.Window(within, unit),
        returns=returns,
        output=output,
    )


def ref(var: str, attr: str, index: ast.IndexKind | None = None) -> ast.AttrRef:
    return ast.AttrRef(var, attr, index)


def cur(var: str, attr: str) -> ast.AttrRef:
    return ast.AttrRef(var, attr, ast.IndexKind.CURRENT)


def prev(var: str, attr: str) -> ast.AttrRef:
    return ast.AttrRef(var, attr, ast.IndexKind.PREVIOUS)


def first(var: str, attr: str) -> ast.AttrRef:
    return ast.AttrRef(var, attr, ast.IndexKind.FIRST)


def last(var: str, attr: str) -> ast.AttrRef:
    return ast.AttrRef(var, attr, ast.IndexKind.LAST)


def length(var: str) -> ast.LenRef:
    return ast.LenRef(var)


def agg(func: str, var: str, attr: str | None, *, before: bool = False) -> ast.Aggregate:
    span = ast.AggRange.BEFORE_CURRENT if before else ast.AggRange.ALL
    return ast.Aggregate(ast.AggFunc(func), var, span, attr)


def _expr(value: Any) -> ast.Expr:
    return value if isinstance(value, ast.Expr) else ast.Literal(value)


def op(symbol: str, left: Any, right: Any) -> ast.Binary:
    """A binary expression: ``op(">", ref("a", "x"), 3)``."""
    return ast.Binary(ast.BinOp(symbol), _expr(left), _expr(right))


def not_(operand: ast.Expr) -> ast.Unary:
    return ast.Unary(ast.UnOp.NOT, operand)


def equiv(*attrs: str) -> ast.Equivalence:
    return ast.Equivalence(tuple(attrs))


def item(expr: ast.Expr, alias: str | None = None) -> ast.ReturnItem:
    return ast.ReturnItem(expr, alias)
