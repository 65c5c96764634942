"""The matcher on the paper's worked examples and on hand-made corner cases
(sections 5.2-5.3: Figure 3, Figure 4, Table 2, duration constraints, the window)."""

from __future__ import annotations

import pytest

from kleene.errors import KleeneError
from kleene.tpstream.matcher import SituationMatcher
from kleene.tpstream.model import Allen, Constraint, Situation, TemporalPattern

A = Allen


def sit(symbol, start, end=None):
    return Situation(symbol, ("k",), start, end, 0, 0)


def pattern(*constraints, window=1000, durations=None, symbols=None):
    cs = tuple(Constraint(a, b, frozenset(rels)) for a, rels, b in constraints)
    names = symbols or tuple(sorted({c.left for c in cs} | {c.right for c in cs}))
    return TemporalPattern(names, cs, window, durations or {})


def feed(matcher, events):
    """events: (time, [started], [finished]); returns [(detected, {symbol: start})]."""
    out = []
    for t, started, finished in events:
        for m in matcher.update(t, started, finished):
            out.append((m.detected, {x: s.start for x, s in m.situations.items()}))
    return out


def lifecycle(*situations):
    """Report each (symbol, start, end) started at its start and finished at its end."""
    by_time: dict = {}
    for x, s, e in situations:
        by_time.setdefault(s, ([], []))[0].append(sit(x, s))
        by_time.setdefault(e, ([], []))[1].append(sit(x, s, e))
    return [(t, *by_time[t]) for t in sorted(by_time)]


def test_figure3_range_query_finds_the_overlapping_partner_only():
    # A1 = [2, 8); B1 = [5, 12) overlaps it, B2 = [13, 20) ends later but starts after.
    p = pattern(("A", {A.OVERLAPS}, "B"))
    m = SituationMatcher(p, ("A", "B"), low_latency=False)
    events = lifecycle(("B", 5, 12), ("B", 13, 20), ("A", 2, 8))
    assert feed(m, events) == [(12, {"A": 2, "B": 5})]


@pytest.mark.parametrize(
    ("relation", "a", "b", "detected"),
    [
        (A.BEFORE, (0, 2), (5, 9), 5),  # t3 = B.ts
        (A.MEETS, (0, 5), (5, 9), 5),
        (A.OVERLAPS, (0, 6), (3, 9), 6),  # A.te
        (A.STARTS, (0, 4), (0, 9), 4),
        (A.STARTED_BY, (0, 9), (0, 4), 4),  # B.te
        (A.EQUALS, (0, 9), (0, 9), 9),
        (A.FINISHED_BY, (0, 9), (3, 9), 9),
        (A.CONTAINS, (0, 9), (3, 6), 6),
        (A.DURING, (3, 6), (0, 9), 6),
        (A.AFTER, (5, 9), (0, 2), 5),
    ],
)
def test_table2_detection_time_per_relation(relation, a, b, detected):
    p = pattern(("A", {relation}, "B"))
    got = feed(SituationMatcher(p), lifecycle(("A", *a), ("B", *b)))
    assert got == [(detected, {"A": a[0], "B": b[0]})]


def test_whole_prefix_group_is_detected_at_the_later_start():
    # overlaps, finished-by and contains are all left open at B.ts while A runs.
    p = pattern(("A", {A.OVERLAPS, A.FINISHED_BY, A.CONTAINS}, "B"))
    for b_end in (7, 9, 12):  # contains, finished-by, overlaps
        got = feed(SituationMatcher(p), lifecycle(("A", 0, 9), ("B", 3, b_end)))
        assert got == [(3, {"A": 0, "B": 3})]
    # Without the whole group the same configurations wait for t3.
    part = pattern(("A", {A.OVERLAPS, A.FINISHED_BY}, "B"))
    assert feed(SituationMatcher(part), lifecycle(("A", 0, 9), ("B", 3, 12))) == [
        (9, {"A": 0, "B": 3})
    ]
    assert feed(SituationMatcher(part), lifecycle(("A", 0, 9), ("B", 3, 7))) == []


