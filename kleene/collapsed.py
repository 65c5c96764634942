"""Collapsed results of postponed evaluation (SIGMOD 2014, section 5.2).

Under skip till any match a Kleene array can make a number of matches exponential in its
length. A collapsed match is the intermediate match of postponed evaluation instead: the
single variables' events and, per Kleene variable, its candidate events labelled SAFE
(they passed every condition on their own edge as they arrived) or UNSAFE (a
postponed condition still has to be checked). :meth:`CollapsedMatch.expand` enumerates
exactly the matches it stands for; when nothing is postponed (``exact``) every
non-empty ordered choice of candidates is a match and :meth:`count` needs no
enumeration.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kleene.match import Match

SAFE, UNSAFE = "SAFE", "UNSAFE"


@dataclass(frozen=True)
class CollapsedMatch:
    """``singles``: variable -> event id. ``candidates``: Kleene variable -> ((event id,
    label), ...) in stream order; ``first_fixed`` / ``last_fixed`` name the Kleene
    variables whose first / last candidate every match must take."""

    singles: dict[str, Any]
    candidates: dict[str, tuple[tuple[Any, str], ...]]
    first_fixed: frozenset[str]
    last_fixed: frozenset[str]
    start: Any
    end: Any
    partition: tuple[Any, ...]
    exact: bool
    _expand: Callable[[], list[Match]] = field(repr=False, compare=False)

    def expand(self) -> list[Match]:
        """Every match this intermediate match stands for, as enumeration gives them."""
        return self._expand()

    def count(self) -> int:
        """How many matches :meth:`expand` yields (closed form when ``exact``)."""
        if not self.exact:
            return len(self.expand())
        total = 1
        for var, cands in self.candidates.items():
            free = len(cands) - (var in self.first_fixed) - (var in self.last_fixed)
            if var in self.first_fixed and var in self.last_fixed and len(cands) == 1:
                free = 0  # one candidate, both first and last
            must = var in self.first_fixed or var in self.last_fixed
            total *= 2 ** max(free, 0) if must else 2**free - 1
        return total

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view: ids and labels, no enumeration."""
        return {
            "singles": dict(self.singles),
            "candidates": {v: [list(c) for c in cs] for v, cs in self.candidates.items()},
            "first_fixed": sorted(self.first_fixed),
            "last_fixed": sorted(self.last_fixed),
            "start": self.start,
            "end": self.end,
            "partition": list(self.partition),
            "exact": self.exact,
        }


Result = Match | CollapsedMatch
