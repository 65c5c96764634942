"""The worked valid bounds of VLDB 2010, Figure 3(a)-(d) (sections 4.1-4.2, Appendices
C.1-C.2), and the confidence of Algorithm 2 on the running example.

The running example's intervals are those of Figure 1 as the text gives them: a1 [1, 5],
c2 [3, 5], b3 [3, 5]. Figure 3(c)'s events a1, b5, c6 are not given: a1 [1, 5] is the
running example's, and the bounds the text states fix c6 = [6, 7] (vlb 6, rub 7) and
b5's upper bound 3 (rub 3) with a lower bound of at most 2 (vlb 2); [2, 3] is taken.
The paper's window is exclusive (T_m = a1.rub + W - 1 with W = 4); kleene's is inclusive
(t_l - t_1 <= W), so the paper's W = 4 is kleene's WITHIN 3.
"""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.imprecise import bounds
from kleene.imprecise.admission import Admission
from kleene.imprecise.confidence import any_confidence
from kleene.imprecise.events import EventFramework

A1, B3, C2 = (1, 5), (3, 5), (3, 5)
B5, C6 = (2, 3), (6, 7)


def test_figure_3ab_three_passes_in_query_order() -> None:
    passes = bounds.three_passes([A1, B3, C2], window=None)
    assert passes.vlb == (1, 3, 4)  # a1.vlb = 1, b3.vlb = 3, c2.vlb = 4 (Fig. 3(a))
    assert passes.rub == (3, 4, 5)  # c2.rub = 5, b3.rub = 4, a1.rub = 3 (Fig. 3(b))
    assert passes.vub == passes.rub and passes.valid


def test_figure_3c_window_prunes_in_the_third_pass() -> None:
    passes = bounds.three_passes([A1, B5, C6], window=3)
    assert passes.vlb == (1, 2, 6) and passes.rub == (2, 3, 7)
    assert passes.vub[-1] == 5  # T_m = 5 < c6.vlb = 6: pruned
    assert not passes.valid
    # kleene's WITHIN 4 allows one more instant: c6 at 6, a1 at 2 fit
    assert bounds.three_passes([A1, B5, C6], window=4).valid


def test_figure_3c_one_pass_form() -> None:
    """Appendix C.1: on c6's arrival c6.vlb = 6, c6.vub = 7, b5.vub = 3, a1.vub = 2,
    and the window test c6.vlb <= a1.vub + W fails."""
    prefix = bounds.extend(bounds.extend((), A1, 3) or (), B5, 3)
    assert prefix == ((1, 2), (2, 3))
    assert bounds.extend(prefix, C6, None) == ((1, 2), (2, 3), (6, 7))
    assert bounds.extend(prefix, C6, 3) is None
    assert bounds.extend(prefix, C6, 4) == ((1, 2), (2, 3), (6, 7))


def test_figure_3d_any_state_updates() -> None:
    """The run (a1, -, c2) keeps both uncertainty intervals (not adjacent); b3 then
    gives b3.vlb = 3, b3.vub = 4, c2.vlb = 4, a1.vub = 3, as in Figure 3(b)."""
    run = bounds.place((None, None, None), 0, A1, None)
    assert run is not None
    run = bounds.place(run, 2, C2, None)
    assert run == (A1, None, C2)
    assert bounds.place(run, 1, B3, None) == ((1, 3), (3, 4), (4, 5))


def test_figure_3d_runs_of_the_any_state_method() -> None:
    """a1 creates (a1,-,-); c2 adds (a1,-,c2) and (-,-,c2); b3 clones the three runs
    and extends them, completing (a1, b3, c2), and adds (-,b3,-)."""
    text = "PATTERN SEQ(A a, B b, C c)"
    q = kleene.compile(text, time="interval", strategy="skip_till_any_match", exact=True, u_max=9)
    admission = Admission(q.plan, q.fields, q.interval)
    framework = EventFramework(q.plan, None, 9, q.keep, "any")
    stream = [("a1", "A", A1), ("c2", "C", C2), ("b3", "B", B3)]
    found = []
    for eid, etype, (lower, upper) in stream:
        event = {"id": eid, "type": etype, "lower": lower, "upper": upper}
        found += framework.push(admission.admit([event]), admission.now_lower)
    runs = {tuple(e.id if e else "-" for e in run.events) for run in framework.runs}
    assert runs == {
        ("a1", "-", "-"),
        ("a1", "-", "c2"),
        ("-", "-", "c2"),
        ("a1", "b3", "-"),
        ("-", "b3", "c2"),
        ("-", "b3", "-"),
    }
    (m,) = found
    assert m.ids() == {"a": ("a1",), "b": ("b3",), "c": ("c2",)}
    assert m.confidence == Fraction(7, 45)  # counted below


