"""The automaton drops an instance whose unbound variables cannot each find a distinct
fitting event in the rest of the window (kleene.eventsets.automaton._Need): a window
too sparse for the pattern builds no instance at all, and an instance with exactly
enough events left must still complete (one event fewer and it must not)."""

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
from tests.eventsets.strategies import ses_queries, ses_rows

THREE_A = "PATTERN SEQ({A a, A b, B c, A d}) WITHIN 9"


def _rows(types: str) -> list[dict[str, Any]]:
    return [{"type": t, "timestamp": k, "x": k} for k, t in enumerate(types)]


def _keys(matches: list[SesMatch]) -> list[Any]:
    return sorted(m.key() for m in matches)


def test_a_window_with_too_few_events_builds_nothing() -> None:
    # three A variables, two A events: no match, and no instance is built for it
    matcher = AutomatonMatcher(ses_pattern(THREE_A), "earliest-maximal")
    rows = _rows("ABAB")
    assert matcher.matches(rows, range(len(rows))) == []
    assert matcher.built == 0


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("types", ["ABAA", "AABA", "ABAAB", "AAAB", "AABBA"])
def test_exactly_enough_events_still_match(types: str, output: str) -> None:
    # each window's last A is needed: a deadline one event early loses the matches
    rows = _rows(types)
    found = AutomatonMatcher(ses_pattern(THREE_A), output).run_all(rows)
    expected = evaluate(THREE_A, rows, output=output)
    assert expected
    assert _keys(found) == _keys(expected)


def test_overlapping_properties_count_distinct_events() -> None:
    # a and b both fit each A with x > 0, c only the last: per variable there is an
    # event, but a, b and c need three distinct events (Hall's condition as a whole)
    text = "PATTERN SEQ({A a, A b, A c}) WHERE a.x > 0 AND b.x > 0 AND c.x > 1 WITHIN 9"
    matcher = AutomatonMatcher(ses_pattern(text), "all")
    rows = _rows("AAA")
    assert matcher.matches(rows, range(3)) == []
    assert matcher.built == 0
    rows = _rows("AAAA")
    assert _keys(matcher.run_all(rows)) == _keys(evaluate(text, rows, output="all"))


@settings(max_examples=25, deadline=None)
@given(ses_queries(max_variables=5), ses_rows(max_events=7), st.sampled_from(OUTPUTS))
def test_many_variables_of_few_types_equal_the_oracle(
    text: str, events: list[dict[str, Any]], output: str
) -> None:
    matcher = AutomatonMatcher(ses_pattern(text), output)
    assert _keys(matcher.run_all(events)) == _keys(evaluate(text, events, output=output))
