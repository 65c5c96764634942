"""Property tests: both matching algorithms (the join tree and the automaton), alone and
behind the two-phase strategy with each combination of pruning techniques, find exactly
the oracle's matches (Definition 2, and its earliest-and-maximal selection) on random
small streams and random SES patterns, many of them partitionable."""

from __future__ import annotations

from functools import partial
from typing import Any

from hypothesis import given, settings

from kleene.eventsets.automaton import AutomatonMatcher
from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.jointree import JoinTreeMatcher
from kleene.eventsets.model import SesMatch
from kleene.eventsets.twophase import Flags, TwoPhase
from kleene.oracle.eventsets import evaluate
from tests.eventsets.ses_queries import ses_queries
from tests.eventsets.strategies import ses_rows as streams

PRUNINGS = ("none", "f", "fp", "fpc", "c", "pc")
ALGORITHMS = {"join tree": JoinTreeMatcher, "automaton": AutomatonMatcher}


def _keys(matches: list[SesMatch]) -> list[tuple[Any, ...]]:
    return sorted(m.key() for m in matches)


def _two_phase(query: str, algorithm: Any, pruning: str, rows: list[dict[str, Any]]) -> Any:
    f = Flags.parse(pruning)
    strategy = TwoPhase(ses_pattern(query), algorithm, f.filtering, f.partitioning, f.conditions)
    return _keys(strategy.run(rows))


@settings(max_examples=100, deadline=None)
@given(ses_queries(), streams())
def test_every_algorithm_and_pruning_equal_the_oracle(
    query: str, rows: list[dict[str, Any]]
) -> None:
    expected = _keys(evaluate(query, rows))
    pattern = ses_pattern(query)
    for name, algorithm in ALGORITHMS.items():
        assert _keys(algorithm(pattern).run_all(rows)) == expected, name
        for pruning in PRUNINGS:
            assert _two_phase(query, algorithm, pruning, rows) == expected, (name, pruning)


@settings(max_examples=50, deadline=None)
@given(ses_queries(), streams())
def test_earliest_maximal_behind_the_strategy_equal_the_oracle(
    query: str, rows: list[dict[str, Any]]
) -> None:
    """Selection within a window is exact (a witness starts at the same event), and the
    pruning removes only events in no match, so it keeps the selection."""
    expected = _keys(evaluate(query, rows, output="earliest-maximal"))
    for algorithm in ALGORITHMS.values():
        select = partial(algorithm, output="earliest-maximal")
        for pruning in ("none", "fpc"):
            assert _two_phase(query, select, pruning, rows) == expected, (algorithm, pruning)
