"""The Chemo relation of Figure 1 of the match-windows paper (July days as times) and
the pattern P1 = (⟨{c, p+}, {b}⟩, Θ, 15 d) of Example 2, built on the shared model."""

from __future__ import annotations

from typing import Any

from tests.eventsets.patterns import pattern, prev, prop, rel

_ROWS = [  # PID, L, V, U, day of July
    (1, "C", 1672.5, "mg", 3),
    (1, "B", 7100, "1/µl", 4),
    (1, "P", 111.5, "mg", 5),
    (2, "B", 10100, "1/µl", 6),
    (2, "P", 88, "mg", 8),
    (2, "D", 84, "mgl", 9),
    (2, "C", 1320, "mg", 10),
    (2, "P", 98, "mg", 11),
    (1, "P", 116.5, "mg", 12),
    (2, "P", 88, "mg", 15),
    (1, "B", 3400, "1/µl", 17),
    (2, "B", 4000, "1/µl", 18),
    (2, "B", 4900, "1/µl", 19),
    (1, "B", 3000, "1/µl", 22),
]

#: e1 … e14 at positions 0 … 13
CHEMO: list[dict[str, Any]] = [
    {"type": "Chemo", "PID": pid, "L": label, "V": value, "U": unit, "timestamp": day}
    for pid, label, value, unit, day in _ROWS
]


def e(n: int) -> int:
    """The position of event e_n."""
    return n - 1


P1 = pattern(
    [[("c", False), ("p", True)], [("b", False)]],
    [
        prop("c", "L", "=", "C"),
        prop("p", "L", "=", "P"),
        prop("b", "L", "=", "B"),
        rel("c", "PID", "=", "p", "PID"),
        rel("p", "PID", "=", "b", "PID"),
        prev("p", "V", "<"),
    ],
    15,
)
