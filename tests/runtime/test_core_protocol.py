"""The batch core protocol: every core, driven directly through ``Core.evaluate`` (no
matcher around it), finds the oracle's matches, both from a whole clean batch and
from events admitted one by one."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

import kleene
from kleene import oracle
from kleene.events import read_batch
from kleene.lang import ast, parse
from kleene.match import Match
from kleene.runtime.core import Admitted, Context
from kleene.runtime.vector import support
from tests.property.queries import cases

ANY = ast.Strategy.SKIP_TILL_ANY_MATCH
CONTIGUITY = (ast.Strategy.STRICT_CONTIGUITY, ast.Strategy.PARTITION_CONTIGUITY)
ENGINES = ("nfa", "merge", "backtrack", "postpone", "postpone-late", "vector")


def evaluate(query: kleene.Query, events: list[dict[str, Any]], whole: bool) -> list[Match]:
    """The matches of a core driven through the protocol alone: the batch admitted
    (whole when it is clean, otherwise event by event), then every evaluated event's
    results, then the core's flush."""
    m = query.matcher()
    core, state = m.engine, m.st.core
    if hasattr(core, "small"):
        core.small = 0  # the vector core: any whole batch natively
    admitted = m.admission.admit(read_batch(events, query.config.fields, 0))
    if not whole:
        admitted = Admitted(admitted.events())  # the same events, not as a batch
    ctx = Context(m.clock.window, m.time_out, None, {})
    results: list[Any] = []
    for _time, _position, event, _partition, found in core.evaluate(state, admitted, ctx):
        results += found
        if event is None:  # a natively evaluated batch: its matches are finished
            assert all(isinstance(r, Match) for r in found)
    results += core.flush(state, m.clock.window())
    return [r if isinstance(r, Match) else m.decisions.formatter.match(r) for r in results]


def key(ids: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted((var, tuple(xs)) for var, xs in ids.items()))


@pytest.mark.parametrize("engine", ENGINES)
@settings(max_examples=30, deadline=None)
@given(case=cases(), strategy=st.sampled_from(list(ast.Strategy)), whole=st.booleans())
def test_every_core_through_the_protocol_equals_the_oracle(
    case: tuple[str, list[dict[str, Any]]], strategy: ast.Strategy, whole: bool, engine: str
) -> None:
    text, events = case
    assume("~" not in text)  # negations are checked by the matcher, not by a core
    if engine.startswith("postpone"):
        strategy = ANY
    query = kleene.compile(text, strategy=strategy)
    if engine == "vector":
        assume(strategy in CONTIGUITY and support(query.plan) is None)
    query = kleene.compile(text, strategy=strategy, engine=engine)
    note(f"{text} / {strategy.value} / {engine} / whole={whole}")
    found = evaluate(query, events, whole)
    expected = oracle.evaluate(parse(text), events, strategy=strategy)
    assert sorted(key(m.ids()) for m in found) == sorted(key(m.ids) for m in expected)


def test_the_vector_core_evaluates_a_clean_batch_natively() -> None:
    """One result for the whole batch, without an event; event by event otherwise."""
    text = "PATTERN SEQ(A a, B b) WHERE strict_contiguity WITHIN 10"
    query = kleene.compile(text, engine="vector")
    events = [
        {"type": "A" if i % 2 == 0 else "B", "timestamp": i, "id": f"e{i}"} for i in range(100)
    ]
    m = query.matcher()
    admitted = m.admission.admit(read_batch(events, query.config.fields, 0))
    assert admitted.batch is not None  # clean and in order: admitted whole
    evaluated = list(
        m.engine.evaluate(m.st.core, admitted, Context(m.clock.window, m.time_out, None, {}))
    )
    assert len(evaluated) == 1
    _time, _position, event, _partition, found = evaluated[0]
    assert event is None and len(list(found)) == 50
    fresh = query.matcher()
    admitted = fresh.admission.admit(read_batch(events, query.config.fields, 0))
    ctx = Context(fresh.clock.window, fresh.time_out, None, {})
    one_by_one = list(fresh.engine.evaluate(fresh.st.core, Admitted(admitted.events()), ctx))
    assert [position for _t, position, _e, _p, _f in one_by_one] == list(range(100))
    assert sum(len(list(found)) for *_rest, found in one_by_one) == 50
