"""Vectorized pre-filtering of events (match-windows paper, section 4.2, Theorem 1).

An event that no state of the automaton can accept — its type matches no variable, or
it fails every single-event property of the states of its type — can never be selected.
Such events are found for a whole batch at once with numpy, so they never reach the
per-event code: under the skip-till strategies they are skipped, under strict and
partition contiguity they only break the runs of their partition.

The filter must never drop an event the exact evaluation would accept, so it computes
exactly what Python computes or gives up for the batch (every event is then relevant):
numbers are evaluated as float64 only while every integer stays within 2**53, where
float64 arithmetic is exact and equals Python's; a sub-expression that Python could not
evaluate (division by zero) is tracked as an error mask and makes its conjunct false,
with ``and``/``or`` short-circuiting as in Python.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kleene.compiler.plan import Plan
from kleene.events import EventBatch
from kleene.lang import ast

EXACT = 2.0**53


class _GiveUp(Exception):
    """The batch cannot be filtered exactly."""


# A vectorized value: (values, error mask, is integer, bound on |value| when integer)
Value = tuple[np.ndarray, np.ndarray, bool, float]


class Prefilter:
    """Which events of a batch some state could accept."""

    def __init__(self, plan: Plan) -> None:
        self.by_type: dict[str, list[tuple[str, tuple[ast.Expr, ...]]]] = {}
        for state in plan.states:
            self.by_type.setdefault(state.event_type, []).append((state.var, state.properties))
        self.always = {t for n in plan.negations for t in n.event_types}  # negation candidates
        # worth running only if some type's states all have properties to test
        self.useful = any(
            etype not in self.always and all(props for _, props in states)
            for etype, states in self.by_type.items()
        )

    def relevant(self, batch: EventBatch, clean: set[str]) -> np.ndarray:
        mask = np.zeros(len(batch), dtype=bool)
        for etype, states in self.by_type.items():
            rows = np.flatnonzero(batch.type_mask([etype]))
            if not len(rows):
                continue
            if etype in self.always or etype not in clean or any(not p for _, p in states):
                mask[rows] = True
                continue
            try:
                accepted = np.zeros(len(rows), dtype=bool)
                for var, properties in states:
                    accepted |= _conjunction(properties, var, batch, rows)
                mask[rows] = accepted
            except _GiveUp:
                mask[rows] = True
        if self.always:
            mask |= batch.type_mask(self.always)
        return mask


def _conjunction(
    properties: Sequence[ast.Expr], var: str, batch: EventBatch, rows: np.ndarray
) -> np.ndarray:
    ok = np.ones(len(rows), dtype=bool)
    for prop in properties:
        values, error, _, _ = _value(prop, var, batch, rows)
        if values.dtype != bool:
            raise _GiveUp
        ok &= values & ~error
    return ok


def _column(attr: str, batch: EventBatch, rows: np.ndarray) -> Value:
    none = np.zeros(len(rows), dtype=bool)
    if attr == "timestamp":
        values = batch.times_array()[rows]
    elif attr not in ("type", "id") and batch.kind(attr) is not None:
        values = batch.array(attr)[rows]
    else:
        raw = {"type": batch.types, "id": batch.ids}.get(attr) or batch.column(attr)
        picked = [raw[i] for i in rows.tolist()]
        kinds = set(map(type, picked))
        if kinds <= {str}:
            return np.asarray(picked, dtype=object), none, False, 0.0
        if not kinds <= {int, float}:
            raise _GiveUp
        values = np.asarray(picked, dtype=np.float64 if float in kinds else np.int64)
    if values.dtype == object or values.dtype.kind in "US":
        return values.astype(object), none, False, 0.0
    if values.dtype.kind in "iu" or batch.table is None:
        # integers (or Python numbers of unknown mix): exact while within 2**53
        bound = float(np.max(np.abs(values), initial=0))
        if bound > EXACT:
            raise _GiveUp
        return values.astype(np.float64), none, True, bound
    if values.dtype.kind == "f":
        return values.astype(np.float64), none, False, 0.0
    raise _GiveUp


def _literal(value: Any, n: int) -> Value:
    none = np.zeros(n, dtype=bool)
    if isinstance(value, bool):
        return np.full(n, value, dtype=bool), none, False, 0.0
    if isinstance(value, int):
        if abs(value) > EXACT:
            raise _GiveUp
        return np.full(n, float(value)), none, True, float(abs(value))
    if isinstance(value, float):
        return np.full(n, value), none, False, 0.0
    return np.full(n, value, dtype=object), none, False, 0.0


def _value(node: ast.Expr, var: str, batch: EventBatch, rows: np.ndarray) -> Value:
    n = len(rows)
    if isinstance(node, ast.Literal):
        return _literal(node.value, n)
    if isinstance(node, ast.AttrRef):
        if node.var != var:
            raise _GiveUp
        return _column(node.attr, batch, rows)
    if isinstance(node, ast.Unary):
        values, error, is_int, bound = _value(node.operand, var, batch, rows)
        if node.op is ast.UnOp.NOT:
            if values.dtype != bool:
                raise _GiveUp
            return ~values, error, False, 0.0
        if values.dtype != np.float64:
            raise _GiveUp
        return -values, error, is_int, bound
    if isinstance(node, ast.Binary):
        return _binary(node, var, batch, rows)
    raise _GiveUp


_COMPARE: dict[ast.BinOp, Callable[[Any, Any], Any]] = {
    ast.BinOp.EQ: np.equal,
    ast.BinOp.NE: np.not_equal,
    ast.BinOp.LT: np.less,
    ast.BinOp.LE: np.less_equal,
    ast.BinOp.GT: np.greater,
    ast.BinOp.GE: np.greater_equal,
}


def _binary(node: ast.Binary, var: str, batch: EventBatch, rows: np.ndarray) -> Value:
    lv, le, li, lb = _value(node.left, var, batch, rows)
    if node.op.is_logical:
        rv, re, _, _ = _value(node.right, var, batch, rows)
        if lv.dtype != bool or rv.dtype != bool:
            raise _GiveUp
        if node.op is ast.BinOp.AND:  # the right side only counts where the left holds
            return lv & rv, le | (lv & re), False, 0.0
        return lv | rv, le | (~lv & re), False, 0.0
    rv, re, ri, rb = _value(node.right, var, batch, rows)
    error = le | re
    numeric = lv.dtype == np.float64 and rv.dtype == np.float64
    if node.op in _COMPARE:
        if node.op in (ast.BinOp.EQ, ast.BinOp.NE):
            if lv.dtype == bool or rv.dtype == bool:
                raise _GiveUp
            return np.asarray(_COMPARE[node.op](lv, rv), dtype=bool), error, False, 0.0
        if not numeric and not (lv.dtype == object and rv.dtype == object):
            raise _GiveUp  # ordering a number against a string: Python raises per event
        return np.asarray(_COMPARE[node.op](lv, rv), dtype=bool), error, False, 0.0
    if not numeric:
        raise _GiveUp
    with np.errstate(all="ignore"):
        if node.op in (ast.BinOp.ADD, ast.BinOp.SUB, ast.BinOp.MUL):
            bound = lb * rb if node.op is ast.BinOp.MUL else lb + rb
            if li and ri and bound > EXACT:
                raise _GiveUp  # Python's exact integers could differ from float64 here
            result = (
                lv * rv
                if node.op is ast.BinOp.MUL
                else lv + rv
                if (node.op is ast.BinOp.ADD)
                else lv - rv
            )
            return result, error, li and ri, bound
        zero = rv == 0
        if node.op is ast.BinOp.DIV:
            return lv / np.where(zero, 1, rv), error | zero, False, 0.0
        # MOD: numpy's remainder takes the divisor's sign, as Python's % does
        return np.remainder(lv, np.where(zero, 1, rv)), error | zero, li and ri, rb
