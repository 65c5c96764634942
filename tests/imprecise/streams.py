"""Hypothesis strategies for small interval streams and queries over them."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from hypothesis import strategies as st

TYPES = ("A", "B", "C")

# predicates over the variables v0, v1, v2 (those naming an absent variable are skipped)
PREDICATES = (
    "v0.x = v1.x",
    "v1.x > 0",
    "v0.x < v2.x",
    "v1.x != v2.x",
    "v2.x + v0.x >= 2",
    "[x]",
)


@st.composite
def interval_streams(
    draw: Any, max_events: int = 5, max_length: int = 2, types: tuple[str, ...] = TYPES
) -> list[dict[str, Any]]:
    """Events with intervals of 1..max_length+1 points, in an arrival order that keeps
    the assumption of VLDB 2010 section 2.2: ordered by a key drawn inside each
    interval, so an earlier event's lower bound is at most a later one's upper bound.
    Some events carry an explicit probability per point."""
    n = draw(st.integers(1, max_events))
    events = []
    for i in range(n):
        lower = draw(st.integers(0, 6))
        upper = lower + draw(st.integers(0, max_length))
        event: dict[str, Any] = {
            "type": draw(st.sampled_from(types)),
            "id": f"e{i}",
            "lower": lower,
            "upper": upper,
            "x": draw(st.integers(0, 2)),
        }
        if upper > lower and draw(st.integers(0, 3)) == 0:
            weights = draw(
                st.lists(st.integers(0, 3), min_size=upper - lower + 1, max_size=upper - lower + 1)
            )
            if sum(weights):
                event["pmf"] = [Fraction(w, sum(weights)) for w in weights]
        event["key"] = draw(st.integers(lower, upper))
        events.append(event)
    events.sort(key=lambda e: e.pop("key"))
    return events


@st.composite
def interval_queries(draw: Any, types: tuple[str, ...] = TYPES) -> str:
    """SEQ of 1-3 single variables, some predicates, maybe a window and RETURN."""
    n = draw(st.integers(1, 3))
    variables = [f"v{i}" for i in range(n)]
    pattern = ", ".join(f"{draw(st.sampled_from(types))} {v}" for v in variables)
    usable = [p for p in PREDICATES if all(f"v{k}" in variables for k in range(3) if f"v{k}." in p)]
    chosen = draw(st.lists(st.sampled_from(usable), max_size=2, unique=True))
    text = f"PATTERN SEQ({pattern})"
    if chosen:
        text += " WHERE " + " AND ".join(chosen)
    if draw(st.booleans()):
        text += f" WITHIN {draw(st.integers(1, 5))}"
    if draw(st.integers(0, 3)) == 0:
        text += f" RETURN {variables[-1]}.x + 1 AS y"
    return text
