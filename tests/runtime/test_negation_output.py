"""Negation at every position, and the non-overlap output format."""

import kleene
from tests.helpers import id_sets, match, stream


def run(text, events, **options):
    # the streams' integer times are seconds (SHOPLIFT's window is 12 hours)
    return id_sets(kleene.compile(text, time_unit="s", **options).run(events))


SHOPLIFT = (
    "PATTERN SEQ(Shelf a, ~(Register b), Exit c) "
    "WHERE skip_till_next_match(a, b, c) { [tag] } WITHIN 12 hours"
)


def test_figure1_query1_shoplifting():
    events = stream(
        "shelf1@0",
        "shelf2@10",
        "register1@20",
        "exit1@30",
        "exit2@40",
        tag=["x", "y", "y", "x", "y"],
    )
    # item x left without paying; item y was registered between its shelf and exit reads
    assert run(SHOPLIFT, events) == {match(a="shelf1", c="exit1")}


def test_middle_negation_only_counts_events_between():
    events = stream("b0@0", "a1@1", "c1@2", "b1@3")
    assert run("PATTERN SEQ(A a, !(B b), C c)", events) == {match(a="a1", c="c1")}


def test_leading_negation_uses_the_window():
    events = stream("n1@0", "a1@5", "b1@8")
    text = "PATTERN SEQ(~(N n), A a, B b) WITHIN {w}"
    # n1 is 8 before b1: inside a window of 8, outside a window of 7
    assert run(text.format(w=8), events) == set()
    assert run(text.format(w=7), events) == {match(a="a1", b="b1")}


def test_trailing_negation_decided_when_the_window_closes():
    q = kleene.compile("PATTERN SEQ(A a, B b, ~(C c)) WITHIN 10")
    m = q.matcher()
    assert m.push(stream("a1@0", "b1@3")) == []  # undecided until time passes 10
    assert m.push(stream("c1@10")) == []  # c1 at 10 is within the window: ruled out
    assert m.flush() == []
    m = q.matcher()
    got = m.push(stream("a1@0", "b1@3", "c1@11"))  # c1 beyond the window: decided at c1
    assert id_sets(got) == {match(a="a1", b="b1")}
    assert m.flush() == []


def test_trailing_negation_releases_on_later_event():
    q = kleene.compile("PATTERN SEQ(A a, B b, ~(C c)) WITHIN 10")
    m = q.matcher()
    m.push(stream("a1@0", "b1@3"))
    assert id_sets(m.push(stream("x1@11"))) == {match(a="a1", b="b1")}


def test_trailing_negation_without_window_waits_for_the_end():
    q = kleene.compile("PATTERN SEQ(A a, ~(C c))")
    m = q.matcher()
    assert m.push(stream("a1@0", "x1@1000")) == []
    assert id_sets(m.flush()) == {match(a="a1")}


def test_negation_predicates_refer_to_positive_variables():
    events = stream("a1@0", "c1@1", "b1@2", v=[1, 2, 1])
    text = "PATTERN SEQ(A a, ~(C c), B b) WHERE skip_till_next_match { c.v = a.v }"
    assert run(text, events) == {match(a="a1", b="b1")}  # c1.v differs from a1.v
    events[1]["v"] = 1
    assert run(text, events) == set()


def test_non_overlap_picks_one_match_per_partition_and_time_span():
    events = stream("a1@1", "a2@2", "b1@3", "a3@4", "b2@5")
    text = "PATTERN SEQ(A a, B b) WHERE skip_till_any_match { } OUTPUT NON-OVERLAP"
    # all matches: (a1,b1) (a2,b1) (a1,b2) (a2,b2) (a3,b2); the first ending is (a1,b1)
    # (earliest start wins the tie at b1); then only matches starting after b1 remain
    assert run(text, events) == {match(a="a1", b="b1"), match(a="a3", b="b2")}
    assert len(run(text, events, output="all")) == 5


def test_non_overlap_is_per_partition():
    events = stream("a1@1", "a2@2", "b1@3", "b2@4", k=["x", "y", "x", "y"])
    text = "PATTERN SEQ(A a, B b) WHERE skip_till_any_match { [k] }"
    got = run(text, events, output="non_overlap")
    assert got == {match(a="a1", b="b1"), match(a="a2", b="b2")}


def test_non_overlap_with_trailing_negation_waits_for_decisions():
    events = stream("a1@0", "b1@1", "a2@2", "b2@3", "c1@5")
    text = "PATTERN SEQ(A a, B b, ~(C c)) WHERE skip_till_any_match { } WITHIN 4"
    # (a1,b1) is killed by c1@5? no: 5 - 0 > 4. (a2,b2): c1@5 within 4 of a2@2 -> dropped
    assert run(text, events, output="all") == {match(a="a1", b="b1"), match(a="a1", b="b2")}
    assert run(text, events, output="non_overlap") == {match(a="a1", b="b1")}
