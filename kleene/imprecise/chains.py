"""The probability that interval events occur at strictly increasing instants, all within
a window of the first: a sum-product over chains (SASE++ section 5.3, the confidence of
Algorithm 1, computed without listing worlds).

A :class:`Chain` is the joint distribution of (first instant, last instant) of events
placed so far in a fixed order, restricted to the worlds where they occur at strictly
increasing instants within the window: ``mass[f - first, l - last]`` is the probability
that the first event occurs at ``f``, the last at ``l`` and the events in between fit.
Appending an event ``e`` after the last one is one step of the dynamic program:

    new[f, t] = pmf_e(t) * sum_{l < t} mass[f, l]     (0 when t - f > W)

so a chain of k events costs O(k * U^2) for intervals of U points, not the U^k of its
worlds. The events' instants are independent (VLDB 2010, section 2.2), so the product
form is exact; with :class:`fractions.Fraction` probabilities (object arrays) it is the
possible-worlds oracle's exact value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kleene.imprecise.model import IntervalEvent, Probability


@dataclass(frozen=True, slots=True)
class Chain:
    """``mass[i, j]``: P[first event at first + i, last at last + j, all constraints]."""

    first: int
    last: int
    mass: Any  # a 2-d numpy array (float64, or object holding fractions)

    def total(self) -> Probability:
        return self.mass.sum()

    @property
    def start(self) -> int:
        """The earliest first instant of positive mass (chains are trimmed)."""
        return self.first

    @property
    def end(self) -> int:
        """The latest last instant of positive mass."""
        return self.last + self.mass.shape[1] - 1


def dtype_of(events: list[IntervalEvent]) -> Any:
    """object (exact fractions) when some probability is not a float, else float64."""
    exact = any(not isinstance(p, float) for e in events for p in e.pmf[:1])
    return object if exact else np.float64


def begin(e: IntervalEvent, dtype: Any) -> Chain | None:
    """The chain of the single event ``e``: first = last = its instant."""
    return _trim(e.lower, e.lower, np.diag(np.array(e.pmf, dtype=dtype)))


def append(chain: Chain, e: IntervalEvent, window: float | None) -> Chain | None:
    """``chain`` followed by ``e`` at a strictly later instant within ``window`` of the
    first; None when no world allows it."""
    rows, cols = chain.mass.shape
    low = max(e.lower, chain.last + 1)
    high = e.upper
    if window is not None:
        high = min(high, int(np.floor(chain.first + rows - 1 + window)))
    if low > high:
        return None
    below = np.cumsum(chain.mass, axis=1)  # below[:, j] = sum over l <= last + j
    at = np.minimum(np.arange(low - 1, high) - chain.last, cols - 1)
    pmf = np.array(e.pmf[low - e.lower : high - e.lower + 1], dtype=chain.mass.dtype)
    mass = below[:, at] * pmf
    if window is not None and high - chain.first > window:  # else every pair fits
        late = np.arange(low, high + 1)[None, :] - np.arange(rows)[:, None] - chain.first
        mass[late > window] = 0
    return _trim(chain.first, low, mass)


def add(a: Chain, b: Chain) -> Chain:
    """The chain of the union of two disjoint sets of worlds."""
    first = min(a.first, b.first)
    last = min(a.last, b.last)
    rows = max(a.first + a.mass.shape[0], b.first + b.mass.shape[0]) - first
    cols = max(a.end, b.end) + 1 - last
    mass = np.zeros((rows, cols), dtype=a.mass.dtype)
    for c in (a, b):
        i, j = c.first - first, c.last - last
        mass[i : i + c.mass.shape[0], j : j + c.mass.shape[1]] += c.mass
    return Chain(first, last, mass)


def _trim(first: int, last: int, mass: Any) -> Chain | None:
    """The chain without its all-zero border rows and columns; None when all zero."""
    rows = np.flatnonzero(mass.any(axis=1))
    if not len(rows):
        return None
    cols = np.flatnonzero(mass.any(axis=0))
    r0, r1, c0, c1 = int(rows[0]), int(rows[-1]) + 1, int(cols[0]), int(cols[-1]) + 1
    return Chain(first + r0, last + c0, mass[r0:r1, c0:c1])
