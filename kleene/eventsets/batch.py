"""Column-wise pre-processing of a finite batch (match-windows paper, section 4,
Algorithm 1, computed over the whole batch at once).

Algorithm 1 reads one event at a time. Over a finite input every window is completed
(by a later event or by the end-of-stream loop), so the same windows can be computed
with numpy for the whole batch:

* *filtering* (Theorem 1): the mask of events whose bit vector ``ē`` is not zero (the
  bit vectors come from the IR's columnar backend, :meth:`PropertyBits.array`);
* *partitioning* (Definition 6): each kept event's key of the partitioning attributes
  is factorized into a code, and the kept events are ordered by code, stably (time
  order within a partition);
* *match windows* (Definition 3): the window of the event at ``i`` ends before the
  first event of its partition more than τ later, found by ``searchsorted`` on
  (code, time rank);
* *necessary match conditions* (Theorem 2) per window: condition 4 from the window's
  length, 5 from its first bit vector, 6 from the OR of the window's bit vectors
  (``np.bitwise_or.reduceat``; per-group prefix sums where the windows are long in
  total) and 7 from the earliest event of each variable of ``B_i`` and the latest of
  each variable of ``B_{i+1}`` in the window (strictly earlier, by time).

The windows are those the per-event path builds, event for event. The conditions are
Theorem 2's, tested exactly on each window; the per-event path tests them through the
incremental summary statistics (Definition 5), a looser necessary test. Both pass every
window that holds a match starting at its first event, so A finds the same matches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kleene.errors import KleeneError
from kleene.eventsets.model import SesPattern, Time
from kleene.eventsets.sources import NotColumnar, Source

__all__ = ["Conditions", "NotColumnar", "Windows", "windows"]


@dataclass(frozen=True)
class Windows:
    """The match windows of a batch. ``order`` holds the batch indices of the kept
    events, partition by partition and in time order within each; the window of
    ``order[i]`` is ``order[i:ends[i]]``; ``candidates`` are the ``i`` whose window A
    is called on; ``partitions`` counts the partitions."""

    order: np.ndarray
    ends: np.ndarray
    candidates: np.ndarray
    partitions: int


def times_of(source: Source, positions: Sequence[int]) -> np.ndarray:
    """The events' times as a number array, checked to be in time order (KleeneError
    naming the first event out of order, as the per-event path does)."""
    times = source.times()
    if times.dtype.kind not in "iuf" or times.ndim != 1:
        raise NotColumnar
    if times.dtype.kind == "f" and not (np.abs(times) <= 2.0**53).all():
        raise NotColumnar  # NaN, or big ints a float64 array may have rounded
    late = np.flatnonzero(times[1:] < times[:-1])
    if len(late):
        j = int(late[0]) + 1
        raise KleeneError(
            f"event {positions[j]} at {source.time_at(j)!r} is earlier than the one before "
            "it: event-set matching reads events in time order (sort them first)"
        )
    return times


def partition_codes(
    source: Source, kept: np.ndarray, attributes: tuple[str, ...]
) -> tuple[np.ndarray, np.ndarray, int]:
    """The kept events (batch indices) whose key is usable and each one's partition
    code, numbered by first appearance; and the number of partitions."""
    codes: dict[tuple[Any, ...], int] = {}
    index, code = [], []
    at = kept.tolist()
    for i, key in zip(at, source.keys(at, attributes), strict=True):
        if key is not None:  # a missing or null key value fails the equalities
            index.append(i)
            code.append(codes.setdefault(key, len(codes)))
    return np.asarray(index, dtype=np.int64), np.asarray(code, dtype=np.int64), len(codes)


def window_ends(times: np.ndarray, codes: np.ndarray, tau: Time) -> np.ndarray:
    """For each kept event (ordered by code, then time), the end of its match window:
    the first later event of its partition more than τ after it (or the partition's
    end)."""
    n = len(times)
    if not n:
        return np.zeros(0, dtype=np.int64)
    if codes[0] == codes[-1]:  # one partition: the times are sorted
        ends = np.searchsorted(times, times + tau, side="right")
    else:  # (code, time rank) pairs are sorted
        distinct = np.unique(times)
        rank = np.searchsorted(distinct, times)
        limit = np.searchsorted(distinct, times + tau, side="right") - 1
        span = len(distinct) + 1
        ends = np.searchsorted(codes * span + rank, codes * span + limit, side="right")
    if times.dtype.kind in "iu" and isinstance(tau, int):
        return ends  # exact arithmetic
    # the per-event path tests t_j - t_i > τ; where rounding could tell that apart from
    # t_j > t_i + τ, check both sides of every window's end
    if (times[ends - 1] - times > tau).any():
        raise NotColumnar
    inside = ends < n
    beyond = ends[inside]
    same = codes[beyond] == codes[inside]
    if not (times[beyond][same] - times[inside][same] > tau).all():
        raise NotColumnar
    return ends


class Conditions:
    """Theorem 2's conditions 4 to 7 on every window of a batch at once. Variables with
    the same properties have the same bit in every event's bit vector, so condition 6
    is tested once per such group, and condition 7 once per group of each set."""

    def __init__(self, pattern: SesPattern) -> None:
        m = len(pattern.variables)
        self.m = m
        bits = [1 << (m - 1 - i) for i in range(m)]
        alike: dict[tuple[int, frozenset[Any]], int] = {}  # (set, properties) -> a bit
        for bit, v in zip(bits, pattern.variables, strict=True):
            same = frozenset(c.comparison for c in pattern.properties(v.name))
            alike.setdefault((v.set_index, same), bit)
        self.sets = [
            [bit for (s, _), bit in alike.items() if s == i] for i in range(len(pattern.sets))
        ]
        self.first_set = sum(
            b for v, b in zip(pattern.variables, bits, strict=True) if v.set_index == 0
        )
        one = {same: bit for (_, same), bit in alike.items()}  # across the sets
        self.groups = np.array(sorted(set(one.values())), dtype=np.int64)
        self.everyone = sum(bits)

    def candidates(self, bits: np.ndarray, times: np.ndarray, ends: np.ndarray) -> np.ndarray:
        """The starts ``i`` of the windows ``[i, ends[i])`` that meet conditions 4-7
        (``bits`` and ``times`` are those of the ordered kept events)."""
        n = len(bits)
        chosen = np.flatnonzero((ends - np.arange(n) >= self.m) & (bits & self.first_set != 0))
        if len(chosen) and len(self.groups):  # condition 6
            if (ends[chosen] - chosen).sum() <= len(self.groups) * n:  # few or short windows
                chosen = chosen[self.by_union(bits, ends, chosen)]
            else:
                chosen = chosen[self.by_prefix_sums(bits, ends, chosen)]
        for before, after in zip(self.sets, self.sets[1:], strict=False):  # condition 7
            if not len(chosen):
                break
            first = np.max([times[_next(bits, b)[chosen]] for b in before], axis=0)
            last = np.min([times[_previous(bits, b)[ends[chosen] - 1]] for b in after], axis=0)
            chosen = chosen[first < last]
        return chosen

    def by_union(self, bits: np.ndarray, ends: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """Condition 6 on the windows ``[starts, ends[starts])`` (non-empty): every
        variable's bit in the OR of the window's bit vectors, read window by window."""
        bounds = np.stack([starts, ends[starts]], axis=1).ravel()
        union = np.bitwise_or.reduceat(np.append(bits, 0), bounds)[::2]
        return np.asarray(union & self.everyone == self.everyone)

    def by_prefix_sums(self, bits: np.ndarray, ends: np.ndarray, starts: np.ndarray) -> np.ndarray:
        """:meth:`by_union` by per-group prefix sums, every group of alike variables at
        once (a pass over the batch per group, whatever the windows' lengths)."""
        sums = np.zeros((len(self.groups), len(bits) + 1), dtype=np.intp)
        np.cumsum(self.groups[:, None] & bits != 0, axis=1, out=sums[:, 1:])
        return np.asarray((sums[:, ends[starts]] > sums[:, starts]).all(axis=0))


def _next(bits: np.ndarray, bit: int) -> np.ndarray:
    """Per index, the first index at or after it whose event has ``bit`` (n if none)."""
    n = len(bits)
    return np.minimum.accumulate(np.where(bits & bit != 0, np.arange(n), n)[::-1])[::-1]


def _previous(bits: np.ndarray, bit: int) -> np.ndarray:
    """Per index, the last index at or before it whose event has ``bit`` (-1 if none)."""
    return np.maximum.accumulate(np.where(bits & bit != 0, np.arange(len(bits)), -1))


def windows(
    source: Source,
    positions: Sequence[int],
    bits: np.ndarray,
    filtering: bool,
    attributes: tuple[str, ...],
    tau: Time,
    conditions: Conditions | None,
) -> Windows:
    """The match windows of a finite batch (every one complete) and the candidates:
    every window without ``conditions``. ``bits`` are the events' bit vectors (read
    only by filtering and the conditions)."""
    times = times_of(source, positions)
    kept = np.flatnonzero(bits) if filtering else np.arange(source.n)
    if attributes:
        kept, codes, partitions = partition_codes(source, kept, attributes)
        by_code = np.argsort(codes, kind="stable")
        order, codes = kept[by_code], codes[by_code]
    else:
        order, codes, partitions = kept, np.zeros(len(kept), dtype=np.int64), int(len(kept) > 0)
    ordered_times = times[order]
    ends = window_ends(ordered_times, codes, tau)
    if conditions is None:
        chosen = np.arange(len(order))
    else:
        chosen = conditions.candidates(bits[order], ordered_times, ends)
    return Windows(order, ends, chosen, partitions)
