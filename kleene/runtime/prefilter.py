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
import pyarrow as pa

from kleene.compiler.plan import Plan
from kleene.events import EventBatch
from kleene.lang import ast

EXACT = 2.0**53


class GiveUp(Exception):
    """The batch cannot be filtered exactly."""


_GiveUp = GiveUp

# A vectorized value: (values, error mask, is integer, bound on |value| when integer)
Value = tuple[np.ndarray, np.ndarray, bool, float]
# How an attribute reference reads its values (raises GiveUp when it cannot)
Resolver = Callable[[ast.AttrRef], Value]


class Prefilter:
    """Which events of a batch some state could accept, and, given the window, which
    of those can lie in a match at all."""

    def __init__(self, plan: Plan) -> None:
        self.states = [(s.event_type, s.var, s.properties) for s in plan.states]
        self.by_type: dict[str, list[tuple[str, tuple[ast.Expr, ...]]]] = {}
        for state in plan.states:
            self.by_type.setdefault(state.event_type, []).append((state.var, state.properties))
        self.always = {t for n in plan.negations for t in n.event_types}  # negation candidates
        last = plan.states[-1].component
        self.first = [0]  # a match starts at the first state's event
        self.last = [s.index for s in plan.states if s.component == last]  # and ends here
        self.window = plan.window
        key = plan.key
        # partition-aware narrowing: events of pattern types carry the key attributes
        self.key_attrs: dict[str, tuple[str, ...]] = (
            dict(key.by_type) if plan.routed and key is not None else {}
        )
        # worth running only if some type's states all have properties to test, or if
        # the window can narrow the events down
        self.useful = self.window is not None or any(
            etype not in self.always and all(props for _, props in states)
            for etype, states in self.by_type.items()
        )

    def relevant(
        self, batch: EventBatch, clean: set[str], window: float | None = None
    ) -> np.ndarray:
        """Per event, whether some state may accept it. With ``window`` (the WITHIN in
        time units; only for a batch in time order, with no event before it still to
        come) also whether it lies within the window after some event the first state
        accepts and within the window before some event a last state accepts, as every
        event of a match does (SIGMOD 2008, section 3.2, step 5). Events in the first
        and last ``window`` of the batch are kept: their partners may lie in another."""
        typed: dict[str, np.ndarray] = {}
        for etype, _, _ in self.states:
            if etype not in typed:
                typed[etype] = batch.type_mask([etype])
        accepts = [
            self._accepts(batch, clean, typed[etype], etype, var, props)
            for etype, var, props in self.states
        ]
        mask = np.zeros(len(batch), dtype=bool)
        for accepted in accepts:
            mask |= accepted
        if window is not None and len(batch):
            times = batch.times_array()
            is_start = _any([accepts[i] for i in self.first])
            is_end = _any([accepts[i] for i in self.last])
            rows = np.flatnonzero(mask)  # only these need the test
            t = times[rows]
            starts, ends = times[is_start], times[is_end]
            near_start = t <= times[0] + window
            if len(starts):
                after = np.searchsorted(starts, t, side="right") - 1
                near_start |= (after >= 0) & (t - starts[np.maximum(after, 0)] <= window)
            near_end = t + window >= times[-1]
            if len(ends):
                before = np.minimum(np.searchsorted(ends, t, side="left"), len(ends) - 1)
                near_end |= (ends[before] >= t) & (ends[before] - t <= window)
            mask[rows[~(near_start & near_end)]] = False
            if self.key_attrs:
                mask &= self._same_partition(batch, times, mask, is_start, is_end, window)
        if self.always:
            mask |= batch.type_mask(self.always)
        return mask

    def _same_partition(
        self,
        batch: EventBatch,
        times: np.ndarray,
        mask: np.ndarray,
        is_start: np.ndarray,
        is_end: np.ndarray,
        window: float,
    ) -> np.ndarray:
        """The window test again, with the start and end events of the event's own
        partition only (runs see only their partition's events)."""
        keep = np.ones(len(batch), dtype=bool)
        rows = np.flatnonzero(mask | is_start | is_end)
        codes = self._key_codes(batch, rows)
        if codes is None or not len(rows):
            return keep
        order = np.lexsort((rows, codes))  # by partition, then stream order
        r, c = rows[order], codes[order]
        t = times[r]
        k = np.arange(len(r))
        last = np.maximum(np.maximum.accumulate(np.where(is_start[r], k, -1)), 0)
        near_start = is_start[r[last]] & (c[last] == c) & (t - t[last] <= window)
        nxt = np.minimum.accumulate(np.where(is_end[r], k, len(r) - 1)[::-1])[::-1]
        near_end = is_end[r[nxt]] & (c[nxt] == c) & (t[nxt] - t <= window)
        ok = (near_start | (t <= times[0] + window)) & (near_end | (t + window >= times[-1]))
        keep[r[~ok & (c >= 0)]] = False
        return keep

    def _key_codes(self, batch: EventBatch, rows: np.ndarray) -> np.ndarray | None:
        """Partition codes of the given rows, equal where the matcher's partition
        tuples are equal, or None."""
        shared = set(self.key_attrs.values())
        if len(shared) == 1 and batch.table is not None:
            (attrs,) = shared
            if len(attrs) == 1 and attrs[0] in batch.table.column_names:
                col = batch.table.column(attrs[0]).take(rows).combine_chunks()
                if not col.null_count and (
                    pa.types.is_integer(col.type) or pa.types.is_string(col.type)
                ):  # arrow's equality is Python's for these
                    return col.dictionary_encode().indices.to_numpy().astype(np.int64)
        types = batch.take(batch.fields.type_field, rows)
        columns: dict[str, list[Any]] = {}
        keys: list[tuple[Any, ...]] = []
        for j, etype in enumerate(types):
            if etype not in self.key_attrs:
                return None
            attrs = self.key_attrs[etype]
            for a in attrs:
                if a not in columns:
                    columns[a] = batch.take(a, rows)
            keys.append(tuple(columns[a][j] for a in attrs))
        index: dict[tuple[Any, ...], int] = {}
        return np.asarray([index.setdefault(k, len(index)) for k in keys], dtype=np.int64)

    def _accepts(
        self,
        batch: EventBatch,
        clean: set[str],
        typed: np.ndarray,
        etype: str,
        var: str,
        properties: tuple[ast.Expr, ...],
    ) -> np.ndarray:
        """Which events one state may accept (its type and single-event properties)."""
        if not properties or etype in self.always or etype not in clean or not typed.any():
            return typed
        rows = np.flatnonzero(typed)
        try:
            accepted = _conjunction(properties, var, batch, rows)
        except _GiveUp:
            return typed
        out = np.zeros(len(batch), dtype=bool)
        out[rows[accepted]] = True
        return out


