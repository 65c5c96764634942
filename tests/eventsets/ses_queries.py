"""Hypothesis strategies for random SES queries (text) whose variables are often all
related by equalities, so partitioning applies (rows: tests/eventsets/strategies.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

TYPES = ("A", "B")
OPS = ("=", "!=", "<", "<=", ">", ">=")


@st.composite
def ses_queries(draw: Any, max_variables: int = 4) -> str:
    """A random event-set pattern: 1-3 sets of ``v`` / ``v+`` variables, properties on
    y, equalities on x (often relating every variable, so partitioning applies),
    comparisons between variables, prev on y, and a window of 1-8 (types A and B;
    the rows' D events are noise for filtering)."""
    m = draw(st.integers(1, max_variables))
    k = draw(st.integers(1, min(3, m)))
    cuts = (
        sorted(draw(st.lists(st.integers(1, m - 1), min_size=k - 1, max_size=k - 1, unique=True)))
        if k > 1
        else []
    )
    bounds = [0, *cuts, m]
    plus = [draw(st.integers(0, 2)) == 0 for _ in range(m)]
    names = [f"v{i}" for i in range(m)]
    sets = [
        "{"
        + ", ".join(
            f"{draw(st.sampled_from(TYPES))}{'+' if plus[i] else ''} {names[i]}"
            for i in range(bounds[s], bounds[s + 1])
        )
        + "}"
        for s in range(len(bounds) - 1)
    ]
    where = []
    for i in range(m):
        if draw(st.integers(0, 3)) == 0:
            where.append(f"{names[i]}.y {draw(st.sampled_from(OPS))} {draw(st.integers(0, 2))}")
        if plus[i] and draw(st.booleans()):
            where.append(f"prev({names[i]}.y) {draw(st.sampled_from(OPS))} {names[i]}.y")
    if m > 1 and draw(st.booleans()):  # a chain of equalities: partitioning applies
        where += [f"{names[i]}.x = {names[i + 1]}.x" for i in range(m - 1)]
    for _ in range(draw(st.integers(0, 2)) if m > 1 else 0):
        i, j = draw(st.lists(st.integers(0, m - 1), min_size=2, max_size=2, unique=True))
        attr = draw(st.sampled_from(("x", "y")))
        where.append(f"{names[i]}.{attr} {draw(st.sampled_from(OPS))} {names[j]}.{attr}")
    text = f"PATTERN SEQ({', '.join(sets)})"
    if where:
        text += " WHERE " + " AND ".join(where)
    return f"{text} WITHIN {draw(st.integers(1, 8))}"
