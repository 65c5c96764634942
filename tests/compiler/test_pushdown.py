"""What a reader may drop (kleene.compiler.pushdown): the prefilter's rule as a fact."""

from __future__ import annotations

import kleene
from kleene.compiler import expr
from kleene.compiler.pushdown import pushdown


def test_strict_contiguity_drops_nothing() -> None:
    q = kleene.compile(
        "PATTERN SEQ(A a, B b) WHERE strict_contiguity AND a.x > 1 AND b.y < 2 WITHIN 10"
    )
    assert pushdown(q.plan) is None


def test_skip_till_keeps_negated_types_and_states_without_properties() -> None:
    q = kleene.compile(
        "PATTERN SEQ(A a, ~(D d), B b, C c) WHERE skip_till_next_match AND a.x > 1 "
        "AND b.y < c.y AND d.z = 3 WITHIN 10"
    )
    pd = pushdown(q.plan)
    assert pd is not None
    assert pd.types == {"A", "B", "C", "D"}
    # D is negated; B and C have no property of their own (b.y < c.y reads both)
    assert pd.kept == {"B", "C", "D"}
    assert list(pd.states) == ["A"]
    (conjuncts,) = pd.states["A"]
    (prop,) = conjuncts
    assert expr.reads_only(prop, expr.EVENT)
    assert [load.key for load in expr.loads(prop)] == ["x"]


def test_a_type_is_droppable_only_when_every_state_of_it_has_properties() -> None:
    q = kleene.compile(
        "PATTERN SEQ(A a, A b) WHERE skip_till_any_match AND a.x > 1 AND b.x < a.x WITHIN 10"
    )
    pd = pushdown(q.plan)
    assert pd is not None and pd.kept == {"A"} and not pd.states
