"""Kleene variables: iterator predicates, v.LEN and v[v.LEN] conditions, trailing Kleene
(docs/semantics.md, "Iterator predicates" and the NFA^b formulas)."""

from __future__ import annotations

from kleene.lang import ast
from kleene.oracle import evaluate
from tests.helpers import id_sets, match, stream
from tests.oracle.build import agg, cur, first, last, length, one, op, plus, prev, query, ref

ANY = ast.Strategy.SKIP_TILL_ANY_MATCH
NEXT = ast.Strategy.SKIP_TILL_NEXT_MATCH
STRICT = ast.Strategy.STRICT_CONTIGUITY


def test_previous_element_predicate() -> None:
    q = query(
        plus("S", "a"), one("T", "b"), where=(op(">", cur("a", "price"), prev("a", "price")),)
    )
    events = stream("s1@1", "s2@2", "s3@3", "t1@4", price=[1, 3, 2, 0])
    # Any strictly rising subsequence of prices 1, 3, 2 (checked from i = 2).
    assert id_sets(evaluate(q, events, strategy=ANY)) == {
        match(a=("s1",), b="t1"),
        match(a=("s2",), b="t1"),
        match(a=("s3",), b="t1"),
        match(a=("s1", "s2"), b="t1"),
        match(a=("s1", "s3"), b="t1"),
    }
    # s1's run must take s2 (ignore = not take); s3 fails take and is ignored. s2's run
    # ignores s3; s3 starts its own run.
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {
        match(a=("s1", "s2"), b="t1"),
        match(a=("s2",), b="t1"),
        match(a=("s3",), b="t1"),
    }


def test_aggregate_of_earlier_elements() -> None:
    rising = op(">", cur("a", "price"), agg("avg", "a", "price", before=True))
    q = query(plus("S", "a"), one("T", "b"), where=(rising,))
    events = stream("s1@1", "s2@2", "s3@3", "s4@4", "t1@5", price=[10, 4, 8, 7, 0])
    # 7 > avg(4, 8) = 6 although 7 < 8: [s2, s3, s4] qualifies; nothing can follow 10.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {
        match(a=("s1",), b="t1"),
        match(a=("s2",), b="t1"),
        match(a=("s3",), b="t1"),
        match(a=("s4",), b="t1"),
        match(a=("s2", "s3"), b="t1"),
        match(a=("s2", "s4"), b="t1"),
        match(a=("s2", "s3", "s4"), b="t1"),
    }
    # s1's run ignores every later S (none exceeds 10); s2's run takes s3 and s4.
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {
        match(a=("s1",), b="t1"),
        match(a=("s2", "s3", "s4"), b="t1"),
        match(a=("s3",), b="t1"),
        match(a=("s4",), b="t1"),
    }


def test_current_against_first_fails_at_i_1() -> None:
    q = query(
        plus("S", "a"), one("T", "b"), where=(op(">", cur("a", "price"), first("a", "price")),)
    )
    events = stream("s1@1", "s2@2", "t1@3", price=[1, 2, 0])
    # At i = 1 the conjunct reads a[1].price > a[1].price: no selection is valid.
    assert evaluate(q, events, strategy=ANY) == []
    assert evaluate(q, events, strategy=NEXT) == []


def test_current_element_predicate_applies_from_i_1() -> None:
    q = query(one("A", "a"), plus("B", "b"), where=(op(">", cur("b", "v"), ref("a", "v")),))
    events = stream("a1@1", "b1@2", "b2@3", v=[5, 4, 6])
    # b1.v = 4 is not above a1.v = 5, so b1 cannot even be b[1]; b2 can.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {match(a="a1", b=("b2",))}
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {match(a="a1", b=("b2",))}


def test_iterator_condition_holds_for_the_first_element_too() -> None:
    # docs/semantics.md, "Iterator predicates": a[i].x > 5 holds for every element, a[1]
    # included, so a1 (x 1) cannot start a[]. Read from the second element on (as the
    # SASE implementation does), a1 could be a[1]: a=[a1], a=[a1, a2] would match too.
    q = query(plus("A", "a"), one("B", "b"), where=(op(">", cur("a", "x"), 5),))
    events = stream("a1@1", "a2@2", "b1@3", x=[1, 7, 0])
    assert id_sets(evaluate(q, events, strategy=ANY)) == {match(a=("a2",), b="b1")}
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {match(a=("a2",), b="b1")}


def test_length_condition_on_the_proceed_edge() -> None:
    q = query(one("A", "a"), plus("B", "b"), one("C", "c"), where=(op(">=", length("b"), 2),))
    events = stream("a1@1", "b1@2", "b2@3", "b3@4", "c1@5")
    # Any subset of two or more Bs.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {
        match(a="a1", b=("b1", "b2"), c="c1"),
        match(a="a1", b=("b1", "b3"), c="c1"),
        match(a="a1", b=("b2", "b3"), c="c1"),
        match(a="a1", b=("b1", "b2", "b3"), c="c1"),
    }
    # Skip till next match takes every B, then proceeds with length 3.
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {
        match(a="a1", b=("b1", "b2", "b3"), c="c1")
    }