def test_algorithm_2_counts_the_ordered_placements() -> None:
    """a1 [1,5], b3 [3,5], c2 [3,5] uniform: 45 placements. a < b < c: b = 3 with
    a in {1,2}, c in {4,5} (4) or b = 4 with a in {1,2,3}, c = 5 (3): 7/45. With
    WITHIN 3 (c - a <= 3): (a,b,c) in (1,3,4), (2,3,4), (2,3,5), (2,4,5), (3,4,5): 5/45."""
    a, b, c = (_event(i, iv) for i, iv in enumerate((A1, B3, C2)))
    valid = bounds.three_passes([A1, B3, C2], None)
    intervals = list(zip(valid.vlb, valid.vub, strict=True))
    assert any_confidence([a, b, c], intervals, None, {}) == (Fraction(7, 45), 1, 5)
    assert any_confidence([a, b, c], intervals, 3, {}) == (Fraction(5, 45), 1, 5)
    # a1 at 4 or 5 starts no match (its valid interval [1, 3] leaves them out)
    assert any_confidence([a, b, c], [(4, 5), B3, C2], None, {}) is None
    # a1 at 3 only: (3, 4, 5), 1 of 9 placements of b3 and c2, times P[a1 = 3] = 1/5
    assert any_confidence([a, b, c], [(3, 3), B3, C2], 3, {}) == (Fraction(1, 45), 3, 5)


def _event(position: int, interval: tuple[int, int]) -> kleene.imprecise.IntervalEvent:
    lower, upper = interval
    n = upper - lower + 1
    return kleene.imprecise.IntervalEvent(
        ("T", None, position), lower, upper, (Fraction(1, n),) * n, position
    )


def _place_reference(
    slots: bounds.Slots, j: int, interval: bounds.Interval, window: float | None
) -> bounds.Slots | None:
    """Appendix C.2, step 2, as written: both passes over the whole block of matched
    components around j, then every interval of the block checked (the form
    :func:`bounds.place` had before it learnt to stop at the first unchanged bound)."""
    out = list(slots)
    out[j] = interval
    start = end = j
    while start > 0 and out[start - 1] is not None:
        start -= 1
    while end + 1 < len(out) and out[end + 1] is not None:
        end += 1
    for k in range(j, end + 1):
        if k > start:
            lo, hi = out[k]  # type: ignore[misc]
            out[k] = (max(out[k - 1][0] + 1, lo), hi)  # type: ignore[index]
    for k in range(j, start - 1, -1):
        if k < end:
            lo, hi = out[k]  # type: ignore[misc]
            out[k] = (lo, min(out[k + 1][1] - 1, hi))  # type: ignore[index]
    if any(s is not None and s[0] > s[1] for s in out[start : end + 1]):
        return None
    matched = [s for s in out if s is not None]
    if window is not None and matched[-1][0] > matched[0][1] + window:
        return None
    return tuple(out)


_steps = st.lists(
    st.tuples(
        st.integers(0, 4),
        st.integers(0, 12).flatmap(lambda lo: st.tuples(st.just(lo), st.integers(lo, lo + 6))),
    ),
    min_size=1,
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(_steps, st.sampled_from([None, 2, 5, 9]), st.integers(2, 5))
def test_place_stops_at_the_first_unchanged_bound_with_the_same_result(
    steps: list[tuple[int, bounds.Interval]], window: float | None, length: int
) -> None:
    """bounds.place stops each pass at the first bound it leaves unchanged and checks
    only the intervals it changed: on every run built by placements, it gives exactly
    the valid intervals (or the refusal) of both passes over the whole block."""
    slots: bounds.Slots = (None,) * length
    for j, interval in steps:
        j %= length
        if slots[j] is not None:
            continue
        expected = _place_reference(slots, j, interval, window)
        assert bounds.place(slots, j, interval, window) == expected
        if expected is not None:
            slots = expected


def _extend_reference(
    prefix: bounds.Slots, interval: bounds.Interval, window: float | None
) -> bounds.Slots | None:
    """Appendix C.1's one-pass form as written: the new event's vlb from the last one's,
    then every vub of the prefix lowered backwards, then the checks (the form
    :func:`bounds.extend` had before it learnt to stop at the first unchanged vub)."""
    lower, upper = interval
    vlb = lower if not prefix else max(prefix[-1][0] + 1, lower)  # type: ignore[index]
    if vlb > upper:
        return None
    if prefix and window is not None and vlb > prefix[0][1] + window:  # type: ignore[index]
        return None
    out: list[bounds.Interval | None] = [*prefix, (vlb, upper)]
    for j in range(len(prefix) - 1, -1, -1):
        lo, hi = out[j]  # type: ignore[misc]
        out[j] = (lo, min(out[j + 1][1] - 1, hi))  # type: ignore[index]
    return tuple(out)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.integers(0, 12).flatmap(lambda lo: st.tuples(st.just(lo), st.integers(lo - 1, lo + 6))),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from([None, 2, 5, 9]),
)
def test_extend_stops_at_the_first_unchanged_vub_with_the_same_result(
    intervals: list[bounds.Interval], window: float | None
) -> None:
    """bounds.extend stops lowering vubs at the first it leaves unchanged: on every
    prefix built by extensions it gives the valid intervals (or the refusal) of the
    pass over the whole prefix, and ``finish`` on it gives the valid intervals of the
    three passes (or None when one is empty)."""
    prefix: bounds.Slots = ()
    for interval in intervals:
        expected = _extend_reference(prefix, interval, window)
        assert bounds.extend(prefix, interval, window) == expected
        if expected is None:
            return
        prefix = expected
        passes = bounds.three_passes(intervals[: len(prefix)], window)
        valid = bounds.finish(prefix, window)
        if passes.valid:
            assert valid == tuple(zip(passes.vlb, passes.vub, strict=True))
        else:
            assert valid is None
