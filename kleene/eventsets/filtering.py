"""Filtering by Theorem 1 and the events' bit vectors (match-windows paper, sections
4.2 and 5).

Every event of a match satisfies all properties Θ^p_v of the variable it is bound to
(Theorem 1), so an event that satisfies the properties of no variable can be dropped.
What each event satisfies is kept as a bit vector ``ē`` of length m, one bit per
variable in pattern order; it serves the filter (``ē ≠ 0``), the summary statistics
(:mod:`kleene.eventsets.summary`) and, over a batch, the variables algorithm A may bind
each event to (``AutomatonMatcher.take_fits``). Variable ``v_1`` is the leftmost bit,
as in Example 13 (``ē1 = 100`` for an event that satisfies the properties of ``c``
only).

Over a batch the properties are evaluated column-wise. Those reading one string column
of a table (without nulls) are evaluated once per distinct value into a lookup table
indexed by the events' codes: by the generated per-event code up to :data:`ROW_TESTS`
(distinct value, property) pairs, else by the IR's columnar backend. The others go
through the columnar backend over whole columns (:mod:`kleene.compiler.columnar`, as
``runtime/prefilter.py`` does for SASE+); where it gives up (mixed kinds, nulls it
cannot place) each event is tested by the generated per-event code, so every path
follows the IR's rules.
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
        self._plan = _Plan(self.bits, self.properties)

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
        the type); a property reading one string column of a table is evaluated on its
        distinct values only (:meth:`_Plan.coded`)."""
        source = RowSource(events) if isinstance(events, Sequence) else events
        n = source.n
        plan = self._plan
        total = np.full(n, plan.everyone, dtype=np.int64)
        if not n:
            return total[:0]
        columns: dict[str, Raw] = {}
        loads: dict[Load, Value] = {}

        def resolve(load: Load) -> Raw:
            key = load.key
            if key not in columns:
                columns[key] = source.column(key)
            return columns[key]

        rest = list(plan.other)  # the properties evaluated over the whole column
        for key, comparisons in plan.by_column.items():
            coded = plan.coded(key, comparisons, source)
            if coded is None:
                rest += comparisons
            else:
                total &= coded
        failed = 0  # the variables a property of which the backend gives up on
        for comparison, bits in rest:
            try:
                holds = conjunction([comparison], resolve, n, cache=loads)
            except GiveUp:
                failed |= bits
                continue
            total[~holds] &= ~bits
        if failed:  # the row evaluation of each such variable's properties
            rows = source.all_rows()
            for bit, test in zip(self.bits, self._tests, strict=True):
                if failed & bit:
                    holds = np.fromiter((test(e) for e in rows), dtype=bool, count=n)
                    total[~holds] &= ~bit
        return total


#: up to this many (distinct value, property) pairs of a column, the properties are
#: tested by the generated per-event code on each distinct value (a call each) rather
#: than by the columnar backend (a few dozen numpy calls each)
ROW_TESTS = 256


class _Plan:
    """The distinct properties of a pattern, each with the bits of the variables that
    have it (a variable's bit holds where all its properties do), grouped by the one
    column they read (``by_column``) or not (``other``: constants, several columns)."""

    def __init__(self, bits: tuple[int, ...], properties: tuple[Any, ...]) -> None:
        shared: dict[Compare, int] = {}
        tests: dict[Compare, Callable[[Event], bool]] = {}
        for bit, props in zip(bits, properties, strict=True):
            for c in props:
                shared[c.comparison] = shared.get(c.comparison, 0) | bit
                if c.comparison not in tests:
                    tests[c.comparison] = properties_test((c,))
        self.everyone = sum(bits)
        self.by_column: dict[str, list[tuple[Compare, int]]] = {}
        self.other: list[tuple[Compare, int]] = []
        self.tests = tests
        for comparison, bit in shared.items():
            keys = {load.key for load in loads_of(comparison)}
            if len(keys) == 1:
                self.by_column.setdefault(keys.pop(), []).append((comparison, bit))
            else:
                self.other.append((comparison, bit))

    def coded(
        self, key: str, comparisons: list[tuple[Compare, int]], source: Source
    ) -> np.ndarray | None:
        """Per event, the bits of the variables whose properties on column ``key`` hold,
        with the others' bits set: the properties are evaluated on the column's
        distinct values (by the generated per-event code where they are few, else by
        the columnar backend) and spread by the events' codes (None where the source
        has no codes for the column or the backend gives up)."""
        coded = source.codes(key)
        if coded is None:
            return None
        codes, distinct = coded
        if len(distinct) * len(comparisons) <= ROW_TESTS:
            rows = [{key: value} for value in distinct.to_pylist()]
            ones = [self.everyone] * len(rows)
            for comparison, bits in comparisons:
                test = self.tests[comparison]
                ones = [b if test(row) else b & ~bits for b, row in zip(ones, rows, strict=True)]
            return np.array(ones, dtype=np.int64)[codes]
        table = np.full(len(distinct), self.everyone, dtype=np.int64)
        cache: dict[Load, Value] = {}
        try:
            for comparison, bits in comparisons:
                holds = conjunction([comparison], lambda _: distinct, len(distinct), cache=cache)
                table[~holds] &= ~bits
        except GiveUp:
            return None
        return table[codes]
