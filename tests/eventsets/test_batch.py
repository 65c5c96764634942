"""The column-wise pre-processing (kleene/eventsets/batch.py) against the per-event path
(Algorithm 1 as written, kleene/eventsets/twophase.py) and the oracle: the same match
windows with the same events, candidates exactly those meeting Theorem 2's conditions
4-7, every window holding a match among them, and the same matches."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.errors import KleeneError
from kleene.eventsets.automaton import AutomatonMatcher
from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.filtering import PropertyBits
from kleene.eventsets.jointree import JoinTreeMatcher
from kleene.eventsets.model import SesPattern
from kleene.eventsets.twophase import Flags, TwoPhase
from kleene.oracle.eventsets import evaluate
from tests.eventsets.chemo import Q1
from tests.eventsets.chemo import rows as chemo_rows
from tests.eventsets.ses_queries import ses_queries
from tests.eventsets.strategies import ses_rows

PRUNINGS = ("none", "f", "fp", "fpc", "c", "pc")
P1 = ses_pattern(Q1, time_unit="d")
CHEMO = chemo_rows()


class _Recording:
    """A (the join tree) recording the windows it is called on, as position tuples,
    and those where it found a match."""

    def __init__(self, pattern: SesPattern, output: str = "all") -> None:
        self.inner = JoinTreeMatcher(pattern, output=output)
        self.calls: list[tuple[int, ...]] = []
        self.matched: set[tuple[int, ...]] = set()

    def matches(self, rows: Sequence[Mapping[str, Any]], positions: Sequence[int]) -> Any:
        found = self.inner.matches(rows, positions)
        self.calls.append(tuple(positions))
        if found:
            self.matched.add(tuple(positions))
        return found

    def each(self, rows: Sequence[Mapping[str, Any]], positions: Sequence[int]) -> Any:
        return iter(self.matches(rows, positions))


def _run(
    query: str, pruning: str, rows: list[dict[str, Any]], columns: bool
) -> tuple[list[Any], _Recording, TwoPhase]:
    f = Flags.parse(pruning)
    strategy = TwoPhase(ses_pattern(query), _Recording, f.filtering, f.partitioning, f.conditions)
    found = strategy.run_columns(rows) if columns else strategy.run(rows)
    assert isinstance(strategy.algorithm, _Recording)
    return sorted(m.key() for m in found), strategy.algorithm, strategy


def _theorem_2(pattern: SesPattern, rows: list[dict[str, Any]], window: tuple[int, ...]) -> bool:
    """Conditions 4-7 of Theorem 2 on one window, straight from their statement."""
    bits = PropertyBits(pattern)
    variables = pattern.variables
    m = len(variables)

    def holds(i: int, e: int) -> bool:  # Θp_v(e) for the variable at index i
        return bool(bits.of(rows[e]) & bits.bits[i])

    if len(window) < m:  # 4
        return False
    if not any(holds(i, window[0]) for i, v in enumerate(variables) if v.set_index == 0):
        return False  # 5
    if not all(any(holds(i, e) for e in window) for i in range(m)):
        return False  # 6
    for i, vi in enumerate(variables):  # 7
        for j, vj in enumerate(variables):
            if vj.set_index == vi.set_index + 1 and not any(
                holds(i, a) and holds(j, b) and rows[a]["timestamp"] < rows[b]["timestamp"]
                for a in window
                for b in window
            ):
                return False
    return True


@settings(max_examples=20, deadline=None)
@given(ses_queries(), ses_rows(max_events=10), st.sampled_from(PRUNINGS))
def test_column_wise_windows_candidates_and_matches(
    query: str, rows: list[dict[str, Any]], pruning: str
) -> None:
    expected = sorted(m.key() for m in evaluate(query, rows))
    per_event, stream, _ = _run(query, pruning, rows, columns=False)
    columns, batch, _ = _run(query, pruning, rows, columns=True)
    assert per_event == columns == expected
    # the windows: without the conditions A sees every window, the same in both paths
    plain = pruning.replace("c", "") or "none"
    _, every, _ = _run(query, plain, rows, columns=False)
    _, every_columns, _ = _run(query, plain, rows, columns=True)
    assert sorted(every.calls) == sorted(every_columns.calls)
    assert len(set(every.calls)) == len(every.calls)  # one call per window
    # the candidates: exactly the windows meeting Theorem 2, which hold every match
    pattern = ses_pattern(query)
    if "c" in pruning:
        wanted = [w for w in every.calls if _theorem_2(pattern, rows, w)]
        assert sorted(batch.calls) == sorted(wanted)
    else:
        assert sorted(batch.calls) == sorted(every.calls)
    assert every.matched <= set(batch.calls) and every.matched <= set(stream.calls)


@settings(max_examples=12, deadline=None)
@given(ses_queries(), ses_rows(max_events=10, missing=True))
def test_query_run_equals_the_streaming_matcher(text: str, rows: list[dict[str, Any]]) -> None:
    """Query.run reads its input column-wise; pushing it event by event to a matcher
    gives the same matches and rejects the same events with the same reasons."""
    q = kleene.compile(text, output="earliest-maximal")
    result = q.run_detailed(rows)
    m = q.matcher()
    found = [match for row in rows for match in m.push([row])] + m.flush()
    key = lambda x: (x.first_position, x.last_position, sorted(x.positions.items()))  # noqa: E731
    assert sorted(map(key, result.matches)) == sorted(map(key, found))
    assert [(r.id, r.reason) for r in result.rejected] == [
        (r.id, r.reason) for r in m.take_rejected()
    ]


def _automaton(pattern: SesPattern) -> AutomatonMatcher:
    return AutomatonMatcher(pattern)


def test_empty_batch() -> None:
    strategy = TwoPhase(P1, _automaton)
    assert strategy.run_columns([]) == []
    assert strategy.counters.events == strategy.counters.calls == 0


def test_one_partition_and_tied_times() -> None:
    """Three events at one time in one partition: a match needs C strictly before B,
    so a window of ties is no candidate (condition 7); a later B makes one."""
    query = "PATTERN SEQ({C c}, {B b}) WHERE c.PID = b.PID WITHIN 5"
    tied = [
        {"type": "C", "timestamp": 1, "PID": 1, "id": 0},
        {"type": "B", "timestamp": 1, "PID": 1, "id": 1},
        {"type": "C", "timestamp": 1, "PID": 1, "id": 2},
    ]
    later = [*tied, {"type": "B", "timestamp": 2, "PID": 1, "id": 3}]
    for rows, matches in (
        (tied, []),
        (later, [((("b", (3,)), ("c", (0,)))), (("b", (3,)), ("c", (2,)))]),
    ):
        found, batch, strategy = _run(query, "fpc", rows, columns=True)
        assert found == sorted(matches) == sorted(m.key() for m in evaluate(query, rows))
        assert strategy.counters.windows == 1
    assert batch.calls == [(0, 1, 2, 3), (2, 3)]


def test_condition_6_per_window_and_variable() -> None:
    """Condition 6 over several windows at once: [A, B, C] holds every variable; [A, B,
    B] is long enough and starts with a variable's event but has no C; the windows
    starting later are too short (condition 4). One call, on the first window."""
    query = "PATTERN SEQ({A a, B b, C c}) WITHIN 5"
    rows = [
        {"type": t, "timestamp": time, "id": i}
        for i, (t, time) in enumerate(
            [("A", 0), ("B", 1), ("C", 2), ("A", 10), ("B", 11), ("B", 12)]
        )
    ]
    _, batch, _ = _run(query, "fc", rows, columns=True)
    assert batch.calls == [(0, 1, 2)]
    _, plain, _ = _run(query, "f", rows, columns=True)
    assert sorted(plain.calls) == [(0, 1, 2), (1, 2), (2,), (3, 4, 5), (4, 5), (5,)]


def test_out_of_order_events_are_refused_alike() -> None:
    rows = [{"type": "C", "timestamp": 2, "PID": 1}, {"type": "B", "timestamp": 1, "PID": 1}]
    pattern = ses_pattern("PATTERN SEQ({C c}, {B b}) WITHIN 5")
    for run in (TwoPhase(pattern, _automaton).run, TwoPhase(pattern, _automaton).run_columns):
        with pytest.raises(KleeneError, match="event 1 at 1 is earlier"):
            run(rows)


def test_times_that_are_not_numbers_are_read_event_by_event() -> None:
    """Times numpy cannot hold as numbers (here Python ints beyond 64 bits) take the
    per-event path, with the same matches."""
    big = 2**70
    rows = [
        {"type": "C", "timestamp": big, "PID": 1},
        {"type": "B", "timestamp": big + 3, "PID": 1},
    ]
    pattern = ses_pattern("PATTERN SEQ({C c}, {B b}) WITHIN 5")
    found = TwoPhase(pattern, _automaton).run_columns(rows)
    assert [m.key() for m in found] == [(("b", (1,)), ("c", (0,)))]


def test_chemo_calls_with_fpc() -> None:
    """Figure 1's stream: the column-wise path calls A on the windows the per-event path
    does (patient 1's from e1, patient 2's from e5 and e7: test_twophase_chemo), found
    by Theorem 2, and finds the 11 matches."""
    strategies = [TwoPhase(P1, _Recording) for _ in range(2)]
    found = strategies[0].run_columns(CHEMO)
    strategies[1].run(CHEMO)
    calls = [s.algorithm.calls for s in strategies if isinstance(s.algorithm, _Recording)]
    assert (
        sorted(calls[0])
        == sorted(calls[1])
        == [(0, 1, 2, 8, 10), (4, 6, 7, 9, 11, 12), (6, 7, 9, 11, 12)]
    )
    assert len(found) == 11


@settings(max_examples=25, deadline=None)
@given(
    ses_queries(),
    st.lists(
        st.fixed_dictionaries(
            {"type": st.sampled_from(("A", "B", "D")), "timestamp": st.just(0)},
            optional={
                "x": st.sampled_from((0, 1, 2, True, False, 1.0, -0.0, float("nan"), "1", None)),
                "y": st.integers(0, 2),
            },
        ),
        max_size=8,
    ),
)
def test_bit_vectors_of_a_batch_equal_each_events(query: str, rows: list[dict[str, Any]]) -> None:
    """Evaluated once per distinct value (1 and True apart), the properties give each
    event the bit vector the generated per-event code gives it."""
    bits = PropertyBits(ses_pattern(query))
    assert bits.array(rows).tolist() == [bits.of(row) for row in rows]


def test_equal_values_of_other_kinds_stay_apart() -> None:
    """1, 1.0 and True are equal Python values: evaluated once per distinct value, they
    must still get what each gets alone (booleans do not order, so True < 2 fails)."""
    for condition in ("a.x = 1", "a.x < 2"):
        bits = PropertyBits(ses_pattern(f"PATTERN SEQ({{A a}}) WHERE {condition} WITHIN 1"))
        for values in ([1, True], [True, 1], [1.0, 1], [True, 1.0, -0.0, 0.0]):
            rows = [{"type": "A", "timestamp": 0, "x": v} for v in values]
            assert bits.array(rows).tolist() == [bits.of(row) for row in rows], values


def test_drain_after_pushes_reads_on_event_by_event() -> None:
    """With windows open, drain continues Algorithm 1 (the windows hold earlier events)."""
    strategy = TwoPhase(P1, _automaton)
    head = [f for p in range(5) for f in strategy.push(p, CHEMO[p])]
    tail = list(strategy.drain(range(5, len(CHEMO)), CHEMO[5:]))
    whole = TwoPhase(P1, _automaton).run_columns(CHEMO)
    assert sorted(f.match.key() for f in head + tail) == sorted(m.key() for m in whole)
    assert len(whole) == 11
