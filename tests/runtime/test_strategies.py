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


# --- partitions come from equivalence tests only (docs/semantics.md, "Partitions") ------

CONTIGUOUS = ("nfa", "merge", "backtrack", "vector")  # engines for partition contiguity


def _oracle(text, events, **options):
    from kleene.lang import ast, parse
    from kleene.oracle import evaluate

    strategy = options.get("strategy")
    output = options.get("output")
    return id_sets(
        evaluate(
            parse(text),
            events,
            strategy=ast.Strategy(strategy) if strategy else None,
            output=ast.OutputFormat(output) if output else None,
        )
    )


@pytest.mark.parametrize("engine", CONTIGUOUS)
def test_an_equality_between_variables_is_no_partition(engine):
    # one partition, so partition contiguity is strict contiguity: b2 (account 2) fails
    # b's begin formula and cannot be ignored, so a1's run dies before b1. Read as a
    # partition, the equality would put b2 outside a1's partition: a1 b1.
    events = [
        {"type": "A", "id": "a1", "timestamp": 1, "acct": 1},
        {"type": "B", "id": "b2", "timestamp": 2, "account": 2},
        {"type": "B", "id": "b1", "timestamp": 3, "account": 1},
    ]
    text = "PATTERN SEQ(A a, B b) WHERE partition_contiguity { a.acct = b.account }"
    assert run(text, events, engine=engine) == set() == _oracle(text, events)
    assert kleene.compile(text).partition_attributes == ()


@pytest.mark.parametrize("engine", CONTIGUOUS)
def test_with_an_equivalence_test_an_equality_stays_a_condition(engine):
    text = (
        "PATTERN SEQ(A a, B+ b[]) WHERE partition_contiguity "
        "{ [sym] and b[1].price = a.price and b[i].price = b[i-1].price }"
    )
    # partition x holds a1 b1 b2: b1 is a1's next event there and fails the price, so a1's
    # run dies (read as a partition by sym and price, b1 would be ignored: a1 b2)
    events = stream("a1@1", "b1@2", "b2@3", sym=list("xxx"), price=[10, 11, 10])
    assert run(text, events, engine=engine) == set() == _oracle(text, events)
    # an event of partition y is ignored; b2 b3 follow a1 in partition x
    events = stream("a1@1", "b1@2", "b2@3", "b3@4", sym=list("xyxx"), price=[10, 11, 10, 10])
    expected = {match(a="a1", b="b2"), match(a="a1", b=("b2", "b3"))}
    assert run(text, events, engine=engine) == expected == _oracle(text, events)
    assert [m.partition for m in kleene.compile(text, engine=engine).run(events)] == [("x",)] * 2


@pytest.mark.parametrize("engine", ["nfa", "merge", "backtrack"])
def test_skip_till_next_match_hash_key_only_when_checked_on_arrival(engine):
    # b.x is compared (with c.x) only when c arrives: b1 (x=2) is taken, and a1's run,
    # now at c, is left with no c of x 1 and 2. Hiding b1 from the run (indexing runs by
    # x) would let it take b2 instead.
    text = "PATTERN SEQ(A a, B b, C c) WHERE skip_till_next_match { a.x = c.x and b.x = c.x }"
    events = stream("a1@1", "b1@2", "b2@3", "c1@4", x=[1, 2, 1, 1])
    assert run(text, events, engine=engine) == set() == _oracle(text, events)
    # compared when b is taken, b1 is ignored and the key may index the runs
    text = "PATTERN SEQ(A a, B b, C c) WHERE skip_till_next_match { a.x = b.x and b.x = c.x }"
    assert run(text, events, engine=engine) == {match(a="a1", b="b2", c="c1")}
    assert kleene.compile(text).plan.routed


@pytest.mark.parametrize("engine", ["nfa", "merge", "postpone"])
def test_skip_till_any_match_reports_the_partition_not_the_hash_key(engine):
    text = "PATTERN SEQ(A a, B b) WHERE skip_till_any_match { [sym] and a.price = b.price }"
    events = stream("a1@1", "b1@2", "b2@3", sym=list("xxx"), price=[1, 1, 2])
    q = kleene.compile(text, engine=engine)
    assert q.plan.key.names == ("sym", "price")  # runs indexed by both
    found = q.run(events)
    assert id_sets(found) == {match(a="a1", b="b1")} == _oracle(text, events)
    assert [m.partition for m in found] == [("x",)]


@pytest.mark.parametrize("engine", ["nfa", "merge", "postpone"])
def test_non_overlap_is_per_partition_of_the_equivalence_tests(engine):
    # a1 b1 and a2 b2 overlap: without an equivalence test one is kept, with [price] both
    events = stream("a1@1", "a2@2", "b1@3", "b2@4", price=[1, 2, 1, 2])
    equal = "PATTERN SEQ(A a, B b) WHERE skip_till_any_match { a.price = b.price }"
    tested = "PATTERN SEQ(A a, B b) WHERE skip_till_any_match { [price] }"
    options = {"output": "non_overlap"}
    assert run(equal, events, engine=engine, **options) == {match(a="a1", b="b1")}
    assert _oracle(equal, events, **options) == {match(a="a1", b="b1")}
    both = {match(a="a1", b="b1"), match(a="a2", b="b2")}
    assert (
        run(tested, events, engine=engine, **options) == both == _oracle(tested, events, **options)
    )


@pytest.mark.parametrize(
    "engine,strategy",
    [
        ("nfa", "skip_till_any_match"),
        ("merge", "skip_till_next_match"),
        ("backtrack", "skip_till_next_match"),
        ("postpone", "skip_till_any_match"),
        ("vector", "partition_contiguity"),
    ],
)
def test_iterator_condition_holds_for_the_first_element_too(engine, strategy):
    # docs/semantics.md, "Iterator predicates" (the worked example): a[i].x > 5 holds
    # for a[1] as well, so a1 (x 1) starts no match. Applied from the second element on,
    # as in the SASE implementation, a1 would start a[] = [a1] and [a1, a2].
    text = "PATTERN SEQ(A+ a[], B b) WHERE [k] and a[i].x > 5"
    events = stream("a1@1", "a2@2", "b1@3", x=[1, 7, 0], k=[1, 1, 1])
    expected = {match(a=("a2",), b="b1")}
    assert run(text, events, engine=engine, strategy=strategy) == expected
    assert _oracle(text, events, strategy=strategy) == expected
