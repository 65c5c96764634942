"""Edge formulas as generated Python functions (SIGMOD 2008, sections 3.2 and 5.2.1).

Each begin/take edge becomes ``f(e, V) -> V' | None``: it checks the event type and the
conjuncts placed on the edge against the event tuple ``e`` and the computation state
``V``, and returns the updated state vector, or None when the edge does not hold. A
proceed edge becomes ``g(V) -> bool``; a negation check ``h(e, V) -> bool``; RETURN
``r(V) -> tuple``. The source is generated once per query at compile time (never on the
hot path); literals are embedded with ``repr`` and attributes are addressed by position,
so no user text is ever executed.

A conjunct whose evaluation raises (division by zero, an ordering comparison of values
of different kinds) is false, as in the oracle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from kleene.compiler.slots import Slot
from kleene.lang import ast

EVENT_TYPE, EVENT_TIME, EVENT_ID = 0, 1, 2
FIXED_FIELDS = {"type": EVENT_TYPE, "timestamp": EVENT_TIME, "id": EVENT_ID}

_PY_OPS = {
    ast.BinOp.ADD: "+",
    ast.BinOp.SUB: "-",
    ast.BinOp.MUL: "*",
    ast.BinOp.DIV: "/",
    ast.BinOp.MOD: "%",
    ast.BinOp.EQ: "==",
    ast.BinOp.NE: "!=",
    ast.BinOp.LT: "<",
    ast.BinOp.LE: "<=",
    ast.BinOp.GT: ">",
    ast.BinOp.GE: ">=",
    ast.BinOp.AND: "and",
    ast.BinOp.OR: "or",
}

CAUGHT = "(ArithmeticError, TypeError, ValueError)"


@dataclass(frozen=True)
class Context:
    """How references resolve on one edge.

    ``var`` is the variable whose event is ``e`` (None on proceed and RETURN);
    ``element`` is "single", "first" (a[1], the begin edge) or "rest" (a[i], i >= 2).
    """

    var: str | None
    element: str
    slot_of: Callable[[Slot], str]
    attr_index: Callable[[str], int]


def field_index(attr: str, attr_index: Callable[[str], int]) -> int:
    """Where an attribute sits in the event tuple."""
    return FIXED_FIELDS[attr] if attr in FIXED_FIELDS else attr_index(attr)


def event_field(attr: str, attr_index: Callable[[str], int]) -> str:
    return f"e[{field_index(attr, attr_index)}]"


def expr_code(node: ast.Expr, ctx: Context) -> str:
    """Python source for an expression under ``ctx``."""
    if isinstance(node, ast.Literal):
        return repr(node.value)
    if isinstance(node, ast.Binary):
        op = _PY_OPS[node.op]
        return f"({expr_code(node.left, ctx)} {op} {expr_code(node.right, ctx)})"
    if isinstance(node, ast.Unary):
        op = "not " if node.op is ast.UnOp.NOT else "-"
        return f"({op}{expr_code(node.operand, ctx)})"
    if isinstance(node, ast.AttrRef):
        return _attr_code(node, ctx)
    if isinstance(node, ast.LenRef):
        return ctx.slot_of(("count", node.var))
    if isinstance(node, ast.Aggregate):
        return _aggregate_code(node, ctx)
    raise TypeError(f"no code for {type(node).__name__}")


def _attr_code(ref: ast.AttrRef, ctx: Context) -> str:
    current = ref.var == ctx.var
    if ref.index is None:
        if current:
            return event_field(ref.attr, ctx.attr_index)
        return ctx.slot_of(("attr", ref.var, "single", ref.attr))
    if ref.index is ast.IndexKind.CURRENT and current:
        return event_field(ref.attr, ctx.attr_index)
    if ref.index is ast.IndexKind.FIRST:
        if current and ctx.element == "first":
            return event_field(ref.attr, ctx.attr_index)
        return ctx.slot_of(("attr", ref.var, "first", ref.attr))
    # PREVIOUS on a take edge, LAST anywhere after the array ended: the last element so far
    return ctx.slot_of(("attr", ref.var, "last", ref.attr))


def _aggregate_code(agg: ast.Aggregate, ctx: Context) -> str:
    if agg.func is ast.AggFunc.COUNT:
        return ctx.slot_of(("count", agg.var))
    assert agg.attr is not None
    if agg.func is ast.AggFunc.AVG:
        total = ctx.slot_of(("sum", agg.var, agg.attr))
        return f"({total} / {ctx.slot_of(('count', agg.var))})"
    return ctx.slot_of((agg.func.value, agg.var, agg.attr))


def slots_needed(node: ast.Expr, edge_var: str | None, element: str) -> list[Slot]:
    """The V columns an expression reads when evaluated with ``edge_var``'s event at hand."""
    found: list[Slot] = []

    def slot_of(slot: Slot) -> str:
        found.append(slot)
        return "v"

    expr_code(node, Context(edge_var, element, slot_of, lambda _attr: 0))
    return found


def event_attrs(node: ast.Node, var: str) -> set[str]:
    """Attributes of ``var``'s own event an expression reads (excluding fixed fields)."""
    refs = [r.attr for r in node.find(ast.AttrRef) if r.var == var]
    refs += [a.attr for a in node.find(ast.Aggregate) if a.var == var and a.attr]
    return {attr for attr in refs if attr not in FIXED_FIELDS}


# --- function assembly -------------------------------------------------------------


def conjunction_lines(conds: Sequence[str], fail: str, indent: str = "    ") -> list[str]:
    """``if not (c): <fail>`` for each condition, inside one try block."""
    if not conds:
        return []
    lines = [f"{indent}try:"]
    lines += [f"{indent}    if not {c}: {fail}" for c in conds]
    lines += [f"{indent}except {CAUGHT}: {fail}"]
    return lines


def build(source: str, name: str, namespace: dict[str, Any] | None = None) -> Callable[..., Any]:
    """Compile one generated function."""
    scope: dict[str, Any] = dict(namespace or {})
    exec(compile(source, f"<kleene:{name}>", "exec"), scope)
    fn = scope[name]
    fn.__kleene_source__ = source
    return fn
