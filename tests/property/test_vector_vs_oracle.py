"""The vectorized engine against the brute-force oracle: random contiguous queries,
random streams, random batch cuts, the per-event path, and snapshots between batches."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import kleene
from kleene import oracle
from kleene.lang import ast, parse
from tests.helpers import pieces
from tests.property.test_engine_vs_oracle import _key, _same_value
from tests.property.vector_queries import vector_cases

CONTIGUITY = [ast.Strategy.STRICT_CONTIGUITY, ast.Strategy.PARTITION_CONTIGUITY]
OUTPUTS = [ast.OutputFormat.ALL, ast.OutputFormat.NON_OVERLAP]


def _expect(text: str, events: list[dict[str, Any]], strategy: ast.Strategy, output: Any) -> Any:
    found = oracle.evaluate(parse(text), events, strategy=strategy, output=output)
    return {_key(m.ids): m.values for m in found}


def _same(found: list[Any], want: dict[Any, dict[str, Any]]) -> None:
    got = {_key(m.ids()): m.values() for m in found}
    assert len(got) == len(found), "a match was returned twice"
    assert set(got) == set(want)
    for key, values in want.items():
        assert all(_same_value(got[key][n], values[n]) for n in values), (got[key], values)


def _matcher(q: kleene.Query, small: int, state: bytes | None = None) -> Any:
    """A matcher whose batches below ``small`` events go event by event (stream mode)."""
    m = q.matcher(state=state)
    m.engine.small = small
    return m


@pytest.mark.parametrize("output", OUTPUTS, ids=lambda o: o.value)
@pytest.mark.parametrize("strategy", CONTIGUITY, ids=lambda s: s.value)
@given(case=vector_cases())
def test_vector_equals_oracle(
    case: tuple[str, list[dict[str, Any]]], strategy: ast.Strategy, output: ast.OutputFormat
) -> None:
    text, events = case
    note(text)
    m = _matcher(kleene.compile(text, strategy=strategy, output=output, engine="vector"), 0)
    _same(m.push(events) + m.flush(), _expect(text, events, strategy, output))


@pytest.mark.parametrize("output", OUTPUTS, ids=lambda o: o.value)
@pytest.mark.parametrize("strategy", CONTIGUITY, ids=lambda s: s.value)
@given(
    case=vector_cases(),
    cuts=st.lists(st.integers(0, 14), max_size=4),
    resume=st.booleans(),
    arrow=st.booleans(),
    small=st.sampled_from([0, 3, 64]),
)
def test_vector_batches_and_snapshots(
    case: tuple[str, list[dict[str, Any]]],
    cuts: list[int],
    resume: bool,
    arrow: bool,
    small: int,
    strategy: ast.Strategy,
    output: ast.OutputFormat,
) -> None:
    """Runs spanning batch boundaries are carried; a snapshot after each batch resumes;
    batches below ``small`` events go through stream mode and back."""
    text, events = case
    note(text)
    q = kleene.compile(text, strategy=strategy, output=output, engine="vector")
    m = _matcher(q, small)
    found = []
    for part in pieces(events, cuts):
        found += m.push(pa.Table.from_pylist(part) if arrow else part)
        if resume:
            m = _matcher(q, small, m.snapshot())
    found += m.flush()
    _same(found, _expect(text, events, strategy, output))


@pytest.mark.parametrize("strategy", CONTIGUITY, ids=lambda s: s.value)
@given(case=vector_cases(), bad=st.integers(0, 14), cut=st.integers(0, 14), late=st.booleans())
def test_vector_per_event_path(
    case: tuple[str, list[dict[str, Any]]], bad: int, cut: int, late: bool, strategy: ast.Strategy
) -> None:
    """A batch with a rejected event (or any allowed lateness) goes event by event; the
    next clean batch continues from the runs it left."""
    text, events = case
    note(text)
    if not events:
        return
    output = ast.OutputFormat.NON_OVERLAP if bad % 2 else ast.OutputFormat.ALL
    q = kleene.compile(
        text, strategy=strategy, output=output, engine="vector", allowed_lateness=int(late)
    )
    at = events[bad % len(events)]
    broken = {**at, "id": "bad", "timestamp": None}  # rejected: no time
    stream = [*events[: bad % len(events)], broken, *events[bad % len(events) :]]
    m = _matcher(q, 0)
    cut = min(cut, len(stream))
    found = m.push(stream[:cut]) + m.push(pa.Table.from_pylist(stream[cut:])) + m.flush()
    assert m.rejected_count == 1
    _same(found, _expect(text, events, strategy, output))
