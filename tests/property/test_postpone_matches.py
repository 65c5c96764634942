"""Postponing builds its matches from grouped results (SIGMOD 2014, section 5.1): every
field of every Match (positions, start, end, RETURN values) equals the basic NFA^b's."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, note

import kleene
from kleene.lang import ast
from tests.property.queries import cases

OUTPUTS = [ast.OutputFormat.ALL, ast.OutputFormat.NON_OVERLAP]


@pytest.mark.parametrize("engine", ["postpone", "postpone-late"])
@pytest.mark.parametrize("output", OUTPUTS, ids=lambda o: o.value)
@given(case=cases())
def test_postponed_matches_equal_basic_matches(
    case: tuple[str, list[dict[str, Any]]], output: ast.OutputFormat, engine: str
) -> None:
    text, events = case
    note(text)
    strategy = ast.Strategy.SKIP_TILL_ANY_MATCH
    got = kleene.compile(text, strategy=strategy, output=output, engine=engine).run(events)
    want = kleene.compile(text, strategy=strategy, output=output, engine="nfa").run(events)
    assert [repr(m) for m in got] == [repr(m) for m in want]
