"""The events one evaluation sees, sorted by partition (SIGMOD 2008, section 3.1).

A frame is the carried tail of each partition (events of runs still alive after the
previous batch, as event tuples) followed by a new batch, restricted to the events that
are in some partition and stably sorted by partition, so that each partition is one
contiguous block of rows in stream order. Under contiguity a run's next element is the
next row of its block. Values are read column-wise, and only for the rows asked for.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from kleene.compiler.codegen import FIXED_FIELDS
from kleene.compiler.plan import Plan
from kleene.events import EVENT_TIME, EVENT_TYPE, EventBatch

Carried = tuple[int, tuple[Any, ...]]  # (stream position, event tuple)


class Frame:
    """Carried events and a batch as one partition-sorted sequence of rows."""

    def __init__(
        self,
        plan: Plan,
        carried: list[Carried],
        batch: EventBatch | None = None,
        base: int = 0,
    ) -> None:
        self.plan = plan
        self.carried = carried
        self.batch = batch
        self.base = base
        self.c = len(carried)
        total = self.c + (len(batch) if batch is not None else 0)
        self._types: dict[str, np.ndarray] = {}
        self._numbers: dict[str, np.ndarray] = {}  # numeric batch columns without nulls
        self.key_codes: np.ndarray | None = None
        if not plan.routed:
            src = np.arange(total)
            seg = np.zeros(total, dtype=np.int64)
        else:
            codes = self._codes(np.arange(total), routing=True)
            src = np.flatnonzero(codes >= 0)
            keys = codes[src]
            if len(keys) and keys.max() < 1 << 15:
                keys = keys.astype(np.int16)  # a stable sort of small keys is a radix sort
            order = np.argsort(keys, kind="stable")
            src, seg = src[order], codes[src][order]
        self.src = src
        self.seg = seg
        self.n = n = len(src)
        starts = np.ones(n, dtype=bool)
        starts[1:] = seg[1:] != seg[:-1]
        self.seg_start = starts  # row begins its partition's block
        bounds = np.append(np.flatnonzero(starts), n)
        self.seg_end = np.repeat(bounds[1:] - 1, np.diff(bounds))  # last row of the block
        self.times = self._times(src)
        self.is_new = src >= self.c
        self.pos = base + src - self.c  # stream positions of the rows
        if self.c:
            old = np.asarray([pos for pos, _ in carried], dtype=np.int64)
            self.pos[~self.is_new] = old[src[~self.is_new]]

    # --- columns --------------------------------------------------------------------

    def _split(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not self.c:
            return rows[:0], rows
        return rows[rows < self.c], rows[rows >= self.c] - self.c

    def _field(self, attr: str) -> int:
        return FIXED_FIELDS[attr] if attr in FIXED_FIELDS else self.plan.attr_index(attr)

    def _times(self, src: np.ndarray) -> np.ndarray:
        """Times at combined indices, in the order given."""
        parts = []
        if self.c:
            parts.append(np.asarray([e[EVENT_TIME] for _, e in self.carried]))
        if self.batch is not None and len(self.batch):
            parts.append(self.batch.times_array())
        if not parts:
            return np.zeros(0)
        whole = parts[0] if len(parts) == 1 else np.concatenate(parts)
        return whole[src]

    def raw(self, attr: str, src: np.ndarray) -> np.ndarray | list[Any]:
        """Values of an attribute at combined indices (carried first, then the batch,
        in the order given): numpy where the batch is columnar, else Python values."""
        old, new = self._split(src)
        batch = self.batch
        if not len(old) and batch is not None and batch.table is not None:
            if attr == "timestamp":
                return batch.times_array()[new]
            if attr in batch.table.column_names and attr not in ("type", "id"):
                col = batch.table.column(attr)
                if not col.null_count and (
                    pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
                ):
                    if attr not in self._numbers:
                        self._numbers[attr] = col.to_numpy()
                    return self._numbers[attr][new]
                whole = len(new) == len(batch) and not self.c  # every row, in order
                arr = (col if whole else col.take(new)).to_numpy(zero_copy_only=False)
                return arr.tolist() if arr.dtype == object else arr
        return self.values(attr, src)

    def values(self, attr: str, src: np.ndarray) -> list[Any]:
        """Python values of an attribute at combined indices."""
        old, new = self._split(src)
        if not len(old):
            return self._batch_values(attr, new) if len(new) else []
        out: list[Any] = [None] * len(src)
        is_old = (src < self.c).tolist()
        if len(old):
            k = self._field(attr)
            olds = iter([self.carried[i][1][k] for i in old.tolist()])
        if len(new):
            news = iter(self._batch_values(attr, new))
        for i, o in enumerate(is_old):
            out[i] = next(olds) if o else next(news)
        return out

    def _batch_values(self, attr: str, rows: np.ndarray) -> list[Any]:
        batch = self.batch
        assert batch is not None
        if attr == "timestamp":
            return batch.times_at(rows)
        if attr == "id":
            return batch.ids_at(rows)
        if attr == "type":
            return batch.take(batch.fields.type_field, rows)
        return batch.take(attr, rows)

    def tuples(self, src: np.ndarray) -> list[tuple[Any, ...]]:
        """Event tuples (type, time, id, *attributes) at combined indices."""
        cols = [self.values(a, src) for a in ("type", "timestamp", "id", *self.plan.attributes)]
        return list(zip(*cols, strict=True))

    def type_mask(self, event_type: str) -> np.ndarray:
        """Which rows have the type."""
        if event_type not in self._types:
            self._types[event_type] = self._type_at(self.src, event_type)
        return self._types[event_type]

    def _type_at(self, src: np.ndarray, event_type: str) -> np.ndarray:
        mask = np.zeros(self.c + (len(self.batch) if self.batch is not None else 0), dtype=bool)
        if self.c:
            mask[: self.c] = [e[EVENT_TYPE] == event_type for _, e in self.carried]
        if self.batch is not None and len(self.batch):
            mask[self.c :] = self.batch.type_mask([event_type])
        return mask[src]

    # --- partitions -------------------------------------------------------------------

    def _codes(self, src: np.ndarray, routing: bool) -> np.ndarray:
        """Partition codes per combined index (-1: in no partition). ``routing`` follows
        the matcher: events of other types use the common key; else only the keyed
        types of the pattern get a code."""
        import pandas as pd  # factorize takes mixed values; imported only where needed

        plan = self.plan
        assert plan.key is not None
        by_type = plan.key.by_type
        common = plan.key.common
        n_classes = len(plan.key.attrs)
        keyed = np.zeros(len(src), dtype=bool)
        typed: list[tuple[np.ndarray, tuple[str, ...]]] = []
        for etype in plan.key_index:
            mask = self._type_at(src, etype)
            keyed |= mask
            typed.append((mask, by_type[etype]))
        uniform = common and all(attrs == common for _, attrs in typed)
        codes = np.zeros(len(src), dtype=np.int64)
        for k in range(n_classes):
            fast = (
                uniform
                and routing
                and len(src) == self.c + len(self.batch or ())
                and (self._arrow_codes(common[k]))
            )
            if fast:
                part, size = fast
                codes = np.where((part < 0) | (codes < 0), -1, codes * (size + 1) + part)
                continue
            if uniform and routing:
                raw = self.raw(common[k], src)
                col = np.asarray(raw, dtype=object) if isinstance(raw, list) else raw
            else:
                col = np.full(len(src), None, dtype=object)
                for mask, attrs in typed:
                    rows = np.flatnonzero(mask)
                    col[rows] = self.values(attrs[k], src[rows]) if len(rows) else []
                rest = np.flatnonzero(~keyed)
                if routing and common and len(rest):
                    col[rest] = self.values(common[k], src[rest])
            part, uniques = pd.factorize(col)
            codes = np.where((part < 0) | (codes < 0), -1, codes * (len(uniques) + 1) + part)
        if n_classes > 1:
            ok = codes >= 0
            codes[ok] = pd.factorize(codes[ok])[0]
        return codes

    def _arrow_codes(self, attr: str) -> tuple[np.ndarray, int] | None:
        """Codes of a string or integer key column over carried events and the whole
        batch, by arrow's dictionary encoding (equality is Python's for these types)."""
        batch = self.batch
        if batch is None or batch.table is None or attr not in batch.table.column_names:
            return None
        col = batch.table.column(attr)
        if not (pa.types.is_integer(col.type) or pa.types.is_string(col.type)):
            return None
        encoded = col.combine_chunks().dictionary_encode()
        found = encoded.indices.fill_null(-1).to_numpy().astype(np.int64)
        index = {v: i for i, v in enumerate(encoded.dictionary.to_pylist())}
        carried = []
        for _, e in self.carried:
            v = e[self._field(attr)]
            if v is not None and v not in index:
                index[v] = len(index)
            carried.append(-1 if v is None else index[v])
        return np.concatenate([np.asarray(carried, dtype=np.int64), found]), len(index)

    def adjacent_key(self) -> np.ndarray:
        """Rows whose key equals the previous row's key (strict contiguity with a key)."""
        if self.key_codes is None:
            self.key_codes = self._codes(self.src, routing=False)
        kc = self.key_codes
        same = np.zeros(self.n, dtype=bool)
        same[1:] = (kc[1:] == kc[:-1]) & (kc[1:] >= 0)
        return same

    def partition(self, row: int) -> tuple[Any, ...]:
        """The partition value tuple of a row of a pattern type."""
        plan = self.plan
        if not plan.routed:
            return ()
        src = self.src[row : row + 1]
        etype = self.values("type", src)[0]
        attrs = plan.key.by_type[etype] if plan.key is not None else ()
        return tuple(self.values(a, src)[0] for a in attrs[: plan.partition_width])
