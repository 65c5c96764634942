"""The chain representation of Kleene closure over intervals (kleene.imprecise.chains,
kleene.imprecise.kleene_dp): the distribution over (first, last) instant equals the
worlds it stands for, and its edge cases agree with the possible-worlds oracle: ties,
the inclusive window, strict order, value predicates decided per time order, and
events refused whatever the order."""

from __future__ import annotations

from fractions import Fraction
from itertools import pairwise, product
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.imprecise import chains
from kleene.imprecise.model import IntervalEvent
from tests.imprecise.streams import interval_streams
from tests.imprecise.test_kleene_vs_worlds import expected, run


@st.composite
def placed(draw: Any) -> list[IntervalEvent]:
    """1-4 events in a fixed order, intervals of 1-4 points, uniform or weighted."""
    out = []
    for n in range(draw(st.integers(1, 4))):
        lower = draw(st.integers(0, 5))
        size = draw(st.integers(1, 4))
        weights = draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
        if not sum(weights):
            weights = [1] * size
        pmf = tuple(Fraction(w, sum(weights)) for w in weights)
        out.append(IntervalEvent(("E", None, n), lower, lower + size - 1, pmf, n))
    return out


def by_worlds(events: list[IntervalEvent], window: int | None) -> tuple[Fraction, Any]:
    """P[strictly increasing instants within the window] and the (first, last) range
    of those worlds, by listing every world."""
    total = Fraction(0)
    seen = []
    for times in product(*(range(e.lower, e.upper + 1) for e in events)):
        if any(b <= a for a, b in pairwise(times)):
            continue
        if window is not None and times[-1] - times[0] > window:
            continue
        p = Fraction(1)
        for e, t in zip(events, times, strict=True):
            p *= e.prob(t)
        if p:
            total += p
            seen.append((times[0], times[-1]))
    span = (min(f for f, _ in seen), max(t for _, t in seen)) if seen else None
    return total, span


@settings(max_examples=80, deadline=None)
@given(placed(), st.one_of(st.none(), st.integers(0, 6)))
def test_a_chain_is_the_sum_of_its_worlds(events: list[IntervalEvent], window: int | None) -> None:
    chain = chains.begin(events[0], object)
    for e in events[1:]:
        chain = None if chain is None else chains.append(chain, e, window)
    total, span = by_worlds(events, window)
    if chain is None:
        assert total == 0
    else:
        assert chain.total() == total
        assert (chain.start, chain.end) == span


def test_float_chains_agree_with_fractions() -> None:
    events = [
        IntervalEvent(("E", None, n), lo, lo + 9, (Fraction(1, 10),) * 10, n)
        for n, lo in enumerate((0, 3, 4, 9, 12))
    ]
    floats = [IntervalEvent(e.values, e.lower, e.upper, (0.1,) * 10, e.position) for e in events]
    exact = chains.begin(events[0], object)
    rough = chains.begin(floats[0], float)
    for e, f in zip(events[1:], floats[1:], strict=True):
        assert exact is not None and rough is not None
        exact, rough = chains.append(exact, e, 15), chains.append(rough, f, 15)
    assert exact is not None and rough is not None
    assert abs(float(exact.total()) - rough.total()) < 1e-12
    assert 0 < exact.total() < 1


def ev(eid: str, lower: int, upper: int, x: int = 0, etype: str = "B") -> dict[str, Any]:
    return {"type": etype, "id": eid, "lower": lower, "upper": upper, "x": x}


def confidences(text: str, events: list[dict[str, Any]]) -> dict[Any, Fraction]:
    got = run(text, events)
    assert got == expected(text, events)
    return {tuple(ids for _, ids in r[0]): r[3] for r in got}


def test_events_at_one_instant_never_follow_each_other() -> None:
    """Two point events at instant 3: neither order is strict, so no pair; a third
    whose interval [3, 4] ties with them half the time follows each with 1/2."""
    events = [ev("p", 3, 3), ev("q", 3, 3), ev("r", 3, 4)]
    got = confidences("PATTERN SEQ(B+ k[])", events)
    assert (("p", "q"),) not in got
    assert got[(("p", "r"),)] == Fraction(1, 2)
    assert got[(("q", "r"),)] == Fraction(1, 2)
    assert (("p", "q", "r"),) not in got


