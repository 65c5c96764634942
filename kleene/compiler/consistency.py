"""Consistency classes of Kleene predicates (SIGMOD 2014, section 5.2).

A take-edge conjunct of a Kleene variable v compares the current element with earlier
ones. Evaluated against *all* candidates collected so far (a superset of every match's
earlier elements) its result carries over to every subset when the conjunct is

* true-value consistent: true against all candidates => true against any subset, as
  ``e > max(v[..i-1].x)``, ``e < min(...)``, ``count(v[..i-1]) < k``;
* false-value consistent: false against all => false against any subset, as
  ``e < max(v[..i-1].x)``, ``e > min(...)``, ``count(v[..i-1]) > k``;
* both: the conjunct reads only the event and single variables (an early filter);
* inconsistent: anything else (``avg``, ``sum``, ``v[i-1]``).

Here ``e`` is any expression over the current event only. A false-value consistent
conjunct that fails lets the event be discarded; a true-value consistent one that holds
lets the event be labelled SAFE.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kleene.compiler import codegen
from kleene.compiler.slots import Slot
from kleene.lang import ast

_FLIP = {
    ast.BinOp.LT: ast.BinOp.GT,
    ast.BinOp.LE: ast.BinOp.GE,
    ast.BinOp.GT: ast.BinOp.LT,
    ast.BinOp.GE: ast.BinOp.LE,
}
_GREATER = (ast.BinOp.GT, ast.BinOp.GE)

TRUE_VALUE, FALSE_VALUE = "true-value", "false-value"


@dataclass(frozen=True)
class ConsistencyTest:
    """A classified conjunct: ``check(e, A, G)`` evaluates it with ``G`` the aggregate
    (``func`` over attribute ``attr``; attr None for count) of all candidates so far."""

    kind: str  # TRUE_VALUE or FALSE_VALUE
    func: str  # "max", "min" or "count"
    attr: str | None
    check: Callable[[tuple[Any, ...], tuple[Any, ...], Any], bool]
    text: str


def classify(
    cond: ast.Expr,
    var: str,
    slot_code: Callable[[Slot], str],
    attr_index: Callable[[str], int],
    name: str,
) -> ConsistencyTest | None:
    """The conjunct's class as a test, or None when it is inconsistent."""
    if not (isinstance(cond, ast.Binary) and cond.op in _FLIP):
        return None
    shapes = ((cond.left, cond.op, cond.right), (cond.right, _FLIP[cond.op], cond.left))
    for event_side, op, agg in shapes:
        if not (
            isinstance(agg, ast.Aggregate)
            and agg.var == var
            and agg.range is ast.AggRange.BEFORE_CURRENT
            and _event_only(event_side, var)
        ):
            continue
        if agg.func in (ast.AggFunc.MAX, ast.AggFunc.MIN):
            above = (op in _GREATER) == (agg.func is ast.AggFunc.MAX)
            kind = TRUE_VALUE if above else FALSE_VALUE
        elif agg.func is ast.AggFunc.COUNT:  # e OP count: subsets have fewer elements
            kind = TRUE_VALUE if op in _GREATER else FALSE_VALUE
        else:
            return None
        ctx = codegen.Context(
            var, "rest", lambda s: "G" if s[1] == var else slot_code(s), attr_index
        )
        source = (
            f"def {name}(e, V, G):\n    try:\n        return bool({codegen.expr_code(cond, ctx)})\n"
            f"    except {codegen.CAUGHT}:\n        return False\n"
        )
        check = codegen.build(source, name)
        attr = agg.attr if agg.func is not ast.AggFunc.COUNT else None
        return ConsistencyTest(kind, agg.func.value, attr, check, "")
    return None


def _event_only(node: ast.Expr, var: str) -> bool:
    """An expression over the current element and literals only."""
    for n in node.walk():
        if isinstance(n, ast.AttrRef) and not (n.var == var and n.index is ast.IndexKind.CURRENT):
            return False
        if isinstance(n, ast.Aggregate | ast.LenRef):
            return False
    return True
