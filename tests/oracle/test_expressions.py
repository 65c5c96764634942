"""Expression semantics: arithmetic, comparisons, errors, special fields, equivalence
scopes and CNF placement (docs/semantics.md, "Arithmetic and types")."""

from __future__ import annotations

import pytest

from kleene.errors import QueryError
from kleene.lang import ast
from kleene.oracle import evaluate
from tests.helpers import id_sets, match, stream
from tests.oracle.build import agg, cur, equiv, neg, not_, one, op, plus, query, ref

ANY = ast.Strategy.SKIP_TILL_ANY_MATCH
NEXT = ast.Strategy.SKIP_TILL_NEXT_MATCH


def pair_matches(condition: ast.Expr, a: dict[str, object], b: dict[str, object]) -> bool:
    """Whether SEQ(A a, B b) WHERE condition matches one A event then one B event."""
    events = [{"type": "A", "timestamp": 1, **a}, {"type": "B", "timestamp": 2, **b}]
    return bool(evaluate(query(one("A", "a"), one("B", "b"), where=(condition,)), events))


def test_true_division_and_python_modulo() -> None:
    assert pair_matches(op("==", op("/", ref("a", "x"), ref("b", "x")), 2.5), {"x": 5}, {"x": 2})
    # Python's modulo takes the divisor's sign: -1 % 3 == 2.
    assert pair_matches(op("==", op("%", ref("a", "x"), 3), 2), {"x": -1}, {})


def test_division_by_zero_makes_the_conjunct_false() -> None:
    ratio = op(">", op("/", ref("a", "x"), ref("b", "x")), 0)
    assert not pair_matches(ratio, {"x": 1}, {"x": 0})
    # Even under "not": the conjunct has no value, so it is false.
    assert not pair_matches(not_(ratio), {"x": 1}, {"x": 0})
    assert not pair_matches(op(">", op("%", ref("a", "x"), ref("b", "x")), -1), {"x": 1}, {"x": 0})


def test_and_or_stop_once_the_left_operand_decides() -> None:
    # b.x = 0 makes the left side true, so the division by zero on the right is not reached
    guarded = op(
        "or", op("==", ref("b", "x"), 0), op(">", op("/", ref("a", "x"), ref("b", "x")), 1)
    )
    assert pair_matches(guarded, {"x": 1}, {"x": 0})
    assert pair_matches(guarded, {"x": 4}, {"x": 2})
    assert not pair_matches(guarded, {"x": 1}, {"x": 2})
    # with the operands swapped the division is evaluated first and fails: no match
    swapped = op(
        "or", op(">", op("/", ref("a", "x"), ref("b", "x")), 1), op("==", ref("b", "x"), 0)
    )
    assert not pair_matches(swapped, {"x": 1}, {"x": 0})


def test_ordering_needs_two_numbers_or_two_strings() -> None:
    mixed = op("<", ref("a", "x"), ref("b", "s"))
    assert not pair_matches(mixed, {"x": 1}, {"s": "z"})
    assert not pair_matches(not_(mixed), {"x": 1}, {"s": "z"})
    assert pair_matches(op("<", ref("a", "s"), ref("b", "s")), {"s": "abc"}, {"s": "abd"})
    # Booleans are not numbers.
    assert not pair_matches(op("<", ref("a", "x"), 2), {"x": True}, {})


def test_equality_compares_any_values() -> None:
    assert not pair_matches(op("==", ref("a", "x"), ref("b", "s")), {"x": 1}, {"s": "1"})
    assert pair_matches(op("!=", ref("a", "x"), ref("b", "s")), {"x": 1}, {"s": "1"})
    assert pair_matches(op("==", ref("a", "x"), ref("b", "x")), {"x": 1}, {"x": 1.0})


def test_special_fields() -> None:
    assert pair_matches(op(">=", op("-", ref("b", "timestamp"), ref("a", "timestamp")), 1), {}, {})
    assert pair_matches(op("==", ref("a", "type"), "A"), {}, {})
    assert pair_matches(op("==", ref("a", "id"), "first"), {"id": "first"}, {})


def test_arithmetic_on_strings_is_an_error() -> None:
    assert not pair_matches(op("==", op("+", ref("a", "s"), "x"), "ax"), {"s": "a"}, {})


def test_equivalence_scope_from_the_strategy_list() -> None:
    events = stream("a1@1", "b1@2", "c1@3", k=[1, 1, 2])
    listed = query(
        one("A", "a"), one("B", "b"), one("C", "c"), where=(equiv("k"),), scope=("a", "b")
    )
    everyone = query(one("A", "a"), one("B", "b"), one("C", "c"), where=(equiv("k"),))
    # With the list, c is free to differ; without it, c1.k = 2 breaks [k].
    assert id_sets(evaluate(listed, events)) == {match(a="a1", b="b1", c="c1")}
    assert evaluate(everyone, events) == []


def test_equivalence_over_a_kleene_variable() -> None:
    q = query(plus("B", "b"), one("C", "c"), where=(equiv("k"),))
    events = stream("b1@1", "b2@2", "b3@3", "c1@4", k=[1, 2, 1, 1])
    # Every element of b and c share k.
    assert id_sets(evaluate(q, events, strategy=ANY)) == {
        match(b=("b1",), c="c1"),
        match(b=("b3",), c="c1"),
        match(b=("b1", "b3"), c="c1"),
    }


def test_cnf_clauses_are_placed_by_their_own_last_identifier() -> None:
    # (b.y > 2 and c.z > 0) or a.x > 100  ==  (b.y > 2 or a.x > 100) and (c.z > 0 or a.x > 100)
    condition = op(
        "or",
        op("and", op(">", ref("b", "y"), 2), op(">", ref("c", "z"), 0)),
        op(">", ref("a", "x"), 100),
    )
    q = query(one("A", "a"), one("B", "b"), one("C", "c"), where=(condition,))
    events = stream("a1@1", "b1@2", "b2@3", "c1@4", x=[0, 0, 0, 0], y=[0, 1, 5, 0], z=[0, 0, 0, 1])
    # The first clause sits on b's begin edge, so skip till next match ignores b1 (y=1).
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {match(a="a1", b="b2", c="c1")}


def test_iterator_aggregate_count() -> None:
    # count(b[..i-1]) = i - 1: b2 (v=1) and b3 (v=2) extend b1's run; from b2, b3 would be
    # element 2 with v=2 != 1, so b2's run ignores it. Single-element runs check nothing.
    q = query(
        plus("B", "b"),
        one("C", "c"),
        where=(op("==", cur("b", "v"), agg("count", "b", None, before=True)),),
    )
    events = stream("b1@1", "b2@2", "b3@3", "c1@4", v=[9, 1, 2, 0])
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {
        match(b=("b1", "b2", "b3"), c="c1"),
        match(b=("b3",), c="c1"),
        match(b=("b2",), c="c1"),
    }


@pytest.mark.parametrize(
    "where",
    [
        (op(">", ref("z", "x"), 1),),  # unknown variable
        (op(">", ref("b", "x"), 1),),  # Kleene variable without an index
        (op(">", cur("a", "x"), 1),),  # single variable with an index
        (op("and", equiv("x"), op(">", ref("a", "x"), 1)),),  # nested equivalence test
        (op("==", ref("n", "x"), ref("m", "x")),),  # two negated variables
    ],
)
def test_rejected_queries(where: tuple[ast.Expr, ...]) -> None:
    q = query(one("A", "a"), neg("N", "n"), neg("M", "m"), plus("B", "b"), where=where)
    with pytest.raises(QueryError):
        evaluate(q, [])
