"""The confidence of skip till next match over intervals by equations (3)-(4) of VLDB
2010 (section 3) as a dynamic program over the valid intervals
(:mod:`kleene.imprecise.next_confidence`): worked examples computed by hand, and the
event-based framework against the possible-worlds oracle on streams whose events all
match every component (so most spoilers match several components, equation 4), by the
dynamic program and by the listing it falls back to."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.imprecise import next_confidence as module
from kleene.imprecise.events import METHODS
from kleene.imprecise.model import IntervalEvent, uniform
from kleene.imprecise.next_confidence import TooManyCases, next_confidence
from tests.imprecise.test_events_vs_worlds import run_events
from tests.imprecise.test_points_vs_worlds import _key, expected

NEXT = "skip_till_next_match"
SAME_TYPE = (
    "PATTERN SEQ(A v0, A v1, A v2)",
    "PATTERN SEQ(A v0, A v1, A v2) WITHIN 3",
    "PATTERN SEQ(A v0, A v1, A v2) WHERE v0.x = v1.x",
    "PATTERN SEQ(A v0, A v1, A v2) WHERE v2.x > 0",
    "PATTERN SEQ(A v0, A v1) WHERE v1.x > 0",
)


def _event(i: int, lower: int, upper: int) -> IntervalEvent:
    return IntervalEvent(("A", None, f"e{i}"), lower, upper, uniform(upper - lower + 1, True), i)


def test_a_spoiler_of_one_component_multiplies_in_its_escape() -> None:
    """a at 1, b in {2, 3}, x at 2 can match b's component: b is next at 2 (tied with
    x), never at 3 (x lies between): 1/2. Equation (3)."""
    a, b, x = _event(0, 1, 1), _event(1, 2, 3), _event(2, 2, 2)
    assert next_confidence([a, b], [(1, 1), (2, 3)], None, [(x, [1])]) == (Fraction(1, 2), 1, 2)


def test_an_event_matching_two_components_is_enumerated_not_multiplied() -> None:
    """a at 0, b at 2, c at 4 and x in {1, 2, 3} that can match b's and c's
    components: x at 1 lies between a and b, at 3 between b and c, at 2 in neither (tied
    with b), so (a, b, c) holds in 1/3 of the worlds. Treating x's two escapes as
    independent would give 2/3 * 2/3 = 4/9 (equation 4 versus 3)."""
    a, b, c, x = _event(0, 0, 0), _event(1, 2, 2), _event(2, 4, 4), _event(3, 1, 3)
    valid = [(0, 0), (2, 2), (4, 4)]
    assert next_confidence([a, b, c], valid, None, [(x, [1, 2])]) == (Fraction(1, 3), 0, 4)
    with pytest.raises(TooManyCases):
        next_confidence([a, b, c], valid, None, [(x, [1, 2])], max_cases=1)
    q = kleene.compile("PATTERN SEQ(A a, A b, A c)", time="interval", strategy=NEXT, exact=True)
    rows = [
        {"type": "A", "id": n, "lower": e.lower, "upper": e.upper}
        for n, e in zip("axbc", [a, x, b, c], strict=True)
    ]
    found = {tuple(m.ids().values()): m.confidence for m in q.run(rows)}
    assert found[(("a",), ("b",), ("c",))] == Fraction(1, 3)


def test_the_time_range_covers_only_the_worlds_that_produce_the_signature() -> None:
    """b in {1..4} after a at 0, x at 2 matching b's component: b is next at 1 or 2
    only, so the range ends at 2, not at b's upper bound 4."""
    a, b, x = _event(0, 0, 0), _event(1, 1, 4), _event(2, 2, 2)
    assert next_confidence([a, b], [(0, 0), (1, 4)], None, [(x, [1])]) == (Fraction(1, 2), 0, 2)


@st.composite
def dense_streams(draw: Any) -> list[dict[str, Any]]:
    """3-5 events of type A crowded into instants 0..5 (intervals of 1-3 points, some
    with an explicit pmf), in an arrival order that keeps section 2.2's assumption: most
    of them can fall between two others, for several components at once."""
    events = []
    for i in range(draw(st.integers(3, 5))):
        lower = draw(st.integers(0, 3))
        upper = lower + draw(st.integers(0, 2))
        event: dict[str, Any] = {"type": "A", "id": f"e{i}", "lower": lower, "upper": upper}
        event["x"] = draw(st.integers(0, 2))
        if upper > lower and draw(st.booleans()):
            weights = [draw(st.integers(1, 3)) for _ in range(upper - lower + 1)]
            event["pmf"] = [Fraction(w, sum(weights)) for w in weights]
        events.append((event, draw(st.integers(lower, upper))))
    return [e for e, _ in sorted(events, key=lambda item: item[1])]


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(SAME_TYPE),
    dense_streams(),
    st.sampled_from(METHODS),
    st.booleans(),
)
def test_events_matching_several_components_equal_the_worlds(
    text: str, events: list[dict[str, Any]], method: str, one_by_one: bool
) -> None:
    want = sorted(expected(text, events, NEXT), key=_key)
    assert run_events(text, events, NEXT, method, one_by_one) == want


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(SAME_TYPE), dense_streams())
def test_the_listing_fallback_equals_the_worlds(text: str, events: list[dict[str, Any]]) -> None:
    """With no case of equation (4) allowed, every signature is listed point match by
    point match instead."""
    want = sorted(expected(text, events, NEXT), key=_key)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "MAX_CASES", 0)
        assert run_events(text, events, NEXT, "any", False) == want