def test_the_window_is_inclusive_in_each_world() -> None:
    """a in [0, 1], b in [4, 5]: the spans 4, 5, 3, 4 are equally likely; WITHIN 4 keeps
    three of them, WITHIN 5 all, WITHIN 2 none."""
    events = [ev("a", 0, 1, etype="A"), ev("b", 4, 5)]
    for window, want in ((4, Fraction(3, 4)), (5, Fraction(1)), (2, None)):
        got = confidences(f"PATTERN SEQ(A a, B+ k[]) WITHIN {window}", events)
        assert got.get((("a",), ("b",))) == want


def test_orders_that_satisfy_a_predicate_add_up() -> None:
    """b1 (x = 1) and b2 (x = 2) both in [0, 2]: each strict order has 3 of 9 worlds.
    k[i].x > k[i-1].x holds in one order only, != in both, so the same set has
    confidence 3/9 under one predicate and 6/9 under the other (not per world: per
    order of the set)."""
    events = [ev("b1", 0, 2, x=1), ev("b2", 0, 2, x=2)]
    up = confidences("PATTERN SEQ(B+ k[]) WHERE k[i].x > k[i-1].x", events)
    other = confidences("PATTERN SEQ(B+ k[]) WHERE k[i].x != k[i-1].x", events)
    assert up[(("b1", "b2"),)] == Fraction(3, 9)
    assert other[(("b1", "b2"),)] == Fraction(6, 9)


def test_an_event_refused_in_every_order_drops_its_supersets_only() -> None:
    """k[i].x = a.x refuses b2 whatever the order (a is bound before the Kleene
    events): no set with b2 matches, the others do, as in the worlds."""
    events = [ev("a", 0, 0, x=1, etype="A"), ev("b1", 1, 2, x=1), ev("b2", 1, 3, x=0)]
    events.append(ev("b3", 2, 4, x=1))
    got = confidences("PATTERN SEQ(A a, B+ k[]) WHERE k[i].x = a.x", events)
    assert set(got) == {(("a",), s) for s in (("b1",), ("b3",), ("b1", "b3"))}


# predicates over k[] and the single variables around it: order-independent ones (a
# refusal drops every superset) and order-dependent ones (decided per time order)
MIXED = (
    "k[i].x = v0.x",
    "k[i].x >= v0.x",
    "v1.x > k[k.LEN].x",
    "k[i].x != k[i-1].x",
    "v1.x = v0.x",
    "[x]",
)


@st.composite
def mixed_queries(draw: Any) -> str:
    parts = [f"{draw(st.sampled_from('AB'))} v0", f"{draw(st.sampled_from('AB'))}+ k[]"]
    if draw(st.booleans()):
        parts.append(f"{draw(st.sampled_from('AB'))} v1")
    usable = [p for p in MIXED if "v1" not in p or len(parts) == 3]
    chosen = draw(st.lists(st.sampled_from(usable), min_size=1, max_size=2, unique=True))
    text = f"PATTERN SEQ({', '.join(parts)}) WHERE {' AND '.join(chosen)}"
    if draw(st.booleans()):
        text += f" WITHIN {draw(st.integers(1, 5))}"
    return text


@settings(max_examples=120, deadline=None)
@given(mixed_queries(), interval_streams(max_events=6, types=("A", "B")))
def test_single_variable_conditions_equal_the_worlds(
    text: str, events: list[dict[str, Any]]
) -> None:
    assert run(text, events) == expected(text, events)


@settings(max_examples=40, deadline=None)
@given(mixed_queries(), interval_streams(max_events=5, types=("A", "B")))
def test_floating_point_confidence_is_within_1e_12(text: str, events: list[dict[str, Any]]) -> None:
    want = {tuple(map(tuple, r[0])): r[3] for r in expected(text, events)}
    q = kleene.compile(text, time="interval", strategy="skip_till_any_match")
    got = {tuple(sorted(m.ids().items())): m.confidence for m in q.run(events)}
    assert got.keys() == want.keys()
    explicit = {e["id"] for e in events if "pmf" in e}  # exact (Fraction) probabilities
    for sig, c in got.items():
        # exact probabilities stay exact: a float unless every event has explicit ones
        ids = {i for _, group in sig for i in group}
        assert isinstance(c, Fraction if ids <= explicit else float)
        assert c == pytest.approx(float(want[sig]), abs=1e-12)