def test_figure4_started_unrelated_situations_combine():
    # A before B, A before C, A before D, (D during C or C finishes D or C meets D).
    p = pattern(
        ("A", {A.BEFORE}, "B"),
        ("A", {A.BEFORE}, "C"),
        ("A", {A.BEFORE}, "D"),
        ("C", {A.CONTAINS, A.FINISHES, A.MEETS}, "D"),  # D during C = C contains D
    )
    # Configuration 2: C meets D; B and D both running when D starts.
    got = feed(SituationMatcher(p), lifecycle(("A", 0, 2), ("C", 3, 6), ("B", 5, 20), ("D", 6, 9)))
    assert got == [(6, {"A": 0, "B": 5, "C": 3, "D": 6})]
    # Configuration 1: B is the trigger, starting last.
    got = feed(SituationMatcher(p), lifecycle(("A", 0, 2), ("C", 3, 6), ("D", 6, 9), ("B", 10, 20)))
    assert got == [(10, {"A": 0, "B": 10, "C": 3, "D": 6})]
    # Configuration 3: D during C, known when D ends while C runs.
    got = feed(SituationMatcher(p), lifecycle(("A", 0, 2), ("C", 3, 20), ("B", 4, 30), ("D", 5, 9)))
    assert got == [(9, {"A": 0, "B": 4, "C": 3, "D": 5})]


def test_minimum_duration_defers_detection_to_the_deferred_start():
    # A during B, B at least 10: B.ts < A.ts < A.te < B.ts' < B.te (section 5.3).
    p = pattern(("A", {A.DURING}, "B"), durations={"B": (10, None)})
    events = [
        (2, [sit("A", 2)], []),
        (4, [], [sit("A", 2, 4)]),
        (10, [sit("B", 0)], []),  # deferred start: 0 + 10
        (15, [], [sit("B", 0, 15)]),
    ]
    assert feed(SituationMatcher(p), events) == [(10, {"A": 2, "B": 0})]


def test_maximum_duration_defers_detection_to_the_end():
    # A before B, B at most 30: B is never reported started; the window (10) holds
    # since the pair is established at B.ts = 6, though B is only known at 30.
    p = pattern(("A", {A.BEFORE}, "B"), window=10, durations={"B": (None, 30)})
    events = [
        (0, [sit("A", 0)], []),
        (1, [], [sit("A", 0, 1)]),
        (20, [sit("A", 20)], []),  # purging at 20 must keep A = [0, 1)
        (25, [], [sit("A", 20, 25)]),
        (30, [], [sit("B", 6, 30)]),
    ]
    for low_latency in (True, False):
        got = feed(SituationMatcher(p, low_latency=low_latency), events)
        assert got == [(30, {"A": 0, "B": 6})]


def test_sparse_events_defer_a_minimum_duration_past_start_plus_minimum():
    # B at least 5 starts at 4, but the next event of the partition is at 40.
    p = pattern(("A", {A.BEFORE}, "B"), window=10, durations={"B": (5, None)})
    events = [
        (0, [sit("A", 0)], []),
        (2, [], [sit("A", 0, 2)]),
        (40, [sit("B", 4)], []),
        (50, [], [sit("B", 4, 50)]),
    ]
    assert feed(SituationMatcher(p), events) == [(40, {"A": 0, "B": 4})]
    assert feed(SituationMatcher(p, low_latency=False), events) == [(50, {"A": 0, "B": 4})]


def test_window_bounds_the_time_the_match_is_established():
    before = pattern(("A", {A.BEFORE}, "B"), window=10)
    events = lifecycle(("A", 0, 2), ("B", 5, 100))  # established at 5
    for low_latency in (True, False):
        got = feed(SituationMatcher(before, low_latency=low_latency), events)
        assert [start for _, start in got] == [{"A": 0, "B": 5}]
    overlaps = pattern(("A", {A.OVERLAPS}, "B"), window=10)  # established at A.te = 50
    for low_latency in (True, False):
        m = SituationMatcher(overlaps, low_latency=low_latency)
        assert feed(m, lifecycle(("A", 0, 50), ("B", 5, 100))) == []
        m = SituationMatcher(overlaps, low_latency=low_latency)
        assert feed(m, lifecycle(("A", 0, 10), ("B", 5, 100))) != []


