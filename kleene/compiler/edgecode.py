"""The compiled formulas of an NFA^b plan: edge, proceed, negation and RETURN functions.

Each formula is generated as Python source by :mod:`kleene.compiler.codegen` and
compiled once. An edge function takes the event tuple ``e`` and the run's
computation-state vector ``V`` (SIGMOD 2008, section 5.2.1) and returns the new ``V``,
or None when the edge's conjuncts fail.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kleene.compiler import codegen
from kleene.compiler.expr import Kind
from kleene.compiler.plan import NegatedEvent, Negation
from kleene.compiler.slots import Slot, SlotLayout
from kleene.events import EVENT_TYPE
from kleene.lang import ast
from kleene.lang import expr_to_text as _text


def edge_function(
    name: str,
    comp: ast.Component,
    kind: str,
    conds: list[ast.Expr],
    ctx: codegen.Context,
    layout: SlotLayout,
    attr_index: Callable[[str], int],
    *,
    fixed_only: bool = False,
) -> Any:
    """A begin or take edge: the type test, the conjuncts, then the V update."""
    lines = [f"def {name}(e, V):", f"    if e[{EVENT_TYPE}] != {comp.event_type!r}: return None"]
    lines += codegen.conjunction_lines([codegen.expr_code(c, ctx) for c in conds], "return None")
    update = _update_code(comp.var, kind, layout, attr_index, fixed_only=fixed_only)
    if update is None:
        lines.append("    return V")
    else:
        lines += [
            "    try:",
            f"        return {update}",
            f"    except {codegen.CAUGHT}: return None",
        ]
    return codegen.build("\n".join(lines) + "\n", name)


def fixed(slot: Slot) -> bool:
    """Slots whose value does not depend on which Kleene elements a match picks: a
    single variable's attributes."""
    return slot[0] == "attr" and slot[2] == "single"


def _update_code(
    var: str,
    kind: str,
    layout: SlotLayout,
    attr_index: Callable[[str], int],
    *,
    fixed_only: bool = False,
) -> str | None:
    """The new V after selecting an event for ``var`` (section 5.2.1); with
    ``fixed_only``, only the slots that are set once."""
    mine = {i: s for i, s in layout.for_var(var) if fixed(s) or not fixed_only}
    if not mine:
        return None

    def field(attr: str) -> str:
        return codegen.event_field(attr, attr_index)

    cols = []
    for i, slot in enumerate(layout.slots):
        if i not in mine:
            cols.append(f"V[{i}]")
            continue
        op = slot[0]
        begin = kind in ("single", "first")
        if op == "attr":
            which = slot[2]
            cols.append(field(slot[3]) if begin or which == "last" else f"V[{i}]")
        elif op == "count":
            cols.append("1" if begin else f"V[{i}] + 1")
        elif op == "sum":
            cols.append(field(slot[2]) if begin else f"V[{i}] + {field(slot[2])}")
        else:  # min / max
            f = field(slot[2])
            cmp = "<" if op == "min" else ">"
            cols.append(f if begin else f"({f} if {f} {cmp} V[{i}] else V[{i}])")
    return "(" + ", ".join(cols) + ",)"


def proceed_function(name: str, conds: list[ast.Expr], ctx: codegen.Context) -> Any:
    """A loop head's proceed formula over V (without the peek at the next state)."""
    lines = [f"def {name}(V):"]
    lines += codegen.conjunction_lines([codegen.expr_code(c, ctx) for c in conds], "return False")
    lines.append("    return True")
    return codegen.build("\n".join(lines) + "\n", name)


def negation_checks(
    group: tuple[ast.Component, ...],
    pattern: ast.Seq,
    conjuncts: dict[str, list[ast.Expr]],
    keyed: Callable[[str], bool],
    slot_code: Callable[[Slot], str],
    attr_index: Callable[[str], int],
    kind_of: Callable[[str, str], Kind],
) -> Negation:
    """A negated component or sequence: one check per variable, holding the conjuncts
    whose last negated identifier it is; earlier members are read from ``P``."""
    positive = [c.var for c in pattern.positive]
    first = pattern.components.index(group[0])
    last = pattern.components.index(group[-1])
    before_vars = [c.var for c in pattern.components[:first] if not c.negated]
    after_vars = [c.var for c in pattern.components[last + 1 :] if not c.negated]
    earlier = {m.var: k for k, m in enumerate(group)}

    def member_slot(slot: Slot) -> str:
        if slot[1] in earlier:  # ("attr", var, "single", attr) of an earlier member
            return f"P[{earlier[slot[1]]}][{codegen.field_index(slot[3], attr_index)}]"
        return slot_code(slot)

    members = []
    for comp in group:
        conds = conjuncts[comp.var]
        ctx = codegen.Context(comp.var, "single", member_slot, attr_index, kind_of)
        name = f"negation_{comp.var}"
        lines = [
            f"def {name}(e, V, P):",
            f"    if e[{EVENT_TYPE}] != {comp.event_type!r}: return False",
        ]
        lines += codegen.conjunction_lines(
            [codegen.expr_code(c, ctx) for c in conds], "return False"
        )
        lines.append("    return True")
        members.append(
            NegatedEvent(
                var=comp.var,
                event_type=comp.event_type,
                check=codegen.build("\n".join(lines) + "\n", name),
                keyed=keyed(comp.var),
                text=tuple(_text(c) for c in conds),
            )
        )
    return Negation(
        members=tuple(members),
        before=positive.index(before_vars[-1]) if before_vars else None,
        after=positive.index(after_vars[0]) if after_vars else None,
    )


def returns_function(exprs: list[ast.Expr], ctx: codegen.Context) -> Any:
    """The RETURN items over the final V, as a tuple; an item that fails is None."""
    body = ", ".join(codegen.expr_code(e, ctx) for e in exprs)
    return codegen.build(
        "def returns(V):\n"
        f"    try:\n        return ({body},)\n"
        f"    except {codegen.CAUGHT}:\n        return _fallback(V)\n",
        "returns",
        {"_fallback": _safe_returns(exprs, ctx)},
    )


def _safe_returns(exprs: list[ast.Expr], ctx: codegen.Context) -> Callable[[Any], tuple[Any, ...]]:
    """Per-item evaluation when the fast path raised: a failing item returns None."""
    items = [
        codegen.build(
            f"def item(V):\n    try:\n        return {codegen.expr_code(e, ctx)}\n"
            f"    except {codegen.CAUGHT}:\n        return None\n",
            "item",
        )
        for e in exprs
    ]
    return lambda V: tuple(f(V) for f in items)
