"""Limits of event-set patterns (issue 25): ``max_matches`` stops algorithm A inside a
window, as the matches are found; ``max_runs`` bounds the events one match window holds
and the partial matches A holds for one window."""

from __future__ import annotations

from itertools import islice
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene import kinds
from kleene.errors import MatchLimitError, QueryError, RunLimitError
from kleene.eventsets.automaton import AutomatonMatcher
from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.jointree import JoinTreeMatcher
from kleene.eventsets.query import ALGORITHMS
from kleene.match import Match
from kleene.oracle.eventsets import evaluate
from tests.eventsets.strategies import ses_queries, ses_rows

#: the issue's exploding pattern: every non-empty subset of the A events with every
#: non-empty subset of the B events before one C, (2^k - 1)^2 matches from the first A
EXPLODING = "PATTERN SEQ({A+ a, B+ b}, C c) WITHIN 1000"


def _alternating(n: int) -> list[dict[str, Any]]:
    """``n`` events alternating A and B, then one C."""
    rows = [{"id": i, "type": "AB"[i % 2], "timestamp": i} for i in range(n)]
    return [*rows, {"id": n, "type": "C", "timestamp": n}]


@pytest.mark.parametrize("algorithm", ALGORITHMS[1:])
@pytest.mark.parametrize("preprocessing", ["fpc", "none"])
@pytest.mark.parametrize("how", ["run", "push", "chunks"])
def test_max_matches_stops_an_exploding_window(
    algorithm: str, preprocessing: str, how: str
) -> None:
    """2^46 matches: only a search stopped at the eleventh ends."""
    q = kleene.compile(EXPLODING, max_matches=10, algorithm=algorithm, preprocessing=preprocessing)
    events = _alternating(48)
    handed: list[Match] = []
    with pytest.raises(MatchLimitError, match="max_matches=10"):
        if how == "run":
            q.run(events)
        elif how == "push":
            m = q.matcher()
            m.push(events)
            m.flush()
        else:
            m = q.matcher(on_matches=handed.extend)
            m.push(events)
            m.flush()
    if how == "chunks":  # the matches before the limit were handed out first
        assert len(handed) == 10 == m.reported
        assert all(x.ids()["c"] == (48,) and x.ids()["a"][0] == 0 for x in handed)


@pytest.mark.parametrize("algorithm", [AutomatonMatcher, JoinTreeMatcher])
def test_algorithm_a_builds_little_for_its_first_matches(algorithm: type) -> None:
    """The first ten matches of a window of 2^22 cost at most a few instances (partial
    joins) per event of the window, not the 2^21 a breadth-first search holds."""
    rows = _alternating(24)
    matcher = algorithm(ses_pattern(EXPLODING))
    first = list(islice(matcher.each(rows, range(len(rows))), 10))
    assert len(first) == 10 and len({m.key() for m in first}) == 10
    assert matcher.built <= 10 * len(rows)


@settings(max_examples=40, deadline=None)
@given(ses_queries(), ses_rows(max_events=10), st.integers(0, 12), st.sampled_from(ALGORITHMS))
def test_a_limited_matcher_reports_the_first_matches_of_an_unlimited_one(
    text: str, rows: list[dict[str, Any]], limit: int, algorithm: str
) -> None:
    """Under max_matches=N a matcher hands out exactly the first N matches the
    unlimited one reports, in the same order, then raises if there are more."""
    everything = kleene.compile(text, max_matches=None, algorithm=algorithm).matcher()
    expected = [*everything.push(rows), *everything.flush()]
    handed: list[Match] = []
    limited = kleene.compile(text, max_matches=limit, algorithm=algorithm)
    m = limited.matcher(on_matches=handed.extend)
    if len(expected) > limit:
        with pytest.raises(MatchLimitError):
            m.push(rows)
            m.flush()
    else:
        assert m.push(rows) == [] and m.flush() == []
    assert handed == expected[:limit]


@settings(max_examples=40, deadline=None)
@given(ses_queries(), ses_rows(max_events=8), st.sampled_from(("all", "earliest-maximal")))
def test_the_join_tree_without_kept_leaves_equals_the_oracle(
    text: str, rows: list[dict[str, Any]], output: str
) -> None:
    """With max_runs=1 the join tree keeps (almost) no leaf binding to read again and
    makes the others anew on each pass: the same matches."""
    found = JoinTreeMatcher(ses_pattern(text), output, max_runs=1).run_all(rows)
    expected = sorted(m.key() for m in evaluate(text, rows, output=output))
    assert sorted(m.key() for m in found) == expected


@pytest.mark.parametrize("preprocessing", ["fpc", "f", "none"])
@pytest.mark.parametrize("how", ["run", "push"])
def test_max_runs_bounds_the_events_of_a_window(preprocessing: str, how: str) -> None:
    text = "PATTERN SEQ({A a}, B b) WITHIN 100"
    rows = [{"id": i, "type": "AB"[i % 2], "timestamp": i} for i in range(10)]

    def matches(max_runs: int) -> list[Match]:
        q = kleene.compile(text, max_runs=max_runs, preprocessing=preprocessing)
        if how == "run":
            return q.run(rows)
        m = q.matcher()
        return [*m.push(rows), *m.flush()]

    assert len(matches(10)) == 15  # each A with each later B: 5 + 4 + 3 + 2 + 1
    with pytest.raises(RunLimitError, match=r"more than max_runs=9 events in one match window"):
        matches(9)


def test_max_runs_bounds_the_partial_matches_of_the_automaton() -> None:
    pattern = ses_pattern("PATTERN SEQ({A+ a}) WITHIN 100")
    rows = [{"type": "A", "timestamp": t} for t in range(10)]
    assert len(AutomatonMatcher(pattern).matches(rows, range(10))) == 2**9
    with pytest.raises(RunLimitError, match="partial matches of one match window"):
        AutomatonMatcher(pattern, max_runs=5).matches(rows, range(10))


def test_max_runs_is_an_option() -> None:
    assert "max_runs" in kinds.get("eventset").options()
    assert kleene.compile(EXPLODING, max_runs=7).max_runs == 7
    with pytest.raises(QueryError, match="max_runs must be an integer >= 1"):
        kleene.compile(EXPLODING, max_runs=0)
    with pytest.raises(QueryError, match="max_matches must be an integer >= 0"):
        kleene.compile(EXPLODING, max_matches=-1)
