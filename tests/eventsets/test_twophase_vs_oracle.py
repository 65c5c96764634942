"""Property tests: the join-tree matcher, alone and behind the two-phase strategy with
every combination of pruning techniques, finds exactly the oracle's matches
(Definition 2) on random small streams and random SES patterns."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings

from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.jointree import JoinTreeMatcher
from kleene.eventsets.model import SesMatch
from kleene.eventsets.twophase import Flags, TwoPhase
from kleene.oracle.eventsets import evaluate
from tests.eventsets.ses_queries import ses_queries, streams

PRUNINGS = ("none", "f", "fp", "fpc", "c", "pc")


def _keys(matches: list[SesMatch]) -> list[tuple[Any, ...]]:
    return sorted(m.key() for m in matches)


@settings(max_examples=120, deadline=None)
@given(ses_queries(), streams())
def test_join_tree_and_every_pruning_equal_the_oracle(
    query: str, rows: list[dict[str, Any]]
) -> None:
    expected = _keys(evaluate(query, rows))
    pattern = ses_pattern(query)
    assert _keys(JoinTreeMatcher(pattern).run_all(rows)) == expected, "join tree"
    for name in PRUNINGS:
        f = Flags.parse(name)
        strategy = TwoPhase(pattern, JoinTreeMatcher, f.filtering, f.partitioning, f.conditions)
        assert _keys(strategy.run(rows)) == expected, name
