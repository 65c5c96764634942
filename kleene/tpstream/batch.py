"""Column-wise evaluation of a TPStream batch: every DEFINE predicate over a whole clean
arrow batch at once (EDBT 2018, section 4.3's situation definitions), through the
columnar backend of the expression IR (:mod:`kleene.compiler.columnar`), so the
deriver can find each partition's runs from the masks' differences
(:meth:`~kleene.tpstream.deriver.Deriver.push_columns`).

A predicate holds where it is true and not an error, as the generated scalar function
says (:attr:`~kleene.tpstream.plan.SymbolPlan.holds`). Where the columnar backend
cannot be exact for a batch (:class:`~kleene.compiler.columnar.GiveUp`), that function
is applied to each row instead: one semantics either way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from kleene.compiler import columnar
from kleene.compiler.expr import Load
from kleene.events import EventBatch
from kleene.tpstream.plan import SymbolPlan, TemporalPlan


class BatchColumns:
    """The attribute values of one batch, read once: numpy-ready for the masks, Python
    values for the aggregates (``values(i)``, attribute i of the plan)."""

    def __init__(self, plan: TemporalPlan, batch: EventBatch, times: np.ndarray) -> None:
        self.plan = plan
        self.batch = batch
        self.times = times
        self._values: dict[int, list[Any]] = {}

    def raw(self, attr: str) -> Any:
        if attr == "timestamp":
            return self.times
        assert self.batch.table is not None
        return self.batch.table.column(attr)

    def values(self, i: int) -> list[Any]:
        found = self._values.get(i)
        if found is None:
            attr = self.plan.attributes[i]
            found = self.times.tolist() if attr == "timestamp" else self.batch.column(attr)
            self._values[i] = found
        return found

    def masks(self) -> list[np.ndarray]:
        """Per symbol, per row of the batch: whether its predicate holds."""
        return [self._mask(s) for s in self.plan.symbols]

    def _mask(self, symbol: SymbolPlan) -> np.ndarray:
        n = len(self.batch)
        if symbol.condition is not None:
            try:
                truth, error = columnar.holds(symbol.condition, self._resolve, n)
                return truth & ~error
            except columnar.GiveUp:
                pass
        columns = [self.values(i) for i in range(len(self.plan.attributes))]
        rows = zip(*columns, strict=True) if columns else [()] * n
        return np.fromiter(map(symbol.holds, rows), dtype=bool, count=n)

    def _resolve(self, load: Load) -> Any:
        return self.raw(load.key)
