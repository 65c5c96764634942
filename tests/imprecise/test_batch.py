"""Algorithm 2 over a batch of matches (kleene/imprecise/batch.py) against the sum it
stands for, match by match: chains of one length but different widths and offsets in
one batch (so intervals are padded), events shared between matches, float probabilities
with zero points, windows that cut some paths and valid intervals that cut the first
event's points. And the
event-based framework gives the same results whether a push's matches go batched or
one by one."""

from __future__ import annotations

from fractions import Fraction
from math import prod
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.imprecise import events as event_framework
from kleene.imprecise.batch import any_confidences
from kleene.imprecise.confidence import point_matches
from kleene.imprecise.model import IntervalEvent


@st.composite
def chain(
    draw: Any, length: int, pool: list[IntervalEvent]
) -> tuple[list[IntervalEvent], list[tuple[int, int]]]:
    """A match: each component a new event or one of ``pool`` (other matches' events,
    so that the batch holds some events once for several matches)."""
    events: list[IntervalEvent] = []
    lower = draw(st.integers(0, 5))
    for i in range(length):
        others = [e for e in pool if e not in events]
        if others and draw(st.booleans()):
            events.append(draw(st.sampled_from(others)))
            lower = events[-1].lower
            continue
        lower += draw(st.integers(-1, 3))
        upper = lower + draw(st.integers(0, 4))
        n = upper - lower + 1
        weights = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
        if not sum(weights):
            weights[-1] = 1
        pmf = tuple(w / sum(weights) for w in weights)
        events.append(IntervalEvent(("E", None, i), lower, upper, pmf, i))
    first = events[0]
    low = draw(st.integers(first.lower, first.upper))
    ranges = [(low, draw(st.integers(low, first.upper)))]
    return events, ranges + [(e.lower, e.upper) for e in events[1:]]


@st.composite
def batches(draw: Any) -> tuple[list[Any], int | None]:
    length = draw(st.integers(1, 4))
    pool: list[IntervalEvent] = []
    matches = []
    for _ in range(draw(st.integers(1, 6))):
        matches.append(draw(chain(length, pool)))
        pool += [e for e in matches[-1][0] if e not in pool]
    return matches, draw(st.none() | st.integers(0, 8))


@settings(max_examples=150, deadline=None)
@given(batches())
def test_each_match_of_a_batch_equals_its_listed_point_matches(case: Any) -> None:
    batch, window = case
    found_all = any_confidences([m[0] for m in batch], [m[1] for m in batch], window)
    for (events, ranges), found in zip(batch, found_all, strict=True):
        matches = list(point_matches(events, ranges, window))
        if not matches:
            assert found is None
            continue
        weights = [prod(e.prob(t) for e, t in zip(events, ts, strict=True)) for ts in matches]
        assert found is not None
        confidence, start, end = found
        assert isinstance(confidence, float) and abs(confidence - sum(weights)) <= 1e-12
        assert start == min(t[0] for t in matches)
        assert end == max(t[-1] for t in matches)


# a push's results and the batches it ran: each batch's size and whether an exact
# event went into it
Push = tuple[int, list[tuple[int, bool]]]


def _batched_and_one_by_one(
    monkeypatch: pytest.MonkeyPatch, method: str, exact_every: int | None
) -> tuple[list[tuple[Any, ...]], list[Push]]:
    """805 matches of length 3 over 300 events of the section 5.1 stream (δ = 3), in
    pushes of 100 events (each completes more than the batch threshold); with
    ``exact_every`` k, every k-th event carries exact probabilities. The results
    batched (equal to those one by one) and, per push of them (the flush last), a
    :data:`Push`."""
    from kleene.datagen.uncertain import generate

    text = (
        "PATTERN SEQ(E a, E b, E c) WHERE a.value % 10 < 2 AND b.value % 10 = 2 "
        "AND c.value % 10 = 3 WITHIN 40"
    )
    rows = generate(300, delta=3).to_pylist()
    if exact_every is not None:
        for row in rows[::exact_every]:
            row["pmf"] = [Fraction(1, 7)] * 7
    q = kleene.compile(
        text, time="interval", strategy="skip_till_any_match", u_max=6, method=method
    )
    ran: list[tuple[int, bool]] = []  # the batches of the push under way

    def spy(matches: Any, valid: Any, window: Any) -> Any:
        exact = any(isinstance(p, Fraction) for m in matches for e in m for p in e.pmf)
        ran.append((len(matches), exact))
        return any_confidences(matches, valid, window)

    def results(pushes: list[Push]) -> list[tuple[Any, ...]]:
        m = q.matcher()
        found: list[Any] = []
        for k in [*range(0, len(rows), 100), len(rows)]:  # the flush last
            out = m.push(rows[k : k + 100]) if k < len(rows) else m.flush()
            pushes.append((len(out), ran[:]))
            ran.clear()
            found += out
        return sorted((tuple(sorted(r.ids().items())), r.start, r.end, r.confidence) for r in found)

    monkeypatch.setattr(event_framework, "any_confidences", spy)
    pushes: list[Push] = []
    batched = results(pushes)
    monkeypatch.setattr(event_framework, "_BATCH", 10**9)
    single = results([])
    assert [r[:3] for r in batched] == [r[:3] for r in single]
    assert all(abs(a[3] - b[3]) <= 1e-12 for a, b in zip(batched, single, strict=True))
    return batched, pushes


@pytest.mark.parametrize("method", ["any", "query", "selectivity"])
def test_a_push_gives_the_same_results_batched_or_one_by_one(
    method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    batched, pushes = _batched_and_one_by_one(monkeypatch, method, None)
    went = sum(size for _, ran in pushes for size, _ in ran)
    assert went > len(batched) / 2  # most went batched


def test_exact_events_leave_the_batch_and_the_rest_stays_in_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every fifth event carries exact probabilities: in each push, its matches go one
    by one and the others still go batched; the results equal those of every match one
    by one."""
    _, pushes = _batched_and_one_by_one(monkeypatch, "any", 5)
    for results, ran in pushes[:-1]:  # the pushes of 100 events
        assert [exact for _, exact in ran] == [False]  # one batch, no exact event in it
        assert 0 < ran[0][0] < results - 20  # many of the push's matches not in it


@settings(max_examples=30, deadline=None)
@given(batches())
def test_a_batch_split_into_parts_gives_the_same_results(case: Any) -> None:
    """The memory bound splits a batch into parts (here one match each): every match
    gets the result it gets in one part with the others, its confidence up to rounding
    (the batch's width can change the summation order), its time range exactly."""
    from kleene.imprecise import batch as batch_module

    matches, window = case
    events, valid = [m[0] for m in matches], [m[1] for m in matches]
    whole = any_confidences(events, valid, window)
    cells = batch_module._CELLS
    try:
        batch_module._CELLS = 1
        parts = any_confidences(events, valid, window)
    finally:
        batch_module._CELLS = cells
    assert [f is None for f in parts] == [f is None for f in whole]
    for a, b in zip(parts, whole, strict=True):
        if a is not None and b is not None:
            assert a[1:] == b[1:] and abs(a[0] - b[0]) <= 1e-12
