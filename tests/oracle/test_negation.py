"""The negation filter at each position (docs/semantics.md, "Negation")."""

from __future__ import annotations

from kleene.lang import ast
from kleene.oracle import evaluate
from tests.helpers import id_sets, match, stream
from tests.oracle.build import equiv, neg, one, op, plus, query, ref

ANY = ast.Strategy.SKIP_TILL_ANY_MATCH
NEXT = ast.Strategy.SKIP_TILL_NEXT_MATCH


def test_middle_negation() -> None:
    q = query(one("A", "a"), neg("N", "n"), one("B", "b"))
    events = stream("a1@1", "n1@2", "a2@3", "b1@4")
    # n1 lies between a1 and b1 but not between a2 and b1.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {match(a="a2", b="b1")}


def test_middle_negation_needs_every_conjunct_on_n() -> None:
    q = query(
        one("A", "a"), neg("N", "n"), one("B", "b"), where=(op("==", ref("n", "k"), ref("a", "k")),)
    )
    events = stream("a1@1", "n1@2", "a2@3", "b1@4", k=[1, 2, 1, 1])
    # n1.k = 2 differs from a1.k, so it cancels nothing; a2 has no n after it anyway.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {
        match(a="a1", b="b1"),
        match(a="a2", b="b1"),
    }


def test_middle_negation_through_an_equivalence_test() -> None:
    # [k] covers n too: n must share a's and b's k to cancel the match.
    q = query(one("A", "a"), neg("N", "n"), one("B", "b"), where=(equiv("k"),))
    assert id_sets(evaluate(q, stream("a1@1", "n1@2", "b1@3", k=[1, 2, 1]))) == {
        match(a="a1", b="b1")
    }
    assert evaluate(q, stream("a1@1", "n1@2", "b1@3", k=[1, 1, 1])) == []


def test_leading_negation_with_window() -> None:
    q = query(neg("N", "n"), one("A", "a"), one("B", "b"), within=5)
    events = stream("n1@1", "a1@4", "b1@6", "a2@7", "b2@8")
    # (a1,b1) with n1 spans 6 - 1 = 5 <= 5: cancelled. (a1,b2) and (a2,b2) would span
    # 8 - 1 = 7 > 5: n1 is too early to cancel them. (a2,b1) is out of order.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {
        match(a="a1", b="b2"),
        match(a="a2", b="b2"),
    }


def test_leading_negation_without_window() -> None:
    q = query(neg("N", "n"), one("A", "a"), one("B", "b"))
    events = stream("n1@1", "a1@4", "b1@6", "a2@7", "b2@8")
    # Without WITHIN, n1 anywhere before a's event cancels every match.
    assert evaluate(q, events, strategy=ANY) == []
    # An n after the A event does not sit before it.
    assert id_sets(evaluate(q, stream("a1@1", "n1@2", "b1@3"), strategy=ANY)) == {
        match(a="a1", b="b1")
    }


def test_trailing_negation_with_window_is_inclusive() -> None:
    q = query(one("A", "a"), one("B", "b"), neg("N", "n"), within=5)
    # n1@6: (a1,b1) plus n1 spans 6 - 1 = 5 <= 5, cancelled; (a2,b2) has no n after it.
    cancelled = stream("a1@1", "b1@2", "n1@6", "a2@8", "b2@9")
    assert id_sets(evaluate(q, cancelled, strategy=ANY)) == {match(a="a2", b="b2")}
    # n1@7: the span would be 6 > 5, so n1 is outside the window and cancels nothing.
    kept = stream("a1@1", "b1@2", "n1@7", "a2@8", "b2@9")
    assert id_sets(evaluate(q, kept, strategy=ANY)) == {
        match(a="a1", b="b1"),
        match(a="a2", b="b2"),
    }


def test_trailing_negation_without_window() -> None:
    q = query(one("A", "a"), one("B", "b"), neg("N", "n"))
    events = stream("a1@1", "b1@2", "n1@70", "a2@80", "b2@90")
    # Without WITHIN any later N cancels (a1,b1); (a1,b2) and (a2,b2) have no N after them.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {
        match(a="a1", b="b2"),
        match(a="a2", b="b2"),
    }


def test_trailing_negation_after_a_trailing_kleene() -> None:
    q = query(one("A", "a"), plus("B", "b"), neg("N", "n"))
    events = stream("a1@1", "b1@2", "n1@3", "b2@4")
    # Skip till next match yields (a1,[b1]) and (a1,[b1,b2]); n1 follows only b1.
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {match(a="a1", b=("b1", "b2"))}


def test_negation_between_kleene_and_single() -> None:
    q = query(one("A", "a"), plus("B", "b"), neg("N", "n"), one("C", "c"))
    events = stream("a1@1", "b1@2", "n1@3", "b2@4", "c1@5")
    # n1 must fall after b's last event: it does for b = [b1] only.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {
        match(a="a1", b=("b2",), c="c1"),
        match(a="a1", b=("b1", "b2"), c="c1"),
    }


def test_negation_does_not_change_the_runs() -> None:
    q = query(one("A", "a"), neg("N", "n"), one("B", "b"))
    events = stream("a1@1", "n1@2", "b1@3")
    # Strictly, the positive pattern (a, b) already fails at n1: nothing to filter.
    assert evaluate(q, events, strategy=ast.Strategy.STRICT_CONTIGUITY) == []
    # With an N in between under skip till next match, the match exists and is cancelled.
    assert evaluate(q, events, strategy=NEXT) == []
    assert id_sets(evaluate(q, stream("a1@1", "b1@3"), strategy=NEXT)) == {match(a="a1", b="b1")}
