"""The example configuration ``kleene explain --png`` draws (kleene/tpstream/timeline.py):
it satisfies every constraint, and a pattern that matches some stream has one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

from kleene.oracle import tpstream as oracle
from kleene.tpstream.matcher import default_order
from kleene.tpstream.model import TemporalPattern, holds
from kleene.tpstream.query import TemporalQuery
from kleene.tpstream.timeline import Unsatisfiable, example, relation_shown
from tests.tpstream.streams import closed, events, queries


def pattern_of(text: str) -> TemporalPattern:
    plan = TemporalQuery(text).plan
    return TemporalPattern(plan.symbol_names, plan.constraints, 0)


@settings(max_examples=40, deadline=None)
@given(queries(), events())
def test_the_example_satisfies_every_constraint(text: str, stream: list[dict[str, Any]]) -> None:
    pattern = pattern_of(text)
    try:
        placed = example(pattern, default_order(pattern))
    except Unsatisfiable:
        assert oracle.matches(text, closed(stream))[1] == []
        return
    for c in pattern.constraints:
        a, b = placed[c.left], placed[c.right]
        assert a.start < a.end and b.start < b.end
        assert holds(relation_shown(c, placed), a.start, a.end, b.start, b.end)


def test_a_cycle_of_befores_has_no_example() -> None:
    text = (
        "FROM S DEFINE A AS S.x = 0, B AS S.x = 1, C AS S.x = 2 "
        "PATTERN A before B AND B before C AND C before A WITHIN 10"
    )
    with pytest.raises(Unsatisfiable, match="no intervals satisfy"):
        example(pattern_of(text), ("A", "B", "C"))


def test_equal_endpoints_are_found() -> None:
    """meets and starts need shared endpoints: the integer grid has them."""
    text = (
        "FROM S DEFINE A AS S.x = 0, B AS S.x = 1, C AS S.x = 2 "
        "PATTERN A meets B AND B starts C AND A before C; A meets C WITHIN 10"
    )
    placed = example(pattern_of(text), ("A", "B", "C"))
    assert placed["A"].end == placed["B"].start == placed["C"].start
    assert placed["B"].end < placed["C"].end
