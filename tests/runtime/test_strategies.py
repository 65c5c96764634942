"""Event selection strategies on hand-worked streams (SIGMOD 2014 Figure 3 and more)."""

import pytest

import kleene
from tests.helpers import id_sets, match, stream

FIGURE3 = stream("a1@1", "a2@2", "b1@5", "b2@6", "c1@7")
SEQ_ABC = "PATTERN SEQ(A a, B+ b[], C c) WITHIN 10"


def run(text, events, **options):
    return id_sets(kleene.compile(text, **options).run(events))


def test_figure3_strict_contiguity_only_the_contiguous_run():
    # a1's run dies at a2, which is neither B nor ignorable under strict contiguity
    assert run(SEQ_ABC, FIGURE3, strategy="strict_contiguity") == {
        match(a="a2", b=("b1", "b2"), c="c1")
    }


def test_figure3_skip_till_next_match_takes_every_relevant_event():
    assert run(SEQ_ABC, FIGURE3, strategy="skip_till_next_match") == {
        match(a="a1", b=("b1", "b2"), c="c1"),
        match(a="a2", b=("b1", "b2"), c="c1"),
    }


def test_figure3_skip_till_any_match_gives_six_matches():
    assert run(SEQ_ABC, FIGURE3, strategy="skip_till_any_match") == {
        match(a=a, b=b, c="c1") for a in ("a1", "a2") for b in (("b1",), ("b2",), ("b1", "b2"))
    }


def test_partition_contiguity_keeps_partitions_apart():
    events = stream("a1@1", "a2@2", "b1@3", "b2@4", "c1@5", "c2@6", sym=list("xyxyxy"))
    text = "PATTERN SEQ(A a, B b, C c) WHERE partition_contiguity { [sym] } WITHIN 10"
    assert run(text, events) == {match(a="a1", b="b1", c="c1"), match(a="a2", b="b2", c="c2")}
    # the same stream under strict contiguity has no match: the partitions interleave
    assert run(text, events, strategy="strict_contiguity") == set()


def test_partition_contiguity_breaks_on_an_unusable_event_of_the_same_partition():
    events = stream("a1@1", "d1@2", "b1@3", sym=["x", "x", "x"])
    text = "PATTERN SEQ(A a, B b) WHERE partition_contiguity { [sym] }"
    assert run(text, events) == set()
    events[1]["sym"] = "y"  # now D belongs to another partition and is ignored
    assert run(text, events) == {match(a="a1", b="b1")}


def test_skip_till_next_match_kleene_splits_when_take_and_proceed_both_hold():
    events = stream("a1@1", "b1@2", "b2@3", "b3@4")
    text = "PATTERN SEQ(A a, B+ b[], B c) WHERE skip_till_next_match { } WITHIN 10"
    # at b2 the run both takes (stays in b[]) and proceeds to c; at b3 likewise
    assert run(text, events) == {
        match(a="a1", b="b1", c="b2"),
        match(a="a1", b=("b1", "b2"), c="b3"),
    }


def test_trailing_kleene_gives_one_match_per_prefix():
    events = stream("a1@1", "b1@2", "b2@3", "b3@4")
    text = "PATTERN SEQ(A a, B+ b[]) WHERE skip_till_next_match { }"
    assert run(text, events) == {
        match(a="a1", b=("b1",)),
        match(a="a1", b=("b1", "b2")),
        match(a="a1", b=("b1", "b2", "b3")),
    }


@pytest.mark.parametrize("time,expected", [(11, 1), (12, 0)])
def test_window_is_inclusive(time, expected):
    events = stream("a1@1", f"b1@{time}")
    assert len(run("PATTERN SEQ(A a, B b) WITHIN 10", events)) == expected


def test_equal_timestamps_follow_arrival_order():
    events = stream("a1@5", "b1@5")
    assert run("PATTERN SEQ(A a, B b)", events) == {match(a="a1", b="b1")}
    assert run("PATTERN SEQ(B b, A a)", events) == set()


def test_iterator_predicates_with_previous_and_aggregate():
    prices = [10, 11, 9, 12, 13, 1]
    events = stream("s1@1", "s2@2", "s3@3", "s4@4", "s5@5", "t1@6", price=prices)
    text = (
        "PATTERN SEQ(S+ a[], T b) WHERE skip_till_next_match "
        "{ a[i].price > avg(a[..i-1].price) and b.price < a[a.LEN].price } WITHIN 100"
    )
    got = run(text, events)
    # from s1: 11 > 10 taken, 9 < 10.5 ignored, 12 > 10.5 taken, 13 > 11 taken
    assert match(a=("s1", "s2", "s4", "s5"), b="t1") in got
    # from s3 (9): 12, 13 rise above the running average
    assert match(a=("s3", "s4", "s5"), b="t1") in got


def test_return_values_and_kleene_aggregates():
    events = stream("a1@1", "b1@2", "b2@3", "c1@4", v=[7, 2, 4, 0])
    text = (
        "PATTERN SEQ(A a, B+ b[], C c) WHERE skip_till_next_match { } "
        "RETURN a.v, avg(b[].v) AS mean, max(b[].v), b.LEN, b[b.LEN].timestamp"
    )
    (m,) = kleene.compile(text).run(events)
    assert m.values() == {
        "a.v": 7,
        "mean": 3.0,
        "max(b[].v)": 4,
        "b.LEN": 2,
        "b[b.LEN].timestamp": 3,
    }
    assert (m.start, m.end) == (1, 4)
