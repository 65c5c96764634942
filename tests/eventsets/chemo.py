"""The Chemo relation of Figure 1 (match-window paper) and query Q1 (Example 2).

Times are July days (e1 on 3 Jul is 3); event ``ek`` sits at position k - 1. The event
type is the attribute L (``type_field="L"`` for kleene.compile).
"""

from __future__ import annotations

from typing import Any

#: (PID, L, V, U, T) of e1 .. e14, as printed in Figure 1
CHEMO = [
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

#: Q1 in kleene's language (Example 2); the type names repeat c.L = 'C' etc.
Q1 = (
    "PATTERN SEQ({C c, P+ p}, {B b}) "
    "WHERE c.L = 'C' AND p.L = 'P' AND b.L = 'B' AND c.PID = p.PID AND p.PID = b.PID "
    "AND prev(p.V) < p.V WITHIN 15 days"
)


def events() -> list[dict[str, Any]]:
    """The events as kleene input (``type_field="L"``, ``time_field="T"``)."""
    return [
        {"id": f"e{k}", "PID": pid, "L": label, "V": v, "U": unit, "T": t}
        for k, (pid, label, v, unit, t) in enumerate(CHEMO, start=1)
    ]


def rows() -> list[dict[str, Any]]:
    """The events as the SES engines' rows (type, timestamp and id under kleene's names)."""
    return [
        {"type": label, "timestamp": t, "id": f"e{k}", "PID": pid, "L": label, "V": v, "U": unit}
        for k, (pid, label, v, unit, t) in enumerate(CHEMO, start=1)
    ]


def e(*numbers: int) -> tuple[int, ...]:
    """Positions of events e<k>."""
    return tuple(k - 1 for k in numbers)
