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
from functools import lru_cache
from typing import Any

from kleene.compiler import expr
from kleene.compiler.slots import Slot
from kleene.events import EVENT_ID, EVENT_TIME, EVENT_TYPE
from kleene.lang import ast

FIXED_FIELDS = {"type": EVENT_TYPE, "timestamp": EVENT_TIME, "id": EVENT_ID}

_PY_OPS = {"=": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_PY_OPS.update({op: op for op in expr.ARITHMETIC})

CAUGHT = "(ArithmeticError, TypeError, ValueError)"


def _error() -> Any:
    """Raised by generated code where the IR's rules say an operation is an error."""
    raise TypeError("no value")


RUNTIME_NAMES: dict[str, Any] = {"_error": _error}


def _any_kind(_var: str, _attr: str) -> expr.Kind:
    return expr.Kind.ANY


@dataclass(frozen=True)
class Context:
    """How references resolve on one edge.

    ``var`` is the variable whose event is ``e`` (None on proceed and RETURN);
    ``element`` is "single", "first" (a[1], the begin edge) or "rest" (a[i], i >= 2).
    ``slot_of`` names a V column in the generated code; ``kind_of(var, attr)`` is what
    admission guarantees about an attribute's values.
    """

    var: str | None
    element: str
    slot_of: Callable[[Slot], str]
    attr_index: Callable[[str], int]
    kind_of: Callable[[str, str], expr.Kind] = _any_kind


def field_index(attr: str, attr_index: Callable[[str], int]) -> int:
    """Where an attribute sits in the event tuple."""
    return FIXED_FIELDS[attr] if attr in FIXED_FIELDS else attr_index(attr)


def event_field(attr: str, attr_index: Callable[[str], int]) -> str:
    return f"e[{field_index(attr, attr_index)}]"


def _attr_kind(attr: str, var: str, ctx: Context) -> expr.Kind:
    if attr == "timestamp":
        return expr.Kind.NUMBER
    if attr in FIXED_FIELDS:
        return expr.Kind.STRING if attr == "type" else expr.Kind.ANY
    return ctx.kind_of(var, attr)


def resolver(ctx: Context) -> expr.Resolver:
    """How each reference reads on the edge ``ctx`` describes (SIGMOD 2008, section
    5.2.1): the event at hand, or a column of V."""

    def resolve(node: ast.Expr) -> expr.Expr:
        if isinstance(node, ast.AttrRef):
            kind = _attr_kind(node.attr, node.var, ctx)
            slot = _attr_slot(node, ctx)
            if slot is None:
                return expr.Load(expr.EVENT, node.attr, kind)
            return expr.Load(expr.SLOT, slot, kind)
        if isinstance(node, ast.LenRef):
            return expr.Load(expr.SLOT, ("count", node.var), expr.Kind.NUMBER)
        assert isinstance(node, ast.Aggregate)
        count = expr.Load(expr.SLOT, ("count", node.var), expr.Kind.NUMBER)
        if node.func is ast.AggFunc.COUNT:
            return count
        assert node.attr is not None
        if node.func is ast.AggFunc.AVG:
            total = expr.Load(expr.SLOT, ("sum", node.var, node.attr), expr.Kind.NUMBER)
            return expr.Arith("/", total, count)
        kind = (
            expr.Kind.NUMBER if node.func is ast.AggFunc.SUM else ctx.kind_of(node.var, node.attr)
        )
        return expr.Load(expr.SLOT, (node.func.value, node.var, node.attr), kind)

    return resolve


def _attr_slot(ref: ast.AttrRef, ctx: Context) -> Slot | None:
    """The V column an attribute reference reads, or None for the event at hand."""
    current = ref.var == ctx.var
    if ref.index is None:
        return None if current else ("attr", ref.var, "single", ref.attr)
    if ref.index is ast.IndexKind.CURRENT and current:
        return None
    if ref.index is ast.IndexKind.FIRST:
        if current and ctx.element == "first":
            return None
        return ("attr", ref.var, "first", ref.attr)
    # PREVIOUS on a take edge, LAST anywhere after the array ended: the last element so far
    return ("attr", ref.var, "last", ref.attr)


def expr_code(node: ast.Expr, ctx: Context) -> str:
    """Python source for an AST expression under ``ctx``, through the IR."""

    def place(load: expr.Load) -> str:
        if load.source == expr.SLOT:
            return ctx.slot_of(load.key)
        return event_field(load.key, ctx.attr_index)

    return python_code(expr.lower(node, resolver(ctx)), place)


def python_code(node: expr.Expr, place: Callable[[expr.Load], str]) -> str:
    """Python source for an IR expression that follows the IR's rules on the values
    admission lets through; it raises (one of CAUGHT) where the rules say error. Loads
    read ``place(load)``. Generated code needs RUNTIME_NAMES in its namespace."""
    temps = iter(range(1 << 30))

    def emit(n: expr.Expr) -> str:
        if isinstance(n, expr.Const):
            return repr(n.value)
        if isinstance(n, expr.Load):
            code = place(n)
            if n.nullable:
                t = f"_k{next(temps)}"
                return f"({t} if ({t} := {code}) is not None else _error())"
            return code
        if isinstance(n, expr.Not):
            return f"(not {emit(n.operand)})"
        if isinstance(n, expr.Neg):
            return f"(-{_number(n.operand)})"
        if isinstance(n, expr.Logic):
            return f"({emit(n.left)} {n.op} {emit(n.right)})"
        if isinstance(n, expr.Arith):
            return f"({_number(n.left)} {n.op} {_number(n.right)})"
        assert isinstance(n, expr.Compare)
        if n.ordering:
            # two loaded attributes of one comparison share a kind group: admission gives
            # both the same kind, so checking one is enough; a constant or a computed
            # value shares no group, so a loaded side of unknown kind is checked (a
            # boolean does not order against a number, as in the oracle and Spark)
            right_shares = isinstance(n.right, expr.Load) and expr.orderable(n.right)
            left = emit(n.left) if right_shares else _ordered(n.left)
            left_shares = isinstance(n.left, expr.Load)
            right = emit(n.right) if left_shares else _ordered(n.right)
            return f"({left} {_PY_OPS[n.op]} {right})"
        return f"({emit(n.left)} {_PY_OPS[n.op]} {emit(n.right)})"

    def _number(n: expr.Expr) -> str:
        code = emit(n)
        if n.kind is expr.Kind.NUMBER:
            return code
        t = f"_k{next(temps)}"
        return (
            f"({t} if isinstance(({t} := {code}), (int, float)) and {t}.__class__ is not bool"
            " else _error())"
        )

    def _ordered(n: expr.Expr) -> str:
        code = emit(n)
        if expr.orderable(n):
            return code
        t = f"_k{next(temps)}"
        return f"({t} if ({t} := {code}).__class__ is not bool else _error())"

    return emit(node)


@lru_cache(maxsize=4096)
def slots_needed(node: ast.Expr, edge_var: str | None, element: str) -> tuple[Slot, ...]:
    """The V columns an expression reads when evaluated with ``edge_var``'s event at
    hand, in evaluation order (cached: the compiler asks once per pass)."""
    ctx = Context(edge_var, element, str, lambda _attr: 0)
    lowered = expr.lower(node, resolver(ctx))
    return tuple(load.key for load in expr.loads(lowered) if load.source == expr.SLOT)


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
    scope: dict[str, Any] = {**RUNTIME_NAMES, **(namespace or {})}
    exec(compile(source, f"<kleene:{name}>", "exec"), scope)
    fn = scope[name]
    fn.__kleene_source__ = source
    return fn
