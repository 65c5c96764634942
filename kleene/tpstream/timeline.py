"""An example configuration of a temporal pattern: one interval per symbol such that
every constraint holds by one of its relations (Definitions 10-11), for drawing the
pattern on a time line (``kleene explain --png``).

Allen relations depend only on the order of the intervals' endpoints, so when any
configuration exists one exists with integer endpoints in ``[0, 2n]`` for ``n``
symbols: a backtracking search over those, symbols taken so that each next one is
constrained to one already placed (pruning early), finds it or shows there is none.
Durations (AT LEAST, AT MOST) do not change whether the order of endpoints is
possible once the time scale is free, and are not drawn to scale.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from kleene.tpstream.model import Allen, Constraint, TemporalPattern, holds

#: Placements tried before giving up (patterns of up to about ten symbols finish far
#: below it).
MAX_STEPS = 200_000


@dataclass(frozen=True)
class Placed:
    """One symbol's example interval ``[start, end)``."""

    symbol: str
    start: int
    end: int


class Unsatisfiable(Exception):
    """No configuration satisfies every constraint together (``reason`` says which)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def example(pattern: TemporalPattern, order: Sequence[str]) -> dict[str, Placed]:
    """One configuration satisfying every constraint, the symbols placed in ``order``
    (each next one constrained to one already placed where possible); raises
    :class:`Unsatisfiable` when there is none or the search gives up."""
    n = len(pattern.symbols)
    spans = list(itertools.combinations(range(2 * n + 1), 2))
    # the constraints checked on placing order[i]: those between it and symbols placed
    checks = [
        [
            c
            for c in pattern.constraints
            if order[i] in (c.left, c.right) and {c.left, c.right} <= {*order[: i + 1]}
        ]
        for i in range(n)
    ]
    placed: dict[str, tuple[int, int]] = {}
    steps = 0

    def place(i: int) -> bool:
        nonlocal steps
        if i == n:
            return True
        for span in spans:
            steps += 1
            if steps > MAX_STEPS:
                raise Unsatisfiable(f"no configuration found within {MAX_STEPS:,} placements")
            placed[order[i]] = span
            if all(_satisfied(c, placed) for c in checks[i]) and place(i + 1):
                return True
        del placed[order[i]]
        return False

    if not place(0):
        raise Unsatisfiable("no intervals satisfy every constraint of the pattern together")
    return {x: Placed(x, *placed[x]) for x in pattern.symbols}


def _satisfied(c: Constraint, placed: dict[str, tuple[int, int]]) -> bool:
    (a_start, a_end), (b_start, b_end) = placed[c.left], placed[c.right]
    return any(holds(r, a_start, a_end, b_start, b_end) for r in c.relations)


def relation_shown(c: Constraint, placed: dict[str, Placed]) -> Allen:
    """The relation of ``c`` that holds in the example (the first by name)."""
    a, b = placed[c.left], placed[c.right]
    return next(
        r
        for r in sorted(c.relations, key=lambda r: r.value)
        if holds(r, a.start, a.end, b.start, b.end)
    )
