"""The temporal uncertainty model of VLDB 2010, section 2.2.

Time is discrete: the instants are integers. An event carries an uncertainty interval
``[lower, upper]`` bounding its occurrence time and a probability mass function over the
interval's points (uniform unless given). A point event is the case lower = upper.

Where the interval comes from is said once per query by :class:`IntervalFields`: two
columns (``lower``/``upper``), or the time column plus an uncertainty, symmetric
(``t - d, t + d``) or not (``t - before, t + after``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

Probability = float | Fraction


@dataclass(frozen=True)
class IntervalFields:
    """How events give their uncertainty interval and probabilities.

    With ``uncertainty`` None the interval is read from the ``lower_field`` and
    ``upper_field`` columns; otherwise it is ``[t - before, t + after]`` around the time
    column, ``uncertainty`` being ``d`` (both sides) or ``(before, after)``. ``pmf_field``
    names an optional column holding one probability per point of the interval.
    ``u_max`` is the declared largest ``upper - lower`` (None: measured over the input
    of a whole run). ``exact``: uniform probabilities as fractions, not floats.
    """

    lower_field: str = "lower"
    upper_field: str = "upper"
    uncertainty: int | tuple[int, int] | None = None
    pmf_field: str = "pmf"
    u_max: int | None = None
    exact: bool = False

    @property
    def margins(self) -> tuple[int, int] | None:
        """(before, after) around the time column, or None for two columns."""
        if self.uncertainty is None:
            return None
        if isinstance(self.uncertainty, tuple):
            return self.uncertainty
        return (self.uncertainty, self.uncertainty)


@dataclass(frozen=True, slots=True, eq=False)
class IntervalEvent:
    """One admitted event: ``values`` is the plan's event tuple ``(type, time, id,
    *attributes)`` with the time left None; ``pmf[k]`` is the probability of occurring at
    ``lower + k``; ``position`` is the 0-based arrival position."""

    values: tuple[Any, ...]
    lower: int
    upper: int
    pmf: tuple[Probability, ...]
    position: int

    @property
    def type(self) -> Any:
        return self.values[0]

    @property
    def id(self) -> Any:
        return self.values[2]

    def prob(self, t: int) -> Probability:
        """P[the event occurs at t] (0 outside the interval)."""
        if self.lower <= t <= self.upper:
            return self.pmf[t - self.lower]
        return 0

    def at(self, t: int) -> tuple[Any, ...]:
        """The point event at instant ``t``: the event tuple with ``t`` as its time."""
        v = self.values
        return (v[0], t, *v[2:])

    def outside(self, ranges: Sequence[tuple[int, int]]) -> Probability:
        """P[the event occurs outside every open range (a, b)]: exactly 1 when no
        point lies inside, else the sum of the masses of the points outside (so an event
        that cannot escape gives exactly 0)."""
        lo, hi = self.lower, self.upper
        hits = [(max(a + 1, lo), min(b - 1, hi)) for a, b in ranges if a + 1 <= hi and b - 1 >= lo]
        hits = [(s, e) for s, e in hits if s <= e]
        if not hits:
            return 1
        pmf = self.pmf
        if len(hits) == 1:
            s, e = hits[0]
            return sum(pmf[: s - lo], start=0) + sum(pmf[e - lo + 1 :], start=0)
        total: Probability = 0
        at = lo  # the first point not yet summed or covered
        for s, e in sorted(hits):
            total += sum(pmf[at - lo : s - lo], start=0)
            at = max(at, e + 1)
        return total + sum(pmf[at - lo :], start=0)


def uniform(n: int, exact: bool) -> tuple[Probability, ...]:
    """The uniform distribution over n points."""
    p: Probability = Fraction(1, n) if exact else 1 / n
    return (p,) * n
