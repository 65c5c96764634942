"""Selection while matching (output earliest and/or maximal): the automaton drops an
instance once a skipped event is a witness no later binding can break, and both
algorithms test each match against its witnesses directly. Each case below is one
way a witness can still break, where dropping the instance too early would lose a
selected match; the property test holds both algorithms, behind every pre-processing,
to the oracle on streams with ties, v+ variables, prev and relationships."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.eventsets.automaton import AutomatonMatcher
from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.jointree import JoinTreeMatcher
from kleene.eventsets.model import SesMatch
from kleene.eventsets.twophase import Flags, TwoPhase
from kleene.oracle.eventsets import evaluate
from tests.eventsets.ses_queries import ses_queries
from tests.eventsets.strategies import ses_rows

SELECTING = ("earliest", "maximal", "earliest-maximal")
ALGORITHMS = {"automaton": AutomatonMatcher, "join tree": JoinTreeMatcher}


def _keys(matches: list[SesMatch]) -> list[Any]:
    return sorted(m.key() for m in matches)


def _row(etype: str, t: int, **values: Any) -> dict[str, Any]:
    return {"type": etype, "timestamp": t, **values}


# (query, rows, output, a selected match the pruning must not lose)
CASES = {
    # a+ skips A@1; B@1 ties with it, so {a/<e0>, b/<e2>} keeps a without e1: the tie
    # with the next set breaks the witness (checked before and while binding b)
    "tie with the next set": (
        "PATTERN SEQ({A+ a}, {B+ b}) WITHIN 9",
        [_row("A", 0), _row("A", 1), _row("B", 1), _row("B", 2)],
        "maximal",
        {"a": (0,), "b": (2, 3)},
    ),
    # a+ skips x = 5; a later x = 3 cannot follow it, so <e0, e2> is maximal
    "prev with v's next event": (
        "PATTERN SEQ({A+ a}) WHERE prev(a.x) < a.x WITHIN 9",
        [_row("A", 0, x=1), _row("A", 1, x=5), _row("A", 2, x=3)],
        "maximal",
        {"a": (0, 2)},
    ),
    # b skips B(x=1); c binds x = 2 later, which b/<e1> would not equal
    "a relationship with a later variable": (
        "PATTERN SEQ({A a, B b, C c}) WHERE b.x = c.x WITHIN 9",
        [_row("A", 0), _row("B", 1, x=1), _row("B", 2, x=2), _row("C", 3, x=2)],
        "earliest",
        {"a": (0,), "b": (2,), "c": (3,)},
    ),
    # the same relationship written twice still names one variable that may break it
    "a relationship written twice": (
        "PATTERN SEQ({A a, B b, C c}) WHERE b.x = c.x AND c.x = b.x WITHIN 9",
        [_row("A", 0), _row("B", 1, x=1), _row("B", 2, x=2), _row("C", 3, x=2)],
        "earliest",
        {"a": (0,), "b": (2,), "c": (3,)},
    ),
}


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_a_witness_that_a_later_binding_breaks_prunes_nothing(name: str, algorithm: str) -> None:
    query, rows, output, kept = CASES[name]
    expected = evaluate(query, rows, output=output)
    assert SesMatch(kept).key() in _keys(expected)
    found = ALGORITHMS[algorithm](ses_pattern(query), output).run_all(rows)
    assert _keys(found) == _keys(expected)


@pytest.mark.parametrize("output", ("maximal", "earliest-maximal"))
def test_maximal_builds_a_linear_number_of_instances(output: str) -> None:
    # every subset of twelve A events is a match of a+ starting at the first: 2^11
    # instances without selection; with it, one that skips an A is dropped at once
    rows = [_row("A", t) for t in range(12)]
    query = "PATTERN SEQ({A+ a}) WITHIN 20"
    matcher = AutomatonMatcher(ses_pattern(query), output)
    found = matcher.matches(rows, range(12))
    assert _keys(found) == [SesMatch({"a": tuple(range(12))}).key()]
    assert matcher.built <= 2 * len(rows)
    everything = AutomatonMatcher(ses_pattern(query))
    assert len(everything.matches(rows, range(12))) == 2**11


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_earliest_builds_one_instance_per_event_for_a_set(algorithm: str) -> None:
    # Pset of distinct labels without relationships: 5^5 matches start at the first
    # event; an instance (a partial join) that passes over an event of a variable it
    # has not bound, which no other variable may take, is dropped, so only the
    # earliest choice survives: each A..F taken at its first occurrence
    labels = "ABCDEF"
    rows = [_row(labels[t % 6], t) for t in range(30)]
    query = f"PATTERN SEQ({{{', '.join(f'{c} {c.lower()}' for c in labels)}}}) WITHIN 40"
    matcher = ALGORITHMS[algorithm](ses_pattern(query), "earliest")
    found = matcher.matches(rows, range(30))
    assert _keys(found) == [SesMatch({c.lower(): (i,) for i, c in enumerate(labels)}).key()]
    assert matcher.built <= len(rows)


@st.composite
def _tied_rows(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Up to 7 events, often at equal times, of types A and B, x and y in 0..2."""
    rows = draw(ses_rows(max_events=7))
    if rows and draw(st.booleans()):  # more ties
        for r in rows:
            r["timestamp"] //= 2
    return rows


@settings(max_examples=120, deadline=None)
@given(ses_queries(), _tied_rows(), st.sampled_from(SELECTING))
def test_selecting_while_matching_equals_the_oracle(
    query: str, rows: list[dict[str, Any]], output: str
) -> None:
    expected = _keys(evaluate(query, rows, output=output))
    pattern = ses_pattern(query)
    for name, algorithm in ALGORITHMS.items():
        assert _keys(algorithm(pattern, output).run_all(rows)) == expected, name
        for pruning in ("none", "fpc", "p"):
            f = Flags.parse(pruning)
            a = partial(algorithm, output=output)
            strategy = TwoPhase(pattern, a, f.filtering, f.partitioning, f.conditions)
            assert _keys(strategy.run(rows)) == expected, (name, pruning)


def test_a_witness_event_a_later_variable_may_take_prunes_nothing() -> None:
    # the join tree binds b before c (fewer candidates); b/<e2> passes over B@1, but
    # c may take that event (both are B), so {a/e0, b/e2, c/e1} is earliest
    query = "PATTERN SEQ({A a, B b, B+ c}) WHERE b.x = 1 WITHIN 9"
    rows = [_row("A", 0), _row("B", 1, x=1), _row("B", 2, x=1), _row("B", 3, x=0)]
    expected = evaluate(query, rows, output="earliest")
    assert SesMatch({"a": (0,), "b": (2,), "c": (1,)}).key() in _keys(expected)
    for algorithm in ALGORITHMS.values():
        found = algorithm(ses_pattern(query), "earliest").run_all(rows)
        assert _keys(found) == _keys(expected)
