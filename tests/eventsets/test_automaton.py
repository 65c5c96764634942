"""The automaton-based SES matcher equals the oracle (Definition 2), on Chemo and on
random streams and patterns, for every output."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.eventsets.automaton import AutomatonMatcher
from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.model import SesMatch
from kleene.eventsets.selection import OUTPUTS
from kleene.oracle.eventsets import evaluate
from tests.eventsets.chemo import Q1, e, rows
from tests.eventsets.strategies import ses_queries, ses_rows


def by_key(matches: list[SesMatch]) -> list[Any]:
    return sorted(m.key() for m in matches)


@pytest.mark.parametrize("output", OUTPUTS)
def test_chemo_equals_the_oracle(output: str) -> None:
    matcher = AutomatonMatcher(ses_pattern(Q1, time_unit="d"), output)
    expected = evaluate(Q1, rows(), time_unit="d", output=output)
    assert by_key(matcher.run_all(rows())) == by_key(expected)


def test_example_7_algorithm_a_on_match_windows() -> None:
    # A(P1, W1) on the filtered, partitioned window of patient 1 (Examples 8 and 12):
    # the earliest-and-maximal match {c/e1, p/<e3, e9>, b/e11}; A(P1, W2) is empty
    matcher = AutomatonMatcher(ses_pattern(Q1, time_unit="d"), "earliest-maximal")
    events = rows()
    w1 = e(1, 2, 3, 9, 11)
    found = matcher.matches([events[k] for k in w1], w1)
    assert by_key(found) == by_key([SesMatch({"c": e(1), "p": e(3, 9), "b": e(11)})])
    w2 = tuple(k for k in range(1, 13) if k != e(6)[0])
    assert matcher.matches([events[k] for k in w2], w2) == []


def test_matches_start_at_the_first_event_only() -> None:
    # all 11 matches of Definition 2, from each event's window in turn
    matcher = AutomatonMatcher(ses_pattern(Q1, time_unit="d"))
    events = rows()
    starts = {m.first for m in matcher.run_all(events)}
    assert starts == {e(1)[0], e(5)[0], e(7)[0]}
    w = list(range(e(7)[0], len(events)))
    from_e7 = matcher.matches([events[k] for k in w], w)
    assert {m.first for m in from_e7} == {e(7)[0]}
    assert len(from_e7) == 4  # p/<e8> or <e10>, b/e12 or e13


@settings(max_examples=150, deadline=None)
@given(ses_queries(), ses_rows(missing=True), st.sampled_from(OUTPUTS))
def test_random_patterns_equal_the_oracle(text: str, events: list[dict], output: str) -> None:
    matcher = AutomatonMatcher(ses_pattern(text), output)
    assert by_key(matcher.run_all(events)) == by_key(evaluate(text, events, output=output))


def test_one_matcher_serves_other_events_at_the_same_positions() -> None:
    # the matcher remembers which variables each event fits, by position; another
    # event at a position already seen is evaluated afresh
    matcher = AutomatonMatcher(ses_pattern("PATTERN SEQ({A a}, {B b}) WITHIN 5"))
    first = [{"type": "A", "timestamp": 1}, {"type": "B", "timestamp": 2}]
    second = [{"type": "B", "timestamp": 1}, {"type": "A", "timestamp": 2}]
    assert by_key(matcher.matches(first, [0, 1])) == by_key([SesMatch({"a": (0,), "b": (1,)})])
    assert matcher.matches(second, [0, 1]) == []
