"""Filtering by Theorem 1 and the events' bit vectors (match-windows paper, sections
4.2 and 5).

Every event of a match satisfies all properties Θ^p_v of the variable it is bound to
(Theorem 1), so an event that satisfies the properties of no variable can be dropped.
What each event satisfies is kept as a bit vector ``ē`` of length m, one bit per
variable in pattern order; it serves the filter (``ē ≠ 0``) and the summary statistics
(:mod:`kleene.eventsets.summary`). Variable ``v_1`` is the leftmost bit, as in Example 13
(``ē1 = 100`` for an event that satisfies the properties of ``c`` only).

Over a batch the properties are evaluated column-wise by the IR's columnar backend
(:mod:`kleene.compiler.columnar`, as ``runtime/prefilter.py`` does for SASE+); where it
gives up (mixed kinds, nulls it cannot place) each event is tested by the generated
per-event code, so both paths follow the IR's rules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from kleene.compiler.columnar import GiveUp, Raw, Value, conjunction
from kleene.compiler.expr import Compare, Load
from kleene.compiler.expr import loads as loads_of
from kleene.eventsets.compile import properties_test
from kleene.eventsets.model import SesPattern
from kleene.eventsets.sources import RowSource, Source

Event = Mapping[str, Any]


def bit_string(bits: int, m: int) -> str:
    """A bit vector as the paper writes it, ``v_1`` first."""
    return format(bits, f"0{m}b") if m else ""


class PropertyBits:
    """Per event, the bit vector of the variables whose properties it satisfies."""

    def __init__(self, pattern: SesPattern) -> None:
        variables = pattern.variables
        self.m = len(variables)
        #: bit of variable i (v_1 is the highest)
        self.bits = tuple(1 << (self.m - 1 - i) for i in range(self.m))
        self.properties = tuple(pattern.properties(v.name) for v in variables)
        self._tests: tuple[Callable[[Event], bool], ...] = tuple(
            properties_test(props) for props in self.properties
        )

    def of(self, event: Event) -> int:
        """``ē`` for one event."""
        out = 0
        for bit, test in zip(self.bits, self._tests, strict=True):
            if test(event):
                out |= bit
        return out

    def of_batch(self, events: Sequence[Event]) -> list[int]:
        """``ē`` for each event of a batch, column-wise where the IR's columnar backend
        is exact and event by event where it is not."""
        return self.array(events).tolist()

    def array(self, events: Sequence[Event] | Source) -> np.ndarray:
        """:meth:`of_batch` as an int64 array, of dict rows or of a column source (an
        Arrow table's columns, :mod:`kleene.eventsets.sources`). Each column is read
        once and each distinct property evaluated once (variables often share them, as
        the type)."""
        source = RowSource(events) if isinstance(events, Sequence) else events
        n = source.n
        total = np.zeros(n, dtype=np.int64)
        columns: dict[str, Raw] = {}
        loads: dict[Load, Value] = {}
        masks: dict[Compare, np.ndarray | None] = {}

        def resolve(load: Load) -> Raw:
            key = load.key
            if key not in columns:
                columns[key] = source.column(key)
            return columns[key]

        def mask(comparison: Compare) -> np.ndarray | None:
            if comparison not in masks:
                try:
                    masks[comparison] = _by_codes(comparison, source) if n else None
                    if masks[comparison] is None:
                        masks[comparison] = conjunction([comparison], resolve, n, cache=loads)
                except GiveUp:
                    masks[comparison] = None
            return masks[comparison]

        for bit, props, test in zip(self.bits, self.properties, self._tests, strict=True):
            holds = np.ones(n, dtype=bool)
            for c in props:
                one = mask(c.comparison)
                if one is None:  # the columnar backend gives up: the row evaluation
                    rows = source.all_rows()
                    holds = np.fromiter((test(e) for e in rows), dtype=bool, count=n)
                    break
                holds &= one
            total[holds] |= bit
        return total


def _by_codes(comparison: Compare, source: Source) -> np.ndarray | None:
    """A comparison reading one string column, evaluated by the columnar backend on the
    column's distinct values and spread to the events by their codes (None where the
    source has no codes for it)."""
    keys = {load.key for load in loads_of(comparison)}
    coded = source.codes(keys.pop()) if len(keys) == 1 else None
    if coded is None:
        return None
    codes, distinct = coded
    return conjunction([comparison], lambda _: distinct, len(distinct))[codes]