def test_unconstrained_symbol_is_joined_within_the_window():
    p = pattern(("A", {A.BEFORE}, "B"), window=10, symbols=("A", "B", "C"))
    events = lifecycle(("C", 0, 1), ("A", 2, 3), ("B", 4, 5), ("C", 30, 31))
    got = feed(SituationMatcher(p, ("C", "A", "B")), events)
    assert got == [(4, {"A": 2, "B": 4, "C": 0})]


def test_snapshot_restore_and_order_switch_continue_the_stream():
    p = pattern(("A", {A.BEFORE, A.MEETS}, "B"), ("B", {A.OVERLAPS, A.CONTAINS}, "C"))
    events = lifecycle(("A", 0, 2), ("B", 3, 9), ("C", 5, 12), ("A", 10, 11), ("B", 13, 20))
    events += lifecycle(("C", 14, 25))
    events.sort(key=lambda e: e[0])
    whole = feed(SituationMatcher(p), events)
    assert whole
    for cut in range(len(events)):
        m = SituationMatcher(p, ("A", "B", "C"))
        first = feed(m, events[:cut])
        data = m.state()
        restored = SituationMatcher.restore(p, data)
        restored.set_order(("C", "B", "A"))
        assert first + feed(restored, events[cut:]) == whole


def test_statistics_count_range_query_candidates_and_survivors():
    p = pattern(("A", {A.BEFORE}, "B"))
    m = SituationMatcher(p, ("A", "B"), low_latency=False)
    feed(m, lifecycle(("B", 0, 1), ("B", 2, 3), ("A", 4, 5), ("B", 6, 7)))
    stats = m.statistics()
    assert stats.buffer_sizes == {"A": 1, "B": 3}
    # A = [4, 5) ends: two B candidates, none after it; B = [6, 7) ends: one A, kept.
    assert (stats.candidates, stats.survivors) == ((3,), (1,))
    assert stats.selectivity(0) == 1 / 3
    # each of the 4 ends joins the other buffer by one range query: the two over a
    # non-empty buffer measure the selectivity, the two over an empty one are not run
    # and count as work only
    assert stats.queries == (2,)
    assert m.state()["idle"] == [2]


def test_restored_counters_keep_counting():
    # The join writes into the matcher's counter lists: a restore must refill those
    # lists, not replace them, or the counts would stop growing; a state saved
    # before the range queries were counted restores with them at zero.
    p = pattern(("A", {A.BEFORE}, "B"))
    events = lifecycle(("B", 0, 1), ("A", 2, 3), ("B", 4, 5), ("A", 6, 7), ("B", 8, 9))
    whole = SituationMatcher(p, ("A", "B"), low_latency=False)
    feed(whole, events)
    half = SituationMatcher(p, ("A", "B"), low_latency=False)
    feed(half, events[:5])
    restored = SituationMatcher.restore(p, half.state())
    feed(restored, events[5:])
    assert restored.state()["queries"] == whole.state()["queries"]
    assert restored.state()["idle"] == whole.state()["idle"]
    assert restored.statistics() == whole.statistics()
    old = half.state()
    del old["queries"], old["idle"]
    older = SituationMatcher.restore(p, old)
    assert older.state()["queries"] == [0] and older.state()["idle"] == [0]
    feed(older, events[5:])
    assert older.state()["queries"][0] > 0
    for name, bad in (
        ("idle", [0, 0]),
        ("queries", ["1"]),
        ("candidates", [-1]),
        ("survivors", None),
    ):
        broken = half.state()
        broken[name] = bad
        with pytest.raises(KleeneError, match=f"the matcher's {name} must be 1 counts"):
            SituationMatcher.restore(p, broken)


def test_order_must_name_every_symbol_once():
    p = pattern(("A", {A.BEFORE}, "B"))
    with pytest.raises(KleeneError, match="evaluation order"):
        SituationMatcher(p, ("A", "A"))
