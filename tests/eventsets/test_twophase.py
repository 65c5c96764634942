"""The two-phase strategy's parts on small hand-made streams: the summary statistics
never reject a window holding a match at its first event, partitioning (Definition 6)
and the end-of-stream loop."""

from __future__ import annotations

from typing import Any

import pytest

from kleene.errors import KleeneError, SnapshotError
from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.filtering import PropertyBits
from kleene.eventsets.jointree import JoinTreeMatcher
from kleene.eventsets.model import SesMatch
from kleene.eventsets.partitioning import partition_attributes, partition_key
from kleene.eventsets.twophase import Flags, TwoPhase
from kleene.runtime import snapshot


def _events(*rows: tuple[str, int]) -> list[dict[str, Any]]:
    return [{"type": label, "K": 1, "timestamp": t} for label, t in rows]


def _keys(matches: list[SesMatch]) -> set[tuple[Any, ...]]:
    return {m.key() for m in matches}


C_THEN_B = ses_pattern("PATTERN SEQ({C c}, {B b}) WITHIN 10")


def test_an_event_never_counted_is_not_uncounted() -> None:
    """b@0 precedes every C, so it is not counted for b; when it leaves, cnt_b must stay
    1 (b@2 after c@1). Decrementing every variable the event satisfies (the paper's
    wording) would drop cnt_b to 0 and lose the match {c/1, b/2}."""
    events = _events(("B", 0), ("C", 1), ("B", 2), ("X", 20))
    found = TwoPhase(C_THEN_B, JoinTreeMatcher).run(events)
    assert _keys(found) == {SesMatch({"c": (1,), "b": (2,)}).key()}


def test_events_counted_before_a_reset_are_not_uncounted() -> None:
    """c@0 leaves at c@6 and resets the counters of p and b, which held p@4 and b@5.
    p@7 and b@8 are counted afresh; when p@4 and b@5 leave later, the counts of p@7
    and b@8 must survive, or the window starting at c@6 is rejected."""
    three = ses_pattern("PATTERN SEQ({C c}, {P p}, {B b}) WITHIN 5")
    events = _events(("C", 0), ("P", 4), ("B", 5), ("C", 6), ("P", 7), ("B", 8), ("C", 20))
    found = TwoPhase(three, JoinTreeMatcher).run(events)
    assert _keys(found) == {
        SesMatch({"c": (0,), "p": (1,), "b": (2,)}).key(),
        SesMatch({"c": (3,), "p": (4,), "b": (5,)}).key(),
    }


def test_drain_skips_a_first_event_of_a_later_set() -> None:
    """At the end of the stream the window starts with a B (condition 5 fails), but a
    match starts at the C after it: the drain goes on (Algorithm 1's loop would stop)."""
    events = _events(("B", 0), ("C", 1), ("B", 2))
    assert _keys(TwoPhase(C_THEN_B, JoinTreeMatcher).run(events)) == {
        SesMatch({"c": (1,), "b": (2,)}).key()
    }


@pytest.mark.parametrize(
    ("where", "attributes"),
    [
        ("a.K = b.K AND c.K = b.K", ("K",)),  # closed transitively: a.K = c.K
        ("a.K = b.K AND c.K = b.K AND a.J = b.J AND b.J = c.J", ("J", "K")),
        ("a.K = b.K", ()),  # c is not related
        ("a.K = b.K AND b.J = c.J", ()),  # two attributes, neither relates all
        ("a.K = b.K AND b.K < c.K", ()),  # only equalities partition
        ("a.K = b.J AND b.J = c.K", ()),  # over one attribute only (Definition 6)
    ],
)
def test_partitioning_attributes(where: str, attributes: tuple[str, ...]) -> None:
    query = f"PATTERN SEQ({{A a, B b}}, {{C c}}) WHERE {where} WITHIN 5"
    assert partition_attributes(ses_pattern(query)) == attributes


def test_one_variable_has_no_partitioning() -> None:
    assert partition_attributes(ses_pattern("PATTERN SEQ({A+ a}) WITHIN 5")) == ()


def test_an_event_without_a_usable_key_is_in_no_partition() -> None:
    assert partition_key({"K": 1}, ("K",)) == (1,)
    assert partition_key({"K": None}, ("K",)) is None
    assert partition_key({"K": float("nan")}, ("K",)) is None
    assert partition_key({}, ("K",)) is None


def test_partitioned_equality_removed_still_exact_for_nulls() -> None:
    """Two events with a null K would satisfy the pattern once c.K = b.K is removed,
    were they put in one partition: they are in none, as the relationship fails."""
    p = ses_pattern("PATTERN SEQ({C c}, {B b}) WHERE c.K = b.K WITHIN 10")
    events = [
        {"type": "C", "K": None, "timestamp": 0},
        {"type": "B", "K": None, "timestamp": 1},
        {"type": "C", "K": 2, "timestamp": 2},
        {"type": "B", "K": 2, "timestamp": 3},
    ]
    expected = {SesMatch({"c": (2,), "b": (3,)}).key()}
    assert _keys(TwoPhase(p, JoinTreeMatcher).run(events)) == expected
    assert _keys(JoinTreeMatcher(p).run_all(events)) == expected


def test_push_and_flush_equal_run() -> None:
    events = _events(("C", 0), ("B", 3), ("C", 5), ("B", 12), ("C", 13), ("B", 30), ("B", 31))
    strategy = TwoPhase(C_THEN_B, JoinTreeMatcher)
    found = [f for p, event in enumerate(events) for f in strategy.push(p, event)]
    pushed = [f.match for f in [*found, *strategy.flush()]]
    assert _keys(pushed) == _keys(TwoPhase(C_THEN_B, JoinTreeMatcher).run(events))
    assert _keys(pushed) == {
        SesMatch({"c": (0,), "b": (1,)}).key(),
        SesMatch({"c": (2,), "b": (3,)}).key(),
    }


