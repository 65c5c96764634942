"""Edge formulas as boolean columns over (event, previous event) pairs.

For component j, ``begin[j][r]`` says row r can be its first element when row r-1 is
the last element of component j-1 (SIGMOD 2008, section 3.2: the begin formula),
``take[j][r]`` that row r can follow row r-1 inside a Kleene component (the take
formula), and ``end[j][r]`` that a Kleene component may end at row r (the conjuncts of
its proceed formula). Conjuncts are evaluated with numpy exactly as Python would
(:mod:`kleene.runtime.prefilter`); where that is impossible for a batch (integers beyond
2**53, values of mixed kinds) they are evaluated row by row with generated code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from kleene.compiler import codegen
from kleene.compiler.plan import Plan
from kleene.compiler.shape import CUR, Condition, Shape
from kleene.lang import ast
from kleene.runtime.prefilter import GiveUp, Value, as_value, conjunction
from kleene.runtime.vector.frame import Frame

RowFn = Callable[[tuple[Any, ...], tuple[Any, ...] | None], bool]


@dataclass
class Masks:
    begin: list[np.ndarray]
    take: list[np.ndarray | None]
    end: list[np.ndarray | None]


def compute(frame: Frame, shape: Shape, plan: Plan) -> Masks:
    n = frame.n
    same = ~frame.seg_start  # row r-1 is in row r's partition
    if shape.adjacent_key:
        same &= frame.adjacent_key()
    comps = shape.components
    begin: list[np.ndarray] = []
    take: list[np.ndarray | None] = []
    end: list[np.ndarray | None] = []
    for j, comp in enumerate(comps):
        typed = frame.type_mask(comp.event_type)
        if j == 0:
            begin.append(_holds(frame, plan, typed, comp.begin, False))
        else:
            before = np.zeros(n, dtype=bool)
            before[1:] = frame.type_mask(comps[j - 1].event_type)[:-1]
            begin.append(_holds(frame, plan, typed & same & before, comp.begin, True))
        if comp.kleene:
            again = np.zeros(n, dtype=bool)
            again[1:] = typed[:-1]
            take.append(_holds(frame, plan, typed & same & again, comp.take, True))
            end.append(_holds(frame, plan, typed, comp.end, False))
        else:
            take.append(None)
            end.append(None)
    return Masks(begin, take, end)


def _holds(
    frame: Frame, plan: Plan, candidates: np.ndarray, conds: Sequence[Condition], pairs: bool
) -> np.ndarray:
    """``candidates`` narrowed to the rows where every condition holds."""
    rows = np.flatnonzero(candidates)
    if not conds or not len(rows):
        return candidates
    out = np.zeros(frame.n, dtype=bool)
    ok = np.ones(len(rows), dtype=bool)
    for cond in conds:
        keep = np.flatnonzero(ok)
        ok[keep] = _condition(frame, plan, cond, rows[keep], pairs)
    out[rows[ok]] = True
    return out


def _condition(
    frame: Frame, plan: Plan, cond: Condition, rows: np.ndarray, pairs: bool
) -> np.ndarray:
    if not len(rows):
        return np.zeros(0, dtype=bool)
    cache: dict[tuple[str, str], Value] = {}

    def resolve(ref: ast.AttrRef) -> Value:
        side = cond.side(ref)
        key = (side, ref.attr)
        if key not in cache:
            at = rows if side == CUR else rows - 1
            raw = frame.raw(ref.attr, frame.src[at])
            cache[key] = as_value(raw, frame.batch is None or frame.batch.table is None)
        return cache[key]

    try:
        return conjunction([cond.expr], resolve, len(rows))
    except GiveUp:
        fn = row_function(cond, plan)
        cur = frame.tuples(frame.src[rows])
        prev = frame.tuples(frame.src[rows - 1]) if pairs else [None] * len(rows)
        return np.fromiter(map(fn, cur, prev), dtype=bool, count=len(rows))


def row_function(cond: Condition, plan: Plan) -> RowFn:
    """The condition as generated Python over (event, previous event) tuples."""
    expr = _rewrite(cond.expr, cond)

    def slot_of(slot: tuple[str, ...]) -> str:
        return f"p[{codegen.field_index(slot[3], plan.attr_index)}]"

    ctx = codegen.Context("__cur", "single", slot_of, plan.attr_index)
    code = codegen.expr_code(expr, ctx)
    source = (
        "def holds(e, p):\n"
        f"    try:\n        return bool({code})\n"
        f"    except {codegen.CAUGHT}:\n        return False\n"
    )
    return codegen.build(source, "holds")


def _rewrite(node: ast.Expr, cond: Condition) -> ast.Expr:
    if isinstance(node, ast.AttrRef):
        var = "__cur" if cond.side(node) == CUR else "__prev"
        return ast.AttrRef(var, node.attr, None, span=node.span)
    if isinstance(node, ast.Binary):
        return replace(node, left=_rewrite(node.left, cond), right=_rewrite(node.right, cond))
    if isinstance(node, ast.Unary):
        return replace(node, operand=_rewrite(node.operand, cond))
    return node
