"""Time slicing: spreading one partition's stream over many matchers.

A query without a partition key has one partition, the whole stream; to use every core
the time line is cut at boundaries ``t_1 < t_2 < ... < t_{n-1}`` into slices
(``t_0 = -inf``, ``t_n = +inf``). Slice k **owns** the matches whose first event lies in
``[t_k, t_{k+1})``; since every match lies inside its WITHIN window W (SIGMOD 2008,
section 2: last time minus first time <= W), all its events lie in
``[t_k, t_{k+1} + W]``.

Slice k is fed every event in ``[t_k - W, t_{k+1} + W]``, in stream order, and keeps only
the matches it owns. That is enough for each owned match to be found exactly as in the
whole stream:

* a run starts at its first event and only looks at later events up to W after it
  (window on every edge, section 3.2), so its events, the events its ignore and
  contiguity edges test, and so the run itself, are the same in the slice;
* a negated event that rules a match out lies within W of every event of the match
  (docs/semantics.md, negation), hence in ``[t_k - W, t_{k+1} + W]`` as well;
* a trailing negation is decided by the events up to first time + W, also inside.

Every match has exactly one first event, whose time lies in exactly one slice, so each
match is emitted exactly once (the worker computes the slice of a match's start time
with the same cut points). Rejected events are reported by the slice whose own range
holds the event's time (events without a numeric or timestamp time by slice 0, the only
slice they are fed to).

A collapsed result (``OUTPUT COLLAPSED``, SIGMOD 2014 section 5.2) is one main run of
postponed evaluation: its start is the run's first event and its candidates are events
of at most W later, so the same argument makes the owning slice build it exactly as the
whole stream does, and it is owned, and emitted, once.

Slicing does not apply to queries without WITHIN (a match may span the whole stream,
so no finite margin suffices) nor to the non-overlap output format (which match is kept
depends on the previous kept match of the partition, a chain that runs across every
slice boundary). Those run as one slice per partition.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from kleene.spark._prepare import TIME

SLICE = "kleene__slice"


def boundaries(
    df: DataFrame, slices: int, min_width: float, *, relative_error: float = 0.001
) -> list[float]:
    """Up to ``slices - 1`` cut points at time quantiles, so slices hold similar numbers
    of events (one approxQuantile job).

    A cut closer than ``min_width`` to the previous cut, to the first time or to the
    last time is left out: a slice narrower than the window would be mostly margin.
    """
    if slices <= 1:
        return []
    probs = [k / slices for k in range(slices + 1)]
    quantiles = [
        float(q)
        for q in df.approxQuantile(TIME, probs, relative_error)
        if q is not None and not math.isnan(q)
    ]
    if len(quantiles) < 2:
        return []
    first, last = quantiles[0], quantiles[-1]
    cuts: list[float] = []
    for q in quantiles[1:-1]:
        previous = cuts[-1] if cuts else first
        if q - previous > min_width and last - q > min_width:
            cuts.append(q)
    return cuts


def with_slices(df: DataFrame, cuts: Sequence[float], window: float) -> DataFrame:
    """One row per (event, slice that needs it), the slice in ``kleene__slice``."""
    n = len(cuts) + 1
    t = F.col(TIME)
    if n == 1:
        return df.withColumn(SLICE, F.lit(0))
    lows = [None, *cuts]
    highs = [*cuts, None]
    needs: list[Column] = []
    for k in range(n):
        cond = F.lit(True)
        lo, hi = lows[k], highs[k]
        if lo is not None:
            cond = cond & (t >= F.lit(lo - _margin(lo, window)))
        if hi is not None:
            cond = cond & (t <= F.lit(hi + _margin(hi, window)))
        if k == 0:
            cond = cond | t.isNull()
        needs.append(F.when(cond, F.lit(k)))
    return df.withColumn(SLICE, F.explode(F.filter(F.array(*needs), lambda x: x.isNotNull())))


def home_slice(t: float | None, cuts: Sequence[float]) -> int:
    """The slice whose own range ``[t_k, t_{k+1})`` holds time t (0 for no time)."""
    return 0 if t is None else bisect_right(cuts, t)


def _margin(cut: float, window: float) -> float:
    """W, widened by a few ulps: extra margin events change nothing (they lie more than
    W away from every owned match), missing ones would."""
    return window + 1e-9 * (abs(cut) + abs(window)) + 1e-12


def placed_slice_column(spark: SparkSession, slices: int) -> Column:
    """A column whose hash puts slice k into shuffle partition k of ``slices``.

    Spark's hash partitioning sends a row to ``pmod(hash(columns), n)``; hashing the
    slice numbers themselves would send several slices to one partition and leave
    others empty. For each k this picks a small integer whose hash lands in partition k
    (Spark computes the hashes, so the choice follows its own function). Correctness
    never depends on it: only the balance does.
    """
    residues = (
        spark.range(0, 64 * slices)
        .select("id", F.pmod(F.hash("id"), F.lit(slices)).alias("p"))
        .collect()
    )
    chosen: dict[int, int] = {}
    for row in residues:
        chosen.setdefault(int(row["p"]), int(row["id"]))
    values = [chosen.get(k, k) for k in range(slices)]
    return F.element_at(F.array(*[F.lit(v) for v in values]), F.col(SLICE) + 1)


def cut(
    timed: DataFrame,
    slices: int | str,
    margin: float,
    spark: SparkSession,
    keyed: bool,
) -> tuple[DataFrame, list[float], str]:
    """``timed`` (with ``kleene__t``) cut into up to ``slices`` slices overlapping by
    ``margin`` (``"auto"``: two per core, each at least four margins wide, unless the
    events are split by key already): the rows with their slice column, the cuts, and a
    note saying why there are none."""
    if slices == "auto" and keyed:
        return timed, [], "not sliced: the partition key already spreads the work (auto)"
    if slices == "auto":
        cuts = boundaries(timed, 2 * spark.sparkContext.defaultParallelism, 4 * margin)
    else:
        cuts = boundaries(timed, int(slices), margin)
    if not cuts:
        return timed, [], "not sliced: the time span is too short for more than one slice"
    return with_slices(timed, cuts, margin), cuts, ""
