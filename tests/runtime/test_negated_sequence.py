"""Negation of a whole sequence, ``~SEQ(B b, C c)`` (SIGMOD 2014, section 2.1)."""

import pytest

import kleene
from kleene.errors import QueryError, QuerySyntaxError
from kleene.lang import parse, to_text
from tests.helpers import id_sets, match, stream


def run(text, events, **options):
    return id_sets(kleene.compile(text, **options).run(events))


MIDDLE = "PATTERN SEQ(A a, ~SEQ(B b, C c), D d) WHERE skip_till_any_match"


def test_only_the_whole_sequence_in_order_rules_a_match_out():
    # between a1 and d1 there is a C before a B: not the negated sequence
    assert run(MIDDLE, stream("a1@0", "c1@1", "b1@2", "d1@3")) == {match(a="a1", d="d1")}
    # a B and then a C between a1 and d1: ruled out
    assert run(MIDDLE, stream("a1@0", "b1@1", "x1@2", "c1@3", "d1@4")) == set()
    # a lone B (or a lone C) is not enough
    assert run(MIDDLE, stream("a1@0", "b1@1", "d1@2")) == {match(a="a1", d="d1")}


def test_the_sequence_must_lie_strictly_inside_the_gap():
    events = stream("b1@0", "a1@1", "c1@2", "d1@3", "b2@4", "c2@5", "d2@6")
    # a1..d1 holds only c1; a1..d2 holds b2, c2 and is ruled out
    assert run(MIDDLE, events) == {match(a="a1", d="d1")}


def test_conditions_relate_the_members_and_the_match():
    text = (
        "PATTERN SEQ(A a, ~SEQ(B b, C c), D d) "
        "WHERE skip_till_any_match AND b.x > c.x AND c.x = a.x"
    )
    events = stream("a1@0", "b1@1", "c1@2", "c2@3", "d1@4", x=[1, 2, 3, 1, 0])
    # (b1, c1): 2 > 3 fails; (b1, c2): 2 > 1 and c2.x = a1.x = 1 holds
    assert run(text, events) == set()
    events[3]["x"] = 0  # now c2.x differs from a1.x
    assert run(text, events) == {match(a="a1", d="d1")}


def test_trailing_sequence_is_decided_when_the_window_closes():
    q = kleene.compile("PATTERN SEQ(A a, ~SEQ(B b, C c)) WITHIN 10")
    m = q.matcher()
    assert m.push(stream("a1@0", "b1@4")) == []
    assert m.push(stream("c1@9")) == []  # b1, c1 inside the window: ruled out
    assert m.flush() == []
    m = q.matcher()
    found = m.push(stream("a1@0", "b1@4", "c1@11")) + m.flush()  # c1 beyond the window
    assert id_sets(found) == {match(a="a1")}


def test_leading_sequence_and_the_window():
    text = "PATTERN SEQ(~SEQ(B b, C c), A a) WITHIN {w}"
    events = stream("b1@0", "c1@2", "a1@5")
    assert run(text.format(w=5), events) == set()
    assert run(text.format(w=4), events) == {match(a="a1")}


def test_keyed_members_are_looked_up_in_the_partition():
    text = "PATTERN SEQ(A a, ~SEQ(B b, C c), D d) WHERE skip_till_any_match AND [k]"
    events = stream("a1@0", "b1@1", "c1@2", "d1@3", k=[1, 2, 2, 1])
    assert run(text, events) == {match(a="a1", d="d1")}
    events[2]["k"] = 1  # c1 joins the partition, b1 does not
    assert run(text, events) == {match(a="a1", d="d1")}
    events[1]["k"] = 1
    assert run(text, events) == set()


def test_text_round_trip_and_explain():
    q = parse("PATTERN SEQ(A a, ~SEQ(B b, C c), !E e, D d) WHERE b.x < c.x")
    assert to_text(q).splitlines()[0] == "PATTERN SEQ(A a, ~SEQ(B b, C c), ~(E e), D d)"
    assert parse(to_text(q)) == q
    plan = kleene.compile(to_text(q)).explain()
    assert "not b (B) between components" in plan
    assert "not c (C) then, after it: b.x < c.x" in plan


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("PATTERN SEQ(A a, ~SEQ(B+ b[], C c), D d)", "only single events"),
        ("PATTERN SEQ(A a, ~SEQ(B b, ~(C c)), D d)", "only single events"),
    ],
)
def test_members_must_be_single_events(text, message):
    with pytest.raises(QuerySyntaxError, match=message) as caught:
        kleene.compile(text)
    assert caught.value.line == 1


def test_separate_negations_cannot_be_related():
    with pytest.raises(QueryError, match="two separate negations") as caught:
        kleene.compile("PATTERN SEQ(A a, ~(B b), ~(C c), D d) WHERE b.x = c.x")
    assert (caught.value.line, caught.value.column) == (1, 51)  # at c.x
