"""Algorithm 2 (VLDB 2010, Appendix C.4) against the sum it stands for: the confidence,
first instant and last instant of a chain of events are those of its point matches
t_1 < ... < t_l with t_l - t_1 <= W and t_1 in the first event's range, listed one by
one. The last step reads the time range's end off the running sums (they grow along a
row, and the window's cut-off grows with t_1), so events with zero-probability points,
points no earlier event precedes and windows that cut some rows are drawn."""

from __future__ import annotations

from fractions import Fraction
from math import prod
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.imprecise.confidence import any_confidence, point_matches
from kleene.imprecise.model import IntervalEvent, uniform


@st.composite
def chains(draw: Any) -> tuple[list[IntervalEvent], list[tuple[int, int]], int | None]:
    exact = draw(st.booleans())
    events = []
    lower = 0
    for i in range(draw(st.integers(1, 4))):
        lower += draw(st.integers(0, 3))
        upper = lower + draw(st.integers(0, 4))
        n = upper - lower + 1
        pmf: tuple[Any, ...] = uniform(n, exact=False)
        if exact:
            weights = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
            if not sum(weights):
                weights[-1] = 1
            pmf = tuple(Fraction(w, sum(weights)) for w in weights)
        events.append(IntervalEvent(("E", None, i), lower, upper, pmf, i))
    first = events[0]
    low = draw(st.integers(first.lower, first.upper))
    ranges = [(low, draw(st.integers(low, first.upper)))]
    ranges += [(e.lower, e.upper) for e in events[1:]]
    window = draw(st.none() | st.integers(0, 8))
    return events, ranges, window


@settings(max_examples=300, deadline=None)
@given(chains())
def test_algorithm_2_equals_the_listed_point_matches(chain: Any) -> None:
    events, ranges, window = chain
    matches = list(point_matches(events, ranges, window))
    weights = []
    for times in matches:
        p: Any = 1
        for e, t in zip(events, times, strict=True):
            p *= e.prob(t)
        weights.append(p)
    found = any_confidence(events, ranges, window, {})
    if not matches:
        assert found is None
        return
    assert found is not None
    confidence, start, end = found
    assert abs(confidence - sum(weights)) <= 1e-12
    assert start == min(t[0] for t in matches)
    assert end == max(t[-1] for t in matches)


@st.composite
def apart_chains(draw: Any) -> tuple[list[IntervalEvent], int | None]:
    """Events each ending before the next begins, some points of zero probability,
    within a window that spans them all (or none)."""
    events = []
    lower = 0
    for i in range(draw(st.integers(1, 4))):
        upper = lower + draw(st.integers(0, 3))
        n = upper - lower + 1
        weights = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
        if not sum(weights):
            weights[draw(st.integers(0, n - 1))] = 1
        pmf = tuple(Fraction(w, sum(weights)) for w in weights)
        events.append(IntervalEvent(("E", None, i), lower, upper, pmf, i))
        lower = upper + 1 + draw(st.integers(0, 2))
    span = events[-1].upper - events[0].lower
    return events, draw(st.none() | st.integers(span, span + 3))


@settings(max_examples=100, deadline=None)
@given(apart_chains())
def test_algorithm_2_on_events_apart_is_the_product_of_their_masses(chain: Any) -> None:
    """When every choice of points is a point match, Algorithm 2's table factorizes:
    the confidence is the product of the events' masses (here exactly 1) and the time
    range runs from the first event's first point of nonzero probability to the last
    event's last one; the listed point matches say the same."""
    events, window = chain
    ranges = [(e.lower, e.upper) for e in events]
    matches = list(point_matches(events, ranges, window))
    found = any_confidence(events, ranges, window, {})
    assert found is not None
    assert found[0] == 1
    assert found[1:] == (min(t[0] for t in matches), max(t[-1] for t in matches))
    positive = [[t for t in range(e.lower, e.upper + 1) if e.prob(t)] for e in events]
    assert len(matches) == prod(len(p) for p in positive)


def _listed(events: list[IntervalEvent], ranges: list[tuple[int, int]], window: Any) -> Any:
    """Confidence, first and last instant of the listed point matches (None if none)."""
    matches = list(point_matches(events, ranges, window))
    if not matches:
        return None
    total: Any = sum(prod(e.prob(t) for e, t in zip(events, m, strict=True)) for m in matches)
    return total, min(m[0] for m in matches), max(m[-1] for m in matches)


@st.composite
def shared_prefixes(draw: Any) -> tuple[list[IntervalEvent], list[IntervalEvent], Any]:
    """One prefix chain and several last events, at offsets before, inside and after
    the prefix's last event, with equal probabilities as floats or exact (distinct
    events for the memo, which is keyed by arrival position)."""
    prefix, _, window = draw(chains())
    lasts = []
    for k in range(draw(st.integers(1, 6))):
        lower = prefix[-1].lower + draw(st.integers(-6, 8))
        n = draw(st.integers(1, 4))
        exact = draw(st.booleans())
        pmf: tuple[Any, ...] = uniform(n, exact)
        if draw(st.booleans()):
            pmf = (0, *uniform(n, exact))
        lasts.append(IntervalEvent(("E", None, 100 + k), lower, lower + len(pmf) - 1, pmf, 100 + k))
    return prefix, lasts, window


@settings(max_examples=150, deadline=None)
@given(shared_prefixes(), st.data())
def test_algorithm_2_memo_shared_by_the_matches_of_one_prefix(chain: Any, data: Any) -> None:
    """The last step is memoized per prefix and place of the last event (an event
    wholly after, or wholly before, the previous one's points reads the same running
    sums): every match extending one prefix, computed with one memo in turn, equals
    its listed point matches, exact probabilities staying exact."""
    prefix, lasts, window = chain
    memo: dict[Any, Any] = {}
    first = prefix[0]
    for last in lasts:
        low = data.draw(st.integers(first.lower, first.upper))
        ranges = [(low, data.draw(st.integers(low, first.upper)))]
        ranges += [(e.lower, e.upper) for e in [*prefix[1:], last]]
        events = [*prefix, last]
        found = any_confidence(events, ranges, window, memo)
        expected = _listed(events, ranges, window)
        if expected is None:
            assert found is None
            continue
        assert found is not None
        assert abs(found[0] - expected[0]) <= 1e-12
        assert found[1:] == expected[1:]
        exact = all(type(p) is not float for e in events for p in e.pmf)
        assert exact == (type(found[0]) is not float)
