"""SIGMOD 2014, section 4, Figure 3: SEQ(A a, B+ b[], C c) WITHIN 10 over
a1@1, a2@2, b1@5, b2@6, c1@7, under each event selection strategy."""

from __future__ import annotations

from kleene.lang import ast
from kleene.oracle import evaluate
from tests.helpers import id_sets, match, stream
from tests.oracle.build import one, plus, query

FIGURE_3 = query(one("A", "a"), plus("B", "b"), one("C", "c"), within=10)
EVENTS = stream("a1@1", "a2@2", "b1@5", "b2@6", "c1@7")


def test_strict_contiguity() -> None:
    # Run #1 (a1) dies at a2, which it may not ignore; run #2 (a2,b1,b2,c1) uses every event.
    got = evaluate(FIGURE_3, EVENTS, strategy=ast.Strategy.STRICT_CONTIGUITY)
    assert id_sets(got) == {match(a="a2", b=("b1", "b2"), c="c1")}


def test_partition_contiguity_without_key_is_strict() -> None:
    # No equalities, so no key: a single partition, and partition contiguity = strict.
    got = evaluate(FIGURE_3, EVENTS, strategy=ast.Strategy.PARTITION_CONTIGUITY)
    assert id_sets(got) == {match(a="a2", b=("b1", "b2"), c="c1")}


def test_skip_till_next_match() -> None:
    # Run #3 ignores a2 (not a B) and takes b1, b2; run #4 starts at a2 (S2 in Figure 3).
    got = evaluate(FIGURE_3, EVENTS, strategy=ast.Strategy.SKIP_TILL_NEXT_MATCH)
    assert id_sets(got) == {
        match(a="a1", b=("b1", "b2"), c="c1"),
        match(a="a2", b=("b1", "b2"), c="c1"),
    }


def test_skip_till_next_match_is_the_default() -> None:
    # Neither the argument nor the query names a strategy: ast.DEFAULT_STRATEGY applies.
    assert id_sets(evaluate(FIGURE_3, EVENTS)) == {
        match(a="a1", b=("b1", "b2"), c="c1"),
        match(a="a2", b=("b1", "b2"), c="c1"),
    }


def test_skip_till_any_match() -> None:
    # Any A, any nonempty subset of {b1, b2}, then c1: 2 x 3 = 6 matches (S3).
    got = evaluate(FIGURE_3, EVENTS, strategy=ast.Strategy.SKIP_TILL_ANY_MATCH)
    assert id_sets(got) == {
        match(a="a1", b=("b1",), c="c1"),
        match(a="a1", b=("b2",), c="c1"),
        match(a="a1", b=("b1", "b2"), c="c1"),
        match(a="a2", b=("b1",), c="c1"),
        match(a="a2", b=("b2",), c="c1"),
        match(a="a2", b=("b1", "b2"), c="c1"),
    }


def test_argument_strategy_overrides_the_query() -> None:
    # The query says strict contiguity; the argument asks for skip till any match.
    strict = query(
        one("A", "a"),
        plus("B", "b"),
        one("C", "c"),
        within=10,
        strategy=ast.Strategy.STRICT_CONTIGUITY,
    )
    assert len(evaluate(strict, EVENTS)) == 1
    assert len(evaluate(strict, EVENTS, strategy=ast.Strategy.SKIP_TILL_ANY_MATCH)) == 6


def test_positions_and_ids() -> None:
    # Positions are 0-based stream positions; ids come from the id field.
    (found,) = evaluate(FIGURE_3, EVENTS, strategy=ast.Strategy.STRICT_CONTIGUITY)
    assert found.positions == {"a": (1,), "b": (2, 3), "c": (4,)}
    assert found.ids == {"a": ("a2",), "b": ("b1", "b2"), "c": ("c1",)}
    assert found.values == {}


def test_window_cuts_figure_3() -> None:
    # WITHIN 5: a1@1 .. c1@7 spans 6 > 5, a2@2 .. c1@7 spans 5 <= 5 (inclusive).
    tight = query(one("A", "a"), plus("B", "b"), one("C", "c"), within=5)
    got = evaluate(tight, EVENTS, strategy=ast.Strategy.SKIP_TILL_ANY_MATCH)
    assert id_sets(got) == {
        match(a="a2", b=("b1",), c="c1"),
        match(a="a2", b=("b2",), c="c1"),
        match(a="a2", b=("b1", "b2"), c="c1"),
    }