def test_advance_completes_the_windows_of_every_partition() -> None:
    """A clock past τ after the last event completes both partitions' windows."""
    query = "PATTERN SEQ({C c}, {B b}) WHERE c.K = b.K WITHIN 10"
    strategy = TwoPhase(ses_pattern(query), JoinTreeMatcher)
    rows = [("C", 1, 0), ("C", 2, 1), ("B", 1, 2), ("B", 2, 3)]
    for p, (t, k, time) in enumerate(rows):
        assert list(strategy.push(p, {"type": t, "K": k, "timestamp": time})) == []
    assert list(strategy.advance(10)) == []  # within τ of the first events still
    found = list(strategy.advance(12))
    assert _keys([f.match for f in found]) == {
        SesMatch({"c": (0,), "b": (2,)}).key(),
        SesMatch({"c": (1,), "b": (3,)}).key(),
    }
    assert found[0].rows[0]["type"] == "C"
    list(strategy.advance(30))
    assert not strategy.windows  # emptied windows are forgotten
    assert list(strategy.push(4, {"type": "C", "K": 1, "timestamp": 30})) == []


def test_events_out_of_time_order_are_refused() -> None:
    with pytest.raises(KleeneError, match="time order"):
        TwoPhase(C_THEN_B, JoinTreeMatcher).run(_events(("C", 5), ("B", 1)))


def test_flags_by_name() -> None:
    assert Flags.parse("fpc") == Flags(True, True, True)
    assert Flags.parse("none") == Flags(False, False, False)
    assert Flags.parse("fc").name == "fc"
    with pytest.raises(KleeneError, match="unknown pruning"):
        Flags.parse("fx")


def test_explain_says_which_steps_apply_and_why() -> None:
    query = "PATTERN SEQ({C c}, {B b}) WHERE c.K = b.K WITHIN 10"
    lines = TwoPhase(ses_pattern(query), JoinTreeMatcher).explain()
    assert "Theorem 1" in lines[1]
    assert "one window per K" in lines[2] and "c.K = b.K" in lines[2]
    assert "at least 2 events" in lines[3]
    lines = TwoPhase(ses_pattern("PATTERN SEQ({C c}, {B b}) WITHIN 10"), JoinTreeMatcher).explain()
    assert "partitioning: no effect" in lines[2]
    off = TwoPhase(ses_pattern(query), JoinTreeMatcher, False, False, False).explain()
    assert [line.split(":")[1].strip() for line in off[1:3]] == ["off", "off"]


def test_a_snapshot_resumes_where_it_left_off() -> None:
    """Half of a partitioned stream, saved through the snapshot format and resumed by
    a new strategy, then the other half: the matches of one uninterrupted run."""
    query = "PATTERN SEQ({C c, P+ p}, {B b}) WHERE c.K = p.K AND p.K = b.K WITHIN 6"
    pattern = ses_pattern(query)
    labels = "CPBPCBPPBCBB"
    events = [{"type": t, "K": i % 2, "timestamp": i} for i, t in enumerate(labels)]
    whole = TwoPhase(pattern, JoinTreeMatcher).run(events)
    first = TwoPhase(pattern, JoinTreeMatcher)
    found = [f for p in range(7) for f in first.push(p, events[p])]
    saved = snapshot.dumps(first.to_data())
    second = TwoPhase(pattern, JoinTreeMatcher)
    second.load(snapshot.loads(saved), below=7)
    found += [f for p in range(7, len(events)) for f in second.push(p, events[p])]
    found += list(second.flush())
    assert whole and _keys([f.match for f in found]) == _keys(whole)
    assert len(found) == len(whole)


def test_a_malformed_snapshot_is_refused() -> None:
    strategy = TwoPhase(C_THEN_B, JoinTreeMatcher)
    list(strategy.push(0, {"type": "C", "K": 1, "timestamp": 0}))
    data = strategy.to_data()
    strategy.load(data, below=1)
    assert [e.position for w in strategy.windows.values() for e in w.entries] == [0]
    with pytest.raises(SnapshotError, match="not a record"):
        strategy.load({**data, "extra": 1}, below=1)
    with pytest.raises(SnapshotError, match="position"):
        strategy.load({**data, "windows": [((), [(5, {"timestamp": 0})])]}, below=1)


def test_bit_vectors_of_a_batch_equal_those_of_each_event() -> None:
    """Column-wise where the columnar backend is exact, event by event where it gives
    up (mixed kinds, a missing value): the same bits either way, by the IR's rules (an
    ordering of a string and a number, or a missing value, is false)."""
    pattern = ses_pattern("PATTERN SEQ({A a, B b}, {C c}) WHERE a.V > 2 AND c.V = 'x' WITHIN 5")
    bits = PropertyBits(pattern)
    clean = [{"type": t, "V": v, "timestamp": 0} for t, v in zip("ABCA", (3, 1, 2, 1), strict=True)]
    mixed = [
        {"type": "A", "V": "z", "timestamp": 0},
        {"type": "A", "V": 5, "timestamp": 0},
        {"type": "C", "V": "x", "timestamp": 0},
        {"type": "C", "timestamp": 0},
        {"type": "B", "V": None, "timestamp": 0},
    ]
    assert bits.of_batch(clean) == [bits.of(e) for e in clean] == [0b100, 0b010, 0, 0]
    assert bits.of_batch(mixed) == [bits.of(e) for e in mixed] == [0, 0b100, 0b001, 0, 0b010]
