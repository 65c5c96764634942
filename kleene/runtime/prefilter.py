"""Vectorized pre-filtering of events (match-windows paper, section 4.2, Theorem 1).

An event that no state of the automaton can accept — its type matches no variable, or
it fails every single-event property of the states of its type — can never be selected.
Such events are found for a whole batch at once with numpy, so they never reach the
per-event code: under the skip-till strategies they are skipped, under strict and
partition contiguity they only break the runs of their partition.

The filter must never drop an event the exact evaluation would accept: the properties
come compiled to the expression IR and are evaluated by its columnar backend
(:mod:`kleene.compiler.columnar`), which computes exactly what the edge code computes or
gives up for the batch (every event of the state's type is then relevant).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from kleene.compiler.columnar import GiveUp, Raw, conjunction
from kleene.compiler.expr import EVENT, Expr, Load
from kleene.compiler.plan import Plan
from kleene.events import EventBatch


class Prefilter:
    """Which events of a batch some state could accept, and, given the window, which
    of those can lie in a match at all."""

    def __init__(self, plan: Plan) -> None:
        self.states = [(s.event_type, s.var, s.properties) for s in plan.states]
        self.by_type: dict[str, list[tuple[str, tuple[Expr, ...]]]] = {}
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
        self,
        batch: EventBatch,
        clean: set[str],
        window: float | None = None,
        accepts: list[np.ndarray] | None = None,
    ) -> np.ndarray:
        """Per event, whether some state may accept it. With ``window`` (the WITHIN in
        time units; only for a batch in time order, with no event before it still to
        come) also whether it lies within the window after some event the first state
        accepts and within the window before some event a last state accepts, as every
        event of a match does (SIGMOD 2008, section 3.2, step 5). Events in the first
        and last ``window`` of the batch are kept: their partners may lie in another."""
        if accepts is None:  # (given when the caller has them: :meth:`accepts`)
            accepts = self.accepts(batch, clean)
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

    def accepts(self, batch: EventBatch, clean: set[str]) -> list[np.ndarray]:
        """Per state (in plan order), which events it may accept: its type and its
        single-event properties (every event of the type where they cannot be
        evaluated column-wise)."""
        typed: dict[str, np.ndarray] = {}
        for etype, _, _ in self.states:
            if etype not in typed:
                typed[etype] = batch.type_mask([etype])
        return [
            self._accepts(batch, clean, typed[etype], etype, props)
            for etype, _, props in self.states
        ]

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
        codes = self.key_codes(batch, rows)
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

    def key_codes(self, batch: EventBatch, rows: np.ndarray) -> np.ndarray | None:
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
        properties: tuple[Expr, ...],
    ) -> np.ndarray:
        """Which events one state may accept (its type and single-event properties)."""
        if not properties or etype in self.always or etype not in clean or not typed.any():
            return typed
        rows = np.flatnonzero(typed)
        try:
            accepted = _conjunction(properties, batch, rows)
        except GiveUp:
            return typed
        out = np.zeros(len(batch), dtype=bool)
        out[rows[accepted]] = True
        return out


def _any(masks: list[np.ndarray]) -> np.ndarray:
    out = masks[0].copy()
    for m in masks[1:]:
        out |= m
    return out


def _conjunction(properties: Sequence[Expr], batch: EventBatch, rows: np.ndarray) -> np.ndarray:
    def resolve(load: Load) -> Raw:
        if load.source != EVENT:
            raise GiveUp
        return _column(load.key, batch, rows)

    return conjunction(properties, resolve, len(rows), python=batch.table is None)


def _column(attr: str, batch: EventBatch, rows: np.ndarray) -> Raw:
    """The raw values of an attribute (or of the event's type, time or id) at ``rows``."""
    if attr == "timestamp" and batch.time_kind is not None:
        return batch.times_array()[rows]
    if attr == "timestamp":  # some time is missing or unreadable: read them one by one
        return [batch.times[i] for i in rows.tolist()]
    if attr == "type":
        return batch.take(batch.fields.type_field, rows)
    if attr == "id":
        return batch.ids_at(rows)
    if batch.kind(attr) is not None:
        values = batch.array(attr)
        return values if len(rows) == len(values) else values[rows]
    if batch.table is not None and attr in batch.table.column_names:
        col = batch.table.column(attr).take(rows)  # other types may lack it
        if not col.null_count and (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)):
            return col.to_numpy()
    return batch.take(attr, rows)
