"""AST -> canonical query text that parses back to an equal AST.

The canonical form is the function form of SIGMOD 2008, Figure 1: ``PATTERN SEQ(...)``,
``WHERE strategy(vars) { conjuncts }`` (or ``WHERE c1 and c2`` without a strategy),
``WITHIN``, ``RETURN``, ``OUTPUT``. Expressions get the fewest parentheses that keep
their tree under the precedence or < and < not < comparison < additive <
multiplicative < unary minus.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import singledispatch
from typing import Any

from kleene.lang import ast

_OR, _AND, _NOT, _COMPARE, _ADD, _MUL, _NEG, _ATOM = range(1, 9)

_BINARY_PRECEDENCE = {
    ast.BinOp.OR: _OR,
    ast.BinOp.AND: _AND,
    ast.BinOp.EQ: _COMPARE,
    ast.BinOp.NE: _COMPARE,
    ast.BinOp.LT: _COMPARE,
    ast.BinOp.LE: _COMPARE,
    ast.BinOp.GT: _COMPARE,
    ast.BinOp.GE: _COMPARE,
    ast.BinOp.ADD: _ADD,
    ast.BinOp.SUB: _ADD,
    ast.BinOp.MUL: _MUL,
    ast.BinOp.DIV: _MUL,
    ast.BinOp.MOD: _MUL,
}
_BINARY_TEXT = {ast.BinOp.EQ: "="}
_INDEX_TEXT = {
    ast.IndexKind.FIRST: "1",
    ast.IndexKind.CURRENT: "i",
    ast.IndexKind.PREVIOUS: "i-1",
}
_UNIT_TEXT = {
    ast.TimeUnit.SECONDS: "second",
    ast.TimeUnit.MINUTES: "minute",
    ast.TimeUnit.HOURS: "hour",
    ast.TimeUnit.DAYS: "day",
}
_OUTPUT_TEXT = {
    ast.OutputFormat.ALL: "ALL",
    ast.OutputFormat.NON_OVERLAP: "NON-OVERLAP",
    ast.OutputFormat.COLLAPSED: "COLLAPSED",
}
_STRING_ESCAPES = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}


def _precedence(expr: ast.Expr) -> int:
    if isinstance(expr, ast.Binary):
        return _BINARY_PRECEDENCE[expr.op]
    if isinstance(expr, ast.Unary):
        return _NOT if expr.op is ast.UnOp.NOT else _NEG
    if _is_number(expr) and _number_text(expr).startswith("-"):
        return _NEG
    return _ATOM


def _is_number(expr: ast.Expr) -> bool:
    return (
        isinstance(expr, ast.Literal)
        and isinstance(expr.value, int | float)
        and not isinstance(expr.value, bool)
    )


def _number_text(expr: ast.Expr) -> str:
    assert isinstance(expr, ast.Literal)
    return _number(expr.value)


def _number(value: object) -> str:
    assert isinstance(value, int | float)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{value} has no literal form in the query language")
    return repr(value)


def _wrap(expr: ast.Expr, minimum: int) -> str:
    text = expr_to_text(expr)
    return f"({text})" if _precedence(expr) < minimum else text


# --- expressions -----------------------------------------------------------------------


@singledispatch
def expr_to_text(expr: ast.Expr) -> str:
    """The canonical text of one expression, e.g. ``avg(b[].period)`` or ``a.symbol``;
    the default name of a RETURN item."""
    raise TypeError(f"not an expression node: {type(expr).__name__}")


@expr_to_text.register
def _literal(expr: ast.Literal) -> str:
    value = expr.value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "'" + "".join(_STRING_ESCAPES.get(c, c) for c in value) + "'"
    return _number(value)


@expr_to_text.register
def _attr_ref(expr: ast.AttrRef) -> str:
    if expr.index is None:
        if expr.attr.lower() == "len":
            raise ValueError(f"{expr.var}.{expr.attr} would read as the length {expr.var}.LEN")
        return f"{expr.var}.{expr.attr}"
    if expr.index is ast.IndexKind.LAST:
        return f"{expr.var}[{expr.var}.LEN].{expr.attr}"
    return f"{expr.var}[{_INDEX_TEXT[expr.index]}].{expr.attr}"


@expr_to_text.register
def _len_ref(expr: ast.LenRef) -> str:
    return f"{expr.var}.LEN"


@expr_to_text.register
def _aggregate(expr: ast.Aggregate) -> str:
    attr = "" if expr.attr is None else f".{expr.attr}"
    if expr.range is ast.AggRange.BEFORE_CURRENT and expr.attr is None:
        raise ValueError(f"{expr.func.value} over {expr.var}[..i-1] needs an attribute")
    return f"{expr.func.value}({expr.var}[{expr.range.value}]{attr})"


@expr_to_text.register
def _equivalence(expr: ast.Equivalence) -> str:
    return "[" + ", ".join(expr.attrs) + "]"


@expr_to_text.register
def _binary(expr: ast.Binary) -> str:
    precedence = _BINARY_PRECEDENCE[expr.op]
    # and/or and arithmetic associate to the left; comparisons do not chain.
    left_minimum = precedence + 1 if expr.op.is_comparison else precedence
    op = _BINARY_TEXT.get(expr.op, expr.op.value)
    return f"{_wrap(expr.left, left_minimum)} {op} {_wrap(expr.right, precedence + 1)}"


@expr_to_text.register
def _unary(expr: ast.Unary) -> str:
    if expr.op is ast.UnOp.NOT:
        return f"not {_wrap(expr.operand, _NOT)}"
    if _is_number(expr.operand):
        # `-5` would read back as the literal -5, not as minus applied to 5.
        return f"-({expr_to_text(expr.operand)})"
    return f"-{_wrap(expr.operand, _NEG)}"


# --- query -----------------------------------------------------------------------------


def _component(component: ast.Component) -> str:
    if component.negated:
        return f"~({component.event_type} {component.var})"
    if component.kleene:
        return f"{component.event_type}+ {component.var}[]"
    return f"{component.event_type} {component.var}"


def _conjunct(expr: ast.Expr, alone: bool) -> str:
    """A parenthesised ``and`` stays one conjunct; ``or`` needs parentheses only when
    other conjuncts follow or precede it."""
    text = expr_to_text(expr)
    precedence = _precedence(expr)
    if precedence == _AND or (precedence == _OR and not alone):
        return f"({text})"
    return text


def _where(query: ast.Query) -> str | None:
    conjuncts = [_conjunct(c, alone=len(query.where) == 1) for c in query.where]
    if query.strategy is None:
        if query.strategy_vars is not None:
            raise ValueError("a strategy variable list needs a strategy")
        return "WHERE " + "\n  and ".join(conjuncts) if conjuncts else None
    head = f"WHERE {query.strategy.value}"
    if query.strategy_vars is not None:
        if not query.strategy_vars:
            raise ValueError("the strategy variable list is empty")
        names = []
        for name in query.strategy_vars:
            component = query.pattern.component(name)
            names.append(f"{name}[]" if component is not None and component.kleene else name)
        head += "(" + ", ".join(names) + ")"
    if not conjuncts:
        return head + " { }"
    return head + " {\n    " + "\n    and ".join(conjuncts) + "\n}"


def _window(window: ast.Window) -> str:
    text = f"WITHIN {_number(window.amount)}"
    if window.unit is not None:
        text += " " + _UNIT_TEXT[window.unit] + ("" if window.amount == 1 else "s")
    return text


def _return_item(item: ast.ReturnItem) -> str:
    text = expr_to_text(item.expr)
    return text if item.alias is None else f"{text} AS {item.alias}"


def _components(pattern: ast.Seq) -> str:
    parts: list[str] = []
    for index, c in enumerate(pattern.components):
        if c.group is None:
            parts.append(_component(c))
        elif c.group == index:
            members = [m for m in pattern.components if m.group == index]
            inner = ", ".join(f"{m.event_type} {m.var}" for m in members)
            parts.append(f"~SEQ({inner})" if c.negated else f"SEQ({inner})+")
    return ", ".join(parts)


def query_to_text(query: ast.Query) -> str:
    """The canonical text of a whole query, one clause per line."""
    lines = ["PATTERN SEQ(" + _components(query.pattern) + ")"]
    where = _where(query)
    if where is not None:
        lines.append(where)
    if query.within is not None:
        lines.append(_window(query.within))
    if query.returns:
        lines.append("RETURN " + ", ".join(_return_item(r) for r in query.returns))
    if query.output is not None:
        lines.append(f"OUTPUT {_OUTPUT_TEXT[query.output]}")
    if query.confidence is not None:
        lines.append(f"CONFIDENCE {query.confidence.op} {_number(query.confidence.threshold)}")
    return "\n".join(lines)


def _union(union: ast.Union) -> str:
    return "\nUNION\n".join(query_to_text(q) for q in union.branches)


def program_to_text(program: ast.Program) -> str:
    """The canonical text of a program: each DEFINE, then the union it returns."""
    parts = [f"DEFINE {d.name} AS\n{_union(d.body)};" for d in program.definitions]
    return "\n".join([*parts, _union(program.body)])


def to_text(node: ast.Node) -> str:
    """Canonical text of a Program, a Query, an expression, a RETURN item or a component;
    ``parse(to_text(q)) == q`` for every query ``q`` the parser can produce."""
    printers: tuple[tuple[type, Callable[[Any], str]], ...] = (
        (ast.Query, query_to_text),
        (ast.Program, program_to_text),
        (ast.Expr, expr_to_text),
        (ast.ReturnItem, _return_item),
        (ast.Component, _component),
        (ast.Window, _window),
    )
    for kind, printer in printers:
        if isinstance(node, kind):
            return printer(node)
    raise TypeError(f"no text form for {type(node).__name__}")
