"""Match windows in front of the SASE+ engines (``match_windows=True``): which events
reach the engine, where the option is refused, and that it changes no match (against
the option's absence and the oracle, on random queries in the sound case)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

import kleene
from kleene import oracle
from kleene.errors import QueryError
from kleene.events import EventFields, read_batch
from kleene.eventsets.model import SesPattern, SetVariable
from kleene.eventsets.windows import candidates
from kleene.lang import ast, parse
from kleene.runtime.matchwindows import WindowFront, chained
from kleene.runtime.prefilter import Prefilter
from tests.helpers import push_arrow_pieces
from tests.property.queries import TYPES, queries, streams

ABC = "PATTERN SEQ(A a, B b, C c) WHERE skip_till_next_match(a, b, c) {[x]} WITHIN 5"


def _kept(text: str, rows: list[dict[str, Any]], fresh: bool = True) -> list[int]:
    """The ids of the events the front lets through, for a batch admitted whole."""
    plan = kleene.compile(text, match_windows=True).plan
    batch = read_batch(pa.Table.from_pylist(rows), EventFields("type", "timestamp", "id"), 0)
    pre = Prefilter(plan)
    keep = WindowFront(plan).keep(pre, batch, pre.accepts(batch, set(TYPES)), 5, fresh)
    return [r["id"] for r, k in zip(rows, keep.tolist(), strict=True) if k]


def _e(etype: str, time: int, ident: int, x: int = 1) -> dict[str, Any]:
    return {"type": etype, "timestamp": time, "id": ident, "x": x}


def test_only_the_events_of_candidate_windows_reach_the_engine() -> None:
    """A1 B2 have no C within 5 (too few events, Theorem 2's condition 4; the window at
    B2 fails condition 5); the window at A20 holds a B and a C in order; D100 is no
    state's. In partition x=2, A30's window has Cs but no B after it (a zero counter).
    A97's window stays open (a later batch may complete it); B96 can start no match."""
    rows = [
        _e("A", 1, 1),
        _e("B", 2, 2),
        _e("A", 20, 3),
        _e("B", 21, 4),
        _e("C", 22, 5),
        _e("A", 30, 6, x=2),
        _e("C", 31, 7, x=2),
        _e("C", 32, 11, x=2),
        _e("B", 31, 8),
        _e("D", 100, 9),
        _e("B", 96, 10),
        _e("A", 97, 12),
    ]
    rows.sort(key=lambda r: r["timestamp"])
    assert _kept(ABC, rows) == [3, 4, 5, 12]
    # not the stream's first batch: its first W may belong to windows begun before
    assert _kept(ABC, rows, fresh=False) == [1, 2, 3, 4, 5, 12]


def test_the_plan_records_the_option_and_explain_says_it() -> None:
    q = kleene.compile(ABC, match_windows=True)
    assert q.plan.match_windows and not kleene.compile(ABC).plan.match_windows
    assert "match windows:" in q.explain()
    rows = [_e("A", 1, 1), _e("B", 2, 2), _e("C", 3, 3), _e("A", 9, 4), _e("C", 30, 5)]
    assert [m.ids() for m in q.run(rows)] == [{"a": (1,), "b": (2,), "c": (3,)}]


