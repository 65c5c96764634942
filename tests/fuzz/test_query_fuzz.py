"""Query fuzzing: any text either compiles, and then the engine equals the oracle on a
small random stream, or raises QueryError at a line and column inside the text. No other
exception escapes ``kleene.compile`` or ``kleene.compile_program``."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import kleene
from kleene import oracle
from kleene.errors import QueryError, split_lines
from kleene.lang import ast
from tests.fuzz.query_texts import grammar_queries, mutated_queries, respelled_queries

FUZZ = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def assert_inside(error: QueryError, text: str) -> None:
    """The error has a position, on a line of the text, at most one past its end."""
    assert error.line is not None and error.column is not None, str(error)
    lines = split_lines(text)
    assert 1 <= error.line <= len(lines), str(error)
    assert 1 <= error.column <= len(lines[error.line - 1]) + 1, str(error)
    assert str(error).startswith(f"line {error.line}, column {error.column}: ")


@st.composite
def _streams(draw: Any, types: tuple[str, ...], attrs: tuple[str, ...]) -> list[dict[str, Any]]:
    """Small streams whose events carry every attribute the query reads (a missing one
    is the subject of the event checks, not of these)."""
    events: list[dict[str, Any]] = []
    time = 0
    for k in range(draw(st.integers(0, 7))):
        time += draw(st.integers(0, 2))
        events.append(
            {
                "type": draw(st.sampled_from(types)),
                "timestamp": time,
                "id": f"e{k}",
                "x": draw(st.integers(0, 3)),
                "y": draw(st.integers(0, 2)),
                "price": draw(st.sampled_from((50, 100, 500, 1000))),
                "volume": draw(st.integers(100, 200)),
                "symbol": draw(st.sampled_from(("IBM", "SUN"))),
            }
        )
        for attr in attrs:
            events[-1].setdefault(attr, draw(st.integers(0, 3)))
    return events


def _key(ids: dict[str, Any]) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    return tuple(sorted((k, tuple(v)) for k, v in ids.items()))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9)
    return bool(a == b)


def _equal(found: list[Any], expected: list[Any]) -> None:
    got = {_key(m.ids()): m.values() for m in found}
    want = {_key(m.ids): m.values for m in expected}
    assert len(got) == len(found), "the engine returned a match twice"
    assert set(got) == set(want)
    for key, values in want.items():
        assert all(_same(got[key][n], values[n]) for n in values), (got[key], values)


def check_text(text: str, data: st.DataObject, *, valid: bool = False) -> None:
    """Compiles ``text`` as a query and as a program; each either fails in place (unless
    ``valid``) or runs as the oracle does."""
    note(repr(text))
    compiled: list[kleene.Query | kleene.Program] = []
    for compile_text in (kleene.compile, kleene.compile_program):
        try:
            # the streams' times are numbers; the oracle reads a window with a unit in
            # seconds, so one timestamp unit is a second
            compiled.append(compile_text(text, time_unit="s"))
        except QueryError as error:
            assert not valid, str(error)
            assert_inside(error, text)
    for item in compiled:
        nodes = item.queries if isinstance(item, kleene.Program) else (item,)
        types = {c.event_type for q in nodes for c in q.ast.pattern.components}
        types -= set(getattr(item, "definitions", {}))
        attrs = {a for q in nodes for a in q.plan.attributes}
        events = data.draw(_streams(tuple(sorted(types | {"Stock", "E"})), tuple(sorted(attrs))))
        note(repr(events))
        if isinstance(item, kleene.Program):
            _equal(item.run(events), oracle.evaluate_program(item.ast, events))
            continue
        if item.output is ast.OutputFormat.COLLAPSED:
            item = kleene.compile(text, output="all", time_unit="s")
        _equal(item.run(events), oracle.evaluate(item.ast, events, output=item.output))


@FUZZ
@given(text=grammar_queries(), data=st.data())
def test_grammar_queries_compile_or_fail_in_place(text: str, data: st.DataObject) -> None:
    check_text(text, data)


@FUZZ
@given(text=mutated_queries(), data=st.data())
def test_mutated_queries_compile_or_fail_in_place(text: str, data: st.DataObject) -> None:
    check_text(text, data)


@FUZZ
@given(text=respelled_queries(), data=st.data())
def test_respelled_valid_queries_compile_and_equal_the_oracle(
    text: str, data: st.DataObject
) -> None:
    check_text(text, data, valid=True)
