"""Hypothesis strategies: small random SES queries (as text) and event rows."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

TYPES = ("A", "B")
ATTRS = ("x", "y")
OPS = ("=", "!=", "<", "<=", ">", ">=")


@st.composite
def ses_queries(draw: st.DrawFn, max_variables: int = 4, max_plus: int = 2) -> str:
    """``PATTERN SEQ({...}, ...) WHERE ... WITHIN τ`` with 1-3 sets, v and v+,
    properties, relationships and prev."""
    n_sets = draw(st.sampled_from((1, 2, 2, 3)))
    total = draw(st.integers(n_sets, max(n_sets, max_variables)))
    sizes = [1] * n_sets
    for _ in range(total - n_sets):
        sizes[draw(st.integers(0, n_sets - 1))] += 1
    variables: list[tuple[str, str, bool]] = []
    plus_left = max_plus
    for k in range(total):
        plus = plus_left > 0 and draw(st.booleans())
        plus_left -= plus
        variables.append((f"v{k}", draw(st.sampled_from(TYPES)), plus))
    sets, k = [], 0
    for size in sizes:
        members = [f"{t}{'+' if plus else ''} {name}" for name, t, plus in variables[k : k + size]]
        sets.append("{" + ", ".join(members) + "}")
        k += size
    conditions = []
    names = [name for name, _, _ in variables]
    for _ in range(draw(st.integers(0, 1))):  # properties
        var = draw(st.sampled_from(names))
        value = draw(st.integers(0, 2))
        attr, op = draw(st.sampled_from(ATTRS)), draw(st.sampled_from(OPS))
        if draw(st.booleans()):
            conditions.append(f"{var}.{attr} {op} {value}")
        else:
            conditions.append(f"{value} {op} {var}.{attr}")
    if total > 1:
        for _ in range(draw(st.integers(0, 1))):  # relationships
            a, b = draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))
            op = draw(st.sampled_from(OPS))
            conditions.append(
                f"{a}.{draw(st.sampled_from(ATTRS))} {op} {b}.{draw(st.sampled_from(ATTRS))}"
            )
    for name, _, plus in variables:  # prev
        if plus and draw(st.booleans()):
            attr, op = draw(st.sampled_from(ATTRS)), draw(st.sampled_from(OPS))
            conditions.append(f"prev({name}.{attr}) {op} {name}.{attr}")
    where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
    return f"PATTERN SEQ({', '.join(sets)}){where} WITHIN {draw(st.integers(0, 8) | st.just(8))}"


@st.composite
def ses_rows(draw: st.DrawFn, max_events: int = 8, missing: bool = False) -> list[dict[str, Any]]:
    """Events in time order (ties allowed) with small integer attributes; with
    ``missing``, y may be None or absent."""
    n = draw(st.integers(0, max_events) | st.just(max_events))
    steps = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    rows, time = [], 0
    for k, step in enumerate(steps):
        time += step
        rows.append(
            {
                "type": draw(st.sampled_from((*TYPES, *TYPES, "D"))),
                "timestamp": time,
                "id": k,
                "x": draw(st.integers(0, 2)),
                "y": draw(st.integers(0, 2)),
            }
        )
        if missing and draw(st.booleans()):
            if draw(st.booleans()):
                del rows[-1]["y"]
            else:
                rows[-1]["y"] = None
    return rows