@settings(max_examples=200, deadline=None)
@given(
    steps=st.lists(st.integers(0, 3), min_size=1, max_size=40),
    data=st.data(),
    m=st.integers(1, 4),
    tau=st.integers(0, 6),
    fresh=st.booleans(),
    partitioned=st.booleans(),
)
def test_the_column_wise_chains_keep_no_event_the_summary_statistics_drop(
    steps: list[int], data: Any, m: int, tau: int, fresh: bool, partitioned: bool
) -> None:
    """The front's column-wise test (earliest chains per partition) keeps no event the
    event-set matcher's windows with summary statistics drop, and keeps fewer at times:
    a window A B{B,C} D whose B and C come from one event, the counters' B having left
    with an earlier window, passes the counters but has no chain."""
    n = len(steps)
    times = np.cumsum(steps).astype(np.float64)
    bits = np.asarray(data.draw(st.lists(st.integers(0, 2**m - 1), min_size=n, max_size=n)))
    codes = None
    if partitioned:
        codes = np.asarray(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    pattern = SesPattern(tuple((SetVariable(f"v{i}", False, i),) for i in range(m)), (), tau)
    want = candidates(pattern, times, bits, codes, fresh)
    got = chained(m, tau, times, bits, codes, fresh)
    assert not (got & ~want).any()


def test_a_chain_needs_distinct_events_where_the_counters_do_not() -> None:
    """The case above, found by the test before it: v1 at 0 and 1, v2 at 0, v2|v3 at 1,
    v4 at 1 and 2, τ = 1; no chain starts at time 1 (its only v3 is its v2), so the
    event at 2 is left out; the counters keep it."""
    times = np.asarray([0, 0, 0, 1, 1, 1, 2, 3], dtype=np.float64)
    bits = np.asarray([0, 8, 4, 8, 1, 6, 1, 0])
    pattern = SesPattern(tuple((SetVariable(f"v{i}", False, i),) for i in range(4)), (), 1)
    assert candidates(pattern, times, bits, None, True).tolist()[6]
    assert chained(4, 1, times, bits, None, True).tolist() == [False] * 8


@pytest.mark.parametrize(
    ("text", "options", "why"),
    [
        ("PATTERN SEQ(A a, B b) WITHIN 5", {"strategy": "strict_contiguity"}, "adjacency"),
        ("PATTERN SEQ(A a, ~(C n), B b) WITHIN 5", {}, "negated"),
        ("PATTERN SEQ(A a, B b) WITHIN 5", {"output": "non_overlap"}, "earlier windows"),
        ("PATTERN SEQ(A a, B b)", {}, "WITHIN"),
        (
            "PATTERN SEQ(A a, SEQ(B b, C c)+) WHERE skip_till_any_match WITHIN 5",
            {},
            "SEQ(...)+",
        ),
        ("PATTERN SEQ(A a, B b) WITHIN 5", {"allowed_lateness": 2}, "allowed_lateness"),
        ("PATTERN SEQ(A a, B b) WITHIN 5", {"engine": "backtrack"}, "backtrack"),
    ],
)
def test_queries_outside_the_sound_case_are_refused(
    text: str, options: dict[str, Any], why: str
) -> None:
    with pytest.raises(QueryError, match="match_windows") as refused:
        kleene.compile(text, match_windows=True, **options)
    assert why in str(refused.value)


SOUND = [ast.Strategy.SKIP_TILL_NEXT_MATCH, ast.Strategy.SKIP_TILL_ANY_MATCH]


def _key(ids: dict[str, tuple[Any, ...]]) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    return tuple(sorted((k, tuple(v)) for k, v in ids.items()))


@pytest.mark.parametrize("strategy", SOUND, ids=lambda s: s.value)
@settings(max_examples=60, deadline=None)
@given(
    text=queries(),
    events=streams(types=("A", "B", "C", "D", "E"), max_events=24),
    cuts=st.lists(st.integers(0, 24), max_size=3),
)
def test_match_windows_change_no_match(
    text: str, events: list[dict[str, Any]], cuts: list[int], strategy: ast.Strategy
) -> None:
    """Random SEQ queries without negation, with a WITHIN: with match windows the
    matches (and their values) are those without them and the oracle's, whether the
    stream comes as one input or in Arrow pieces (windows across batch edges)."""
    assume("~" not in text and "WITHIN" in text)
    note(text)
    q = kleene.compile(text, strategy=strategy, match_windows=True)
    plain = kleene.compile(text, strategy=strategy)
    got = {_key(m.ids()): m.values() for m in q.run(events)}
    assert got == {_key(m.ids()): m.values() for m in plain.run(events)}
    want = oracle.evaluate(parse(text), events, strategy=strategy)
    assert set(got) == {_key(m.ids) for m in want}
    pieces = push_arrow_pieces(q.matcher(), events, sorted(cuts))
    assert sorted(_key(m.ids()) for m in pieces) == sorted(got)
