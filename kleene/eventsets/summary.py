"""Summary statistics of a match window with bit vectors (match-windows paper,
Definition 5, Theorem 3, section 5 and Example 13).

A counter per variable ``v ∈ B_i`` counts the window's events that satisfy Θ^p_v and
came after events of every variable of ``B_{i-1}``: an arriving event with bit vector
``ē`` is counted for ``v`` when its bit is set and the counters of ``B_{i-1}`` are all
positive, i.e. ``s̄ & b̄_i = 0`` where ``s̄`` has a 1 for each counter at zero and the
mask ``b̄_i`` has the bits of ``B_{i-1}``. When the first event leaves the window the
counters it was counted in drop; when a counter of ``B_i`` reaches zero the counters of
every later set are reset. All counters positive (``s̄ = 0``) implies conditions 6
and 7 of Theorem 2 (Theorem 3 gives them as the counters' meaning).

Two details keep the test *necessary* (it may pass a window without a match, never
reject one that has a match starting at its first event): an event is uncounted on
leaving only for the variables it was counted for on arrival (the paper decrements
every variable whose properties it satisfies, which would undercount an event like
``e2`` of Figure 5, never counted for ``b``), and not for a set reset since it
arrived (each set remembers the arrival number of its last reset).
"""

from __future__ import annotations

from typing import NamedTuple

from kleene.eventsets.filtering import bit_string
from kleene.eventsets.model import SesPattern


class Tag(NamedTuple):
    """What an event's arrival counted: the variables (bits) and its arrival number."""

    counted: int
    arrival: int


class SummaryStatistics:
    """S = ⟨(v_1, cnt_1), …, (v_m, cnt_m)⟩ with the bit vectors of section 5."""

    def __init__(self, pattern: SesPattern) -> None:
        variables = pattern.variables
        m = len(variables)
        self.m = m
        self.names = tuple(v.name for v in variables)
        self.bits = tuple(1 << (m - 1 - i) for i in range(m))
        self.set_of = tuple(v.set_index for v in variables)
        k = len(pattern.sets)
        set_bits = [0] * k
        for bit, s in zip(self.bits, self.set_of, strict=True):
            set_bits[s] |= bit
        #: b̄_i: the bits of the variables of B_{i-1} (0 for B_1)
        self.masks = (0, *set_bits[:-1])
        #: bits of the variables of B_1 (condition 5)
        self.first_set = set_bits[0] if k else 0
        self._later = tuple(sum(set_bits[j + 1 :]) for j in range(k))
        self._index = {bit: i for i, bit in enumerate(self.bits)}
        self.counts = [0] * m
        self.zero = (1 << m) - 1  # s̄: 1 where the counter is zero
        self._resets = [0] * k
        self._arrivals = 0

    def add(self, bits: int) -> Tag:
        """An event with bit vector ``bits`` enters the window."""
        self._arrivals += 1
        counted = 0
        rest = bits
        while rest:
            bit = rest & -rest
            rest ^= bit
            i = self._index[bit]
            if not self.zero & self.masks[self.set_of[i]]:
                counted |= bit
                self.counts[i] += 1
        self.zero &= ~counted
        return Tag(counted, self._arrivals)

    def remove(self, tag: Tag) -> None:
        """The event counted as ``tag`` leaves the window."""
        emptied: int | None = None
        rest = tag.counted
        while rest:
            bit = rest & -rest
            rest ^= bit
            i = self._index[bit]
            s = self.set_of[i]
            if tag.arrival <= self._resets[s]:
                continue  # uncounted by a reset since
            self.counts[i] -= 1
            if not self.counts[i]:
                self.zero |= bit
                emptied = s if emptied is None else min(emptied, s)
        if emptied is not None and self._later[emptied]:
            self._reset_after(emptied)

    def _reset_after(self, s: int) -> None:
        for i, set_index in enumerate(self.set_of):
            if set_index > s:
                self.counts[i] = 0
        for j in range(s + 1, len(self._resets)):
            self._resets[j] = self._arrivals
        self.zero |= self._later[s]

    @property
    def satisfied(self) -> bool:
        """Every counter positive: conditions 6 and 7 pass (Theorem 3)."""
        return not self.zero

    def starts(self, bits: int) -> bool:
        """Condition 5 for a first event with bit vector ``bits``."""
        return bool(bits & self.first_set)

    def pairs(self) -> tuple[tuple[str, int], ...]:
        """S as the paper writes it."""
        return tuple(zip(self.names, self.counts, strict=True))

    def vector(self) -> str:
        """``s̄`` as the paper writes it."""
        return bit_string(self.zero, self.m)