def _any(masks: list[np.ndarray]) -> np.ndarray:
    out = masks[0].copy()
    for m in masks[1:]:
        out |= m
    return out


def _conjunction(
    properties: Sequence[ast.Expr], var: str, batch: EventBatch, rows: np.ndarray
) -> np.ndarray:
    def resolve(ref: ast.AttrRef) -> Value:
        if ref.var != var:
            raise _GiveUp
        return _column(ref.attr, batch, rows)

    return conjunction(properties, resolve, len(rows))


def conjunction(exprs: Sequence[ast.Expr], resolve: Resolver, n: int) -> np.ndarray:
    """Where every expression holds (errors are false), exactly as Python would say."""
    ok = np.ones(n, dtype=bool)
    for expr in exprs:
        values, error, _, _ = _value(expr, resolve, n)
        if values.dtype != bool:
            raise _GiveUp
        ok &= values & ~error  # 0-d values (constants) broadcast
    return ok


def _column(attr: str, batch: EventBatch, rows: np.ndarray) -> Value:
    python = batch.table is None  # numbers may be Python ints of any size
    if attr == "timestamp" and batch.time_kind is not None:
        return as_value(batch.times_array()[rows], python)
    if attr == "timestamp":  # some time is missing or unreadable: read them one by one
        return as_value([batch.times[i] for i in rows.tolist()])
    if attr == "type":
        return as_value(batch.take(batch.fields.type_field, rows))
    if attr == "id":
        return as_value(batch.ids_at(rows))
    if batch.kind(attr) is not None:
        values = batch.array(attr)
        return as_value(values if len(rows) == len(values) else values[rows], python)
    if batch.table is not None and attr in batch.table.column_names:
        col = batch.table.column(attr).take(rows)  # other types may lack it
        if not col.null_count and (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
            return as_value(col.to_numpy(), False)
    return as_value(batch.take(attr, rows))


def as_value(values: np.ndarray | list[Any], python: bool = True) -> Value:
    """Raw values (numpy, or Python values in a list) as an exact vectorized value;
    ``python`` says numbers may be Python ints of any size."""
    none = np.zeros((), dtype=bool)  # no errors (broadcasts)
    if isinstance(values, list):
        kinds = set(map(type, values))
        if kinds <= {str}:
            return np.asarray(values, dtype=object), none, False, 0.0
        if not kinds <= {int, float}:
            raise _GiveUp
        if int in kinds and any(abs(v) > EXACT for v in values if type(v) is int):
            raise _GiveUp
        values = np.asarray(values, dtype=np.float64 if float in kinds else np.int64)
    if values.dtype == object or values.dtype.kind in "US":
        return values.astype(object), none, False, 0.0
    if values.dtype.kind not in "iuf":
        raise _GiveUp  # booleans are not numbers; datetimes are not read here
    if values.dtype.kind in "iu" or python:
        # integers (or Python numbers of unknown mix): exact while within 2**53
        bound = float(np.max(np.abs(values), initial=0))
        if bound > EXACT:
            raise _GiveUp
        return values.astype(np.float64), none, True, bound
    if values.dtype.kind == "f":
        return values.astype(np.float64), none, False, 0.0
    raise _GiveUp


def _literal(value: Any, n: int) -> Value:
    """A constant, as 0-d arrays that broadcast against the columns."""
    none = np.zeros((), dtype=bool)
    if isinstance(value, bool):
        return np.asarray(value), none, False, 0.0
    if isinstance(value, int):
        if abs(value) > EXACT:
            raise _GiveUp
        return np.asarray(float(value)), none, True, float(abs(value))
    if isinstance(value, float):
        return np.asarray(value), none, False, 0.0
    return np.asarray(value, dtype=object), none, False, 0.0


def _value(node: ast.Expr, resolve: Resolver, n: int) -> Value:
    if isinstance(node, ast.Literal):
        return _literal(node.value, n)
    if isinstance(node, ast.AttrRef):
        return resolve(node)
    if isinstance(node, ast.Unary):
        values, error, is_int, bound = _value(node.operand, resolve, n)
        if node.op is ast.UnOp.NOT:
            if values.dtype != bool:
                raise _GiveUp
            return ~values, error, False, 0.0
        if values.dtype != np.float64:
            raise _GiveUp
        return -values, error, is_int, bound
    if isinstance(node, ast.Binary):
        return _binary(node, resolve, n)
    raise _GiveUp


_COMPARE: dict[ast.BinOp, Callable[[Any, Any], Any]] = {
    ast.BinOp.EQ: np.equal,
    ast.BinOp.NE: np.not_equal,
    ast.BinOp.LT: np.less,
    ast.BinOp.LE: np.less_equal,
    ast.BinOp.GT: np.greater,
    ast.BinOp.GE: np.greater_equal,
}


def _binary(node: ast.Binary, resolve: Resolver, n: int) -> Value:
    lv, le, li, lb = _value(node.left, resolve, n)
    if node.op.is_logical:
        rv, re, _, _ = _value(node.right, resolve, n)
        if lv.dtype != bool or rv.dtype != bool:
            raise _GiveUp
        if node.op is ast.BinOp.AND:  # the right side only counts where the left holds
            return lv & rv, le | (lv & re), False, 0.0
        return lv | rv, le | (~lv & re), False, 0.0
    rv, re, ri, rb = _value(node.right, resolve, n)
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
