"""Workloads with imprecise timestamps (VLDB 2010, section 5).

* :func:`generate`: the synthetic stream of section 5.1. Events of one type ``E`` with
  one attribute ``value`` cycling 1, 2, ..., ``period`` (1000 in the paper), arriving in
  increasing order of their time t = 0, 1, 2, ...; each has the uncertainty interval
  ``[t - delta, t + delta]`` (delta: the half uncertainty interval size, default 5).
  The paper's queries are ``SEQ(E e1, ..., E el) WHERE e1.value % v1 = 0 AND ...``.
* :func:`with_intervals`: the Hadoop trace of :mod:`kleene.datagen.hadoop` as in section
  5.2. Times are rounded to a unit of 0.1 s; Hadoop's events get delta_H = 0.5 s and
  Ganglia's LoadStd samples, taken every 15 s, delta_G = 7.5 s: the columns ``lower``
  and ``upper`` hold the interval in units of 0.1 s.

Both keep the arrival-order assumption of section 2.2: events are in time order and
every interval holds its event's time, so an earlier event's lower bound is at most a
later event's upper bound.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

GANGLIA_TYPES = ("LoadStd",)


def generate(events: int = 100_000, *, delta: int = 5, period: int = 1000) -> pa.Table:
    """The stream of section 5.1: columns ``id, type, timestamp, lower, upper, value``."""
    if events < 0:
        raise ValueError(f"events must be >= 0, not {events}")
    if delta < 0:
        raise ValueError(f"delta must be >= 0, not {delta}")
    if period < 1:
        raise ValueError(f"period must be >= 1, not {period}")
    t = np.arange(events, dtype=np.int64)
    return pa.table(
        {
            "id": t,
            "type": pa.array(["E"] * events, pa.string()),
            "timestamp": t,
            "lower": t - delta,
            "upper": t + delta,
            "value": t % period + 1,
        }
    )


def with_intervals(
    table: pa.Table, *, unit: float = 0.1, delta_hadoop: float = 0.5, delta_ganglia: float = 7.5
) -> pa.Table:
    """The trace with ``lower``/``upper`` columns in units of ``unit`` seconds around each
    event's rounded time: +-``delta_ganglia`` for Ganglia samples, +-``delta_hadoop`` for
    the rest (section 5.2)."""
    if unit <= 0 or delta_hadoop < 0 or delta_ganglia < 0:
        raise ValueError("unit must be > 0 and the deltas >= 0")
    ticks = np.rint(table.column("timestamp").to_numpy() / unit).astype(np.int64)
    ganglia = pc.is_in(table.column("type"), pa.array(GANGLIA_TYPES)).to_numpy(zero_copy_only=False)
    half = np.where(ganglia, round(delta_ganglia / unit), round(delta_hadoop / unit))
    table = table.append_column("lower", pa.array(ticks - half))
    return table.append_column("upper", pa.array(ticks + half))