def test_exact_length_blocks_the_greedy_run() -> None:
    q = query(one("A", "a"), plus("B", "b"), one("C", "c"), where=(op("==", length("b"), 2),))
    events = stream("a1@1", "b1@2", "b2@3", "b3@4", "c1@5")
    # Skip till next match must take b3 (the proceed peek fails on a B), and at c1 the
    # proceed formula b.LEN = 2 is false with 3 elements.
    assert evaluate(q, events, strategy=NEXT) == []
    assert id_sets(evaluate(q, events, strategy=ANY)) == {
        match(a="a1", b=("b1", "b2"), c="c1"),
        match(a="a1", b=("b1", "b3"), c="c1"),
        match(a="a1", b=("b2", "b3"), c="c1"),
    }


def test_last_element_condition() -> None:
    q = query(
        plus("S", "a"), one("T", "b"), where=(op("<", ref("b", "volume"), last("a", "volume")),)
    )
    events = stream("s1@1", "s2@2", "t1@3", volume=[5, 1, 3])
    # Only a = [s1] ends above t1's volume 3.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {match(a=("s1",), b="t1")}
    # s1's run takes s2 (no take condition), then a[a.LEN].volume = 1 blocks the proceed.
    assert evaluate(q, events, strategy=NEXT) == []


def test_aggregate_over_all_elements_in_where() -> None:
    q = query(
        one("A", "a"), plus("B", "b"), one("C", "c"), where=(op("<=", agg("sum", "b", "v"), 5),)
    )
    events = stream("a1@1", "b1@2", "b2@3", "c1@4", v=[0, 2, 4, 0])
    # Sums: [b1] 2, [b2] 4, [b1, b2] 6 > 5.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {
        match(a="a1", b=("b1",), c="c1"),
        match(a="a1", b=("b2",), c="c1"),
    }


def test_trailing_kleene_one_match_per_prefix() -> None:
    q = query(one("A", "a"), plus("B", "b"))
    events = stream("a1@1", "b1@2", "b2@3", "b3@4")
    # The epsilon proceed to F fires after every begin/take.
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {
        match(a="a1", b=("b1",)),
        match(a="a1", b=("b1", "b2")),
        match(a="a1", b=("b1", "b2", "b3")),
    }
    # Strictly, the run dies at x1 after its first prefix.
    assert id_sets(evaluate(q, stream("a1@1", "b1@2", "x1@3", "b2@4"), strategy=STRICT)) == {
        match(a="a1", b=("b1",))
    }


def test_trailing_kleene_with_an_end_condition() -> None:
    q = query(one("A", "a"), plus("B", "b"), where=(op(">", last("b", "v"), ref("a", "v")),))
    events = stream("a1@1", "b1@2", "b2@3", "b3@4", v=[5, 6, 3, 7])
    # Prefixes ending in b1 (6 > 5) and b3 (7 > 5) match; the one ending in b2 does not.
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {
        match(a="a1", b=("b1",)),
        match(a="a1", b=("b1", "b2", "b3")),
    }


def test_kleene_alone_with_a_length() -> None:
    q = query(plus("B", "b"), where=(op("==", length("b"), 2),))
    events = stream("b1@1", "b2@2", "b3@3")
    # A run starts at every B; each matches when it holds exactly two.
    assert id_sets(evaluate(q, events, strategy=STRICT)) == {
        match(b=("b1", "b2")),
        match(b=("b2", "b3")),
    }


def test_proceed_and_ignore_split_under_skip_till_next() -> None:
    q = query(one("A", "a"), plus("B", "b"), one("C", "c"))
    events = stream("a1@1", "b1@2", "c1@3", "c2@4")
    # At b[i], c1 satisfies proceed and (not being a take) ignore: the run splits, and the
    # copy that ignored c1 proceeds on c2.
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {
        match(a="a1", b=("b1",), c="c1"),
        match(a="a1", b=("b1",), c="c2"),
    }
    assert id_sets(evaluate(q, events, strategy=STRICT)) == {match(a="a1", b=("b1",), c="c1")}


def test_two_kleene_variables_of_one_type() -> None:
    q = query(plus("B", "x"), plus("B", "y"))
    events = stream("b1@1", "b2@2", "b3@3")
    # Strictly: runs from b1 and b2; y begins by proceeding on the next B, then takes.
    assert id_sets(evaluate(q, events, strategy=STRICT)) == {
        match(x=("b1",), y=("b2",)),
        match(x=("b1",), y=("b2", "b3")),
        match(x=("b1", "b2"), y=("b3",)),
        match(x=("b2",), y=("b3",)),
    }
