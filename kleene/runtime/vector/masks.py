"""Edge formulas as boolean columns over (event, previous event) pairs.

For component j, ``begin[j][r]`` says row r can be its first element when row r-1 is
the last element of component j-1 (SIGMOD 2008, section 3.2: the begin formula),
``take[j][r]`` that row r can follow row r-1 inside a Kleene component (the take
formula), and ``end[j][r]`` that a Kleene component may end at row r (the conjuncts of
its proceed formula). Conjuncts come in the expression IR and are evaluated by its
columnar backend (:mod:`kleene.compiler.columnar`); where that gives up for a batch
(integers beyond 2**53, values of mixed kinds) they are evaluated row by row with the
scalar backend's generated code.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kleene.compiler import codegen
from kleene.compiler.columnar import GiveUp, Raw, conjunction
from kleene.compiler.expr import EVENT, PREVIOUS, Load
from kleene.compiler.plan import Plan
from kleene.compiler.shape import Condition, Shape
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

    def resolve(load: Load) -> Raw:
        at = rows if load.source == EVENT else rows - 1
        return frame.raw(load.key, frame.src[at])

    try:
        python = frame.batch is None or frame.batch.table is None
        return conjunction([cond.ir], resolve, len(rows), python)
    except GiveUp:
        fn = row_function(cond, plan)
        cur = frame.tuples(frame.src[rows])
        prev = frame.tuples(frame.src[rows - 1]) if pairs else [None] * len(rows)
        return np.fromiter(map(fn, cur, prev), dtype=bool, count=len(rows))


def row_function(cond: Condition, plan: Plan) -> RowFn:
    """The condition as generated Python over (event, previous event) tuples."""

    def place(load: Load) -> str:
        tuple_name = {EVENT: "e", PREVIOUS: "p"}[load.source]
        return f"{tuple_name}[{codegen.field_index(load.key, plan.attr_index)}]"

    code = codegen.python_code(cond.ir, place)
    source = (
        "def holds(e, p):\n"
        f"    try:\n        return bool({code})\n"
        f"    except {codegen.CAUGHT}:\n        return False\n"
    )
    return codegen.build(source, "holds")
