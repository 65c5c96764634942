"""The engine against the brute-force oracle on random streams and random queries."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

import kleene
from kleene import oracle
from kleene.lang import ast, parse
from tests.helpers import push_arrow_pieces
from tests.property.queries import cases

STRATEGIES = list(ast.Strategy)
OUTPUTS = [ast.OutputFormat.ALL, ast.OutputFormat.NON_OVERLAP]


def _key(ids: dict[str, tuple[Any, ...]]) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    return tuple(sorted((k, tuple(v)) for k, v in ids.items()))


def _same_value(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9)
    return bool(a == b)


def check(
    text: str,
    events: list[dict[str, Any]],
    strategy: ast.Strategy,
    output: ast.OutputFormat,
    engine: str = "nfa",
) -> None:
    note(text)
    note(repr(events))
    found = kleene.compile(text, strategy=strategy, output=output, engine=engine).run(events)
    expected = oracle.evaluate(parse(text), events, strategy=strategy, output=output)
    got = {_key(m.ids()): m.values() for m in found}
    want = {_key(m.ids): m.values for m in expected}
    assert len(got) == len(found), "the engine returned a match twice"
    assert set(got) == set(want)
    for key, values in want.items():
        assert set(got[key]) == set(values)
        assert all(_same_value(got[key][n], values[n]) for n in values), (got[key], values)


ENGINES = ["nfa", "merge"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("output", OUTPUTS, ids=lambda o: o.value)
@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.value)
@given(case=cases())
def test_engine_equals_oracle(
    case: tuple[str, list[dict[str, Any]]],
    strategy: ast.Strategy,
    output: ast.OutputFormat,
    engine: str,
) -> None:
    check(*case, strategy, output, engine)


ALL, NON_OVERLAP = ast.OutputFormat.ALL, ast.OutputFormat.NON_OVERLAP
KEYED = [  # (strategy, engine, output): engines whose runs may be routed by a key
    (ast.Strategy.PARTITION_CONTIGUITY, "nfa", ALL),
    (ast.Strategy.PARTITION_CONTIGUITY, "nfa", NON_OVERLAP),
    (ast.Strategy.SKIP_TILL_NEXT_MATCH, "nfa", ALL),
    (ast.Strategy.SKIP_TILL_NEXT_MATCH, "merge", NON_OVERLAP),
    (ast.Strategy.SKIP_TILL_NEXT_MATCH, "backtrack", ALL),
    (ast.Strategy.SKIP_TILL_ANY_MATCH, "merge", ALL),
    (ast.Strategy.SKIP_TILL_ANY_MATCH, "postpone", NON_OVERLAP),
]


@pytest.mark.parametrize("strategy,engine,output", KEYED, ids=lambda x: getattr(x, "value", x))
@settings(max_examples=40)
@given(case=cases(chain=True))
def test_equalities_between_variables_equal_oracle(
    case: tuple[str, list[dict[str, Any]]],
    strategy: ast.Strategy,
    engine: str,
    output: ast.OutputFormat,
) -> None:
    """Equalities tying every variable form no partition; where the engine indexes its
    runs by them (a hash key), the matches must not change (docs/semantics.md,
    "Partitions")."""
    text, events = case
    if engine == "backtrack":
        assume("~" not in text)
    check(text, events, strategy, output, engine)


@pytest.mark.parametrize("engine", ["postpone", "postpone-late"])
@pytest.mark.parametrize("output", OUTPUTS, ids=lambda o: o.value)
@given(case=cases())
def test_postponing_equals_oracle(
    case: tuple[str, list[dict[str, Any]]], output: ast.OutputFormat, engine: str
) -> None:
    check(*case, ast.Strategy.SKIP_TILL_ANY_MATCH, output, engine)


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.value)
@given(case=cases(), cuts=st.lists(st.integers(0, 12), max_size=4))
def test_arrow_batches_equal_one_list(
    case: tuple[str, list[dict[str, Any]]], cuts: list[int], strategy: ast.Strategy
) -> None:
    """Pushing the stream as several pyarrow batches (the vectorized admission path)
    gives the matches of one list of dicts."""
    text, events = case
    q = kleene.compile(text, strategy=strategy)
    whole = {_key(m.ids()): m.values() for m in q.run(events)}
    found = push_arrow_pieces(q.matcher(), events, cuts)
    assert {_key(x.ids()): x.values() for x in found} == whole
    assert len(found) == len(whole)


@given(case=cases())
def test_collapsed_matches_expand_to_the_oracle_matches(
    case: tuple[str, list[dict[str, Any]]],
) -> None:
    text, events = case
    assume("~" not in text)  # collapsed output is defined for patterns without negation
    note(text)
    strategy = ast.Strategy.SKIP_TILL_ANY_MATCH
    q = kleene.compile(text, strategy=strategy, output="collapsed")
    collapsed = q.run_collapsed(events)
    expanded = [m for c in collapsed for m in c.expand()]
    assert all(c.count() == len(c.expand()) for c in collapsed)
    expected = oracle.evaluate(parse(text), events, strategy=strategy)
    assert sorted(_key(m.ids()) for m in expanded) == sorted(_key(m.ids) for m in expected)


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: s.value)
@given(case=cases())
def test_backtracking_equals_oracle(
    case: tuple[str, list[dict[str, Any]]], strategy: ast.Strategy
) -> None:
    assume("~" not in case[0])  # the backtrack engine takes queries without negation
    check(*case, strategy, ast.OutputFormat.ALL, "backtrack")


CONTIGUITY = [ast.Strategy.STRICT_CONTIGUITY, ast.Strategy.PARTITION_CONTIGUITY]


@pytest.mark.parametrize("output", OUTPUTS, ids=lambda o: o.value)
@pytest.mark.parametrize("strategy", CONTIGUITY, ids=lambda s: s.value)
@settings(max_examples=25)  # most general queries are declined; vector_queries has more
@given(case=cases())
def test_vector_engine_equals_oracle(
    case: tuple[str, list[dict[str, Any]]], strategy: ast.Strategy, output: ast.OutputFormat
) -> None:
    """The general random queries that the vectorized engine takes (more shapes in
    tests/property/test_vector_vs_oracle.py)."""
    from kleene.runtime.vector import support

    q = kleene.compile(case[0], strategy=strategy, output=output)
    assume(support(q.plan) is None)
    expected = oracle.evaluate(parse(case[0]), case[1], strategy=strategy, output=output)
    m = q.matcher()
    m.engine.small = 0  # whole batches, not event by event
    found = m.push(case[1]) + m.flush()
    got = {_key(x.ids()): x.values() for x in found}
    want = {_key(x.ids): x.values for x in expected}
    assert len(got) == len(found) and set(got) == set(want)
    for key, values in want.items():
        assert all(_same_value(got[key][n], values[n]) for n in values), (got[key], values)


ANY_MATCH = ast.Strategy.SKIP_TILL_ANY_MATCH


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("output", OUTPUTS, ids=lambda o: o.value)
@given(case=cases(groups=True))
def test_groups_equal_oracle(
    case: tuple[str, list[dict[str, Any]]], output: ast.OutputFormat, engine: str
) -> None:
    """Kleene closure of a nested sequence, SEQ(...)+ (SIGMOD 2014, section 2.1)."""
    check(*case, ANY_MATCH, output, engine)


@given(case=cases(groups=True), cuts=st.lists(st.integers(0, 12), max_size=4))
def test_groups_in_batches_equal_one_run(
    case: tuple[str, list[dict[str, Any]]], cuts: list[int]
) -> None:
    """Random batch cuts (pyarrow, the vectorized admission path) change nothing."""
    text, events = case
    q = kleene.compile(text, strategy=ANY_MATCH)
    whole = {_key(m.ids()): m.values() for m in q.run(events)}
    found = push_arrow_pieces(q.matcher(), events, cuts)
    assert {_key(x.ids()): x.values() for x in found} == whole
    assert len(found) == len(whole)
