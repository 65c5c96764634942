"""The same stream as dict rows and as an Arrow table (kleene/eventsets/sources.py): the
column-wise pre-processing reads a table's columns as arrays and builds rows only for
the windows A sees, and must find the same matches, raise the same errors and (through
Query.run) reject the same events as from dict rows."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.errors import KleeneError
from kleene.eventsets.automaton import AutomatonMatcher
from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.jointree import JoinTreeMatcher
from kleene.eventsets.twophase import Flags, TwoPhase
from kleene.oracle.eventsets import evaluate
from tests.eventsets.ses_queries import ses_queries
from tests.eventsets.strategies import ses_rows

PRUNINGS = ("none", "f", "fp", "fpc", "c", "pc")


def _strategy(query: str, pruning: str, algorithm: Any) -> TwoPhase:
    f = Flags.parse(pruning)
    return TwoPhase(ses_pattern(query), algorithm, f.filtering, f.partitioning, f.conditions)


def _outcome(query: str, pruning: str, algorithm: Any, events: Any) -> Any:
    """The sorted match keys, or the error's message."""
    try:
        return sorted(m.key() for m in _strategy(query, pruning, algorithm).run_columns(events))
    except KleeneError as e:
        return str(e)


def _table(rows: list[dict[str, Any]]) -> pa.Table:
    """The rows as a table with a column per key of any row (null where a row lacks
    it; ``from_pylist`` would take the keys of the first row only)."""
    keys = ["type", "timestamp", "id", "x", "y"]
    return pa.Table.from_pydict({k: [r.get(k) for r in rows] for k in keys})


@st.composite
def _shuffled(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Rows with y missing or null here and there, sometimes one time moved back."""
    rows = draw(ses_rows(max_events=10, missing=True))
    if len(rows) > 2 and draw(st.integers(0, 3)) == 0:
        j = draw(st.integers(1, len(rows) - 1))
        rows[j]["timestamp"] = rows[j - 1]["timestamp"] - 1
    return rows


@settings(max_examples=20, deadline=None)
@given(
    ses_queries(),
    _shuffled(),
    st.sampled_from(PRUNINGS),
    st.sampled_from((AutomatonMatcher, JoinTreeMatcher)),
)
def test_table_and_rows_give_the_same_matches(
    query: str, rows: list[dict[str, Any]], pruning: str, algorithm: Any
) -> None:
    from_rows = _outcome(query, pruning, algorithm, rows)
    assert _outcome(query, pruning, algorithm, _table(rows)) == from_rows
    if isinstance(from_rows, list):  # in time order: the oracle's matches
        assert from_rows == sorted(m.key() for m in evaluate(query, rows))


@settings(max_examples=10, deadline=None)
@given(ses_queries(), _shuffled())
def test_query_run_rejects_the_same_events_from_a_table(
    text: str, rows: list[dict[str, Any]]
) -> None:
    """A table cannot leave a value out, only hold a null: the dict rows with the
    table's nulls are the same stream (an absent key is a missing attribute)."""
    table = _table(rows)
    q = kleene.compile(text, output="earliest-maximal")
    want, got = q.run_detailed(table.to_pylist()), q.run_detailed(table)
    key = lambda x: (x.first_position, x.last_position, sorted(x.positions.items()))  # noqa: E731
    assert sorted(map(key, got.matches)) == sorted(map(key, want.matches))
    assert [(r.id, r.reason) for r in got.rejected] == [(r.id, r.reason) for r in want.rejected]


QUERY = "PATTERN SEQ({A a, B+ b}, {A c}) WHERE a.x = b.x AND b.x = c.x AND b.y > 0 WITHIN 4"
ROWS = [
    {"type": t, "timestamp": k, "id": k, "x": k % 2, "y": k % 3} for k, t in enumerate("ABBDABAABA")
]


@pytest.mark.parametrize(
    "events",
    [
        pa.Table.from_pylist(ROWS),
        pa.RecordBatch.from_pylist(ROWS),
        pd.DataFrame(ROWS),
    ],
    ids=["table", "record batch", "data frame"],
)
def test_every_table_form_and_only_candidate_rows(events: Any) -> None:
    """Arrow tables, record batches and pandas frames are read by column; A sees rows
    of its candidate windows only, equal to the dict rows'."""
    seen: list[dict[str, Any]] = []

    class Seeing(AutomatonMatcher):
        def each(self, rows: Any, positions: Any) -> Any:
            seen.extend(rows)
            return super().each(rows, positions)

    strategy = _strategy(QUERY, "fpc", Seeing)
    found = sorted(m.key() for m in strategy.run_columns(events))
    assert found == sorted(m.key() for m in evaluate(QUERY, ROWS)) and found
    assert all(row == ROWS[row["id"]] for row in seen)
    assert strategy.counters.events_to_a == len(seen) < 2 * len(ROWS)


def test_a_missing_column_reads_as_missing_values() -> None:
    rows = [{k: v for k, v in row.items() if k != "y"} for row in ROWS]
    table = pa.Table.from_pylist(rows)
    assert "y" not in table.column_names
    for pruning in PRUNINGS:
        assert _outcome(QUERY, pruning, AutomatonMatcher, table) == _outcome(
            QUERY, pruning, AutomatonMatcher, rows
        )
