"""The two-phase strategy on the worked example of the match-windows paper: the Chemo
events of Figure 1 and P1 (Example 2). Figure 5's summary statistics step by step,
Example 13's bit vectors, filtering (Example 8), partitioning (Example 12) and the
lazy calls of the matching algorithm.

The matches are the eleven Definition 2 admits (the paper's list of Example 4 and the
three it omits, as tests/eventsets/test_chemo_oracle.py reads them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest

from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.filtering import PropertyBits, bit_string
from kleene.eventsets.jointree import JoinTreeMatcher
from kleene.eventsets.model import SesMatch, SesPattern
from kleene.eventsets.partitioning import partition_attributes, without_partitioning
from kleene.eventsets.summary import SummaryStatistics
from kleene.eventsets.twophase import Flags, TwoPhase
from kleene.eventsets.windows import MatchWindow
from kleene.oracle.eventsets import evaluate
from tests.eventsets.chemo import Q1, rows

P1 = ses_pattern(Q1, time_unit="d")
CHEMO = rows()


def e(n: int) -> int:
    """The position of event e_n."""
    return n - 1


#: Definition 2's eleven matches (tests/eventsets/test_chemo_oracle.py lists them)
MATCHES = {m.key() for m in evaluate(Q1, CHEMO, time_unit="d")}


def test_example_13_bit_vectors() -> None:
    bits = PropertyBits(P1)
    assert [bit_string(bits.of(CHEMO[e(n)]), 3) for n in (1, 2, 3)] == ["100", "001", "010"]
    summary = SummaryStatistics(P1)
    assert [bit_string(mask, 3) for mask in summary.masks] == ["000", "110"]  # b̄1, b̄2
    assert summary.vector() == "111"
    for n in (1, 2, 3):
        summary.add(bits.of(CHEMO[e(n)]))
    assert summary.vector() == "001"


def test_figure_5_step_by_step() -> None:
    """Patient 1's window: each row of Figure 5 (W, S and conditions 4-7)."""
    bits = PropertyBits(P1)
    window = MatchWindow(P1, statistics=True)
    rows = []

    def row() -> tuple[Any, ...]:
        assert window.summary is not None
        c4, c5, c67 = window.conditions()
        names = tuple(entry.position + 1 for entry in window.entries)
        return names, window.summary.pairs(), c4, c5, c67

    for n in (1, 2, 3, 9, 11):
        event = CHEMO[e(n)]
        window.enqueue(e(n), event, event["timestamp"], bits.of(event))
        rows.append(row())
    assert window.complete(CHEMO[e(14)]["timestamp"], P1.window)  # 22 Jul - 3 Jul > 15 d
    window.dequeue()
    rows.append(row())
    # the statistics decide conditions 6 and 7 together (Theorem 3): the figure's F for
    # condition 6 over ⟨e1, e2, e3⟩ is cnt_b = 0 (e2 precedes every Prednisone event)
    assert rows == [
        ((1,), (("c", 1), ("p", 0), ("b", 0)), False, True, False),
        ((1, 2), (("c", 1), ("p", 0), ("b", 0)), False, True, False),
        ((1, 2, 3), (("c", 1), ("p", 1), ("b", 0)), True, True, False),
        ((1, 2, 3, 9), (("c", 1), ("p", 2), ("b", 0)), True, True, False),
        ((1, 2, 3, 9, 11), (("c", 1), ("p", 2), ("b", 1)), True, True, True),
        ((2, 3, 9, 11), (("c", 0), ("p", 2), ("b", 0)), True, False, False),
    ]


def test_example_8_filtering_drops_only_e6() -> None:
    bits = PropertyBits(P1)
    assert [n for n in range(1, 15) if not bits.of(CHEMO[e(n)])] == [6]
    assert bits.of_batch(CHEMO) == [bits.of(event) for event in CHEMO]


def test_example_12_partitioning_attributes() -> None:
    assert partition_attributes(P1) == ("PID",)
    reduced = without_partitioning(P1, ("PID",))
    assert not [c for c in reduced.constraints if c.is_equality_relationship]
    assert len(reduced.constraints) == len(P1.constraints) - 2


class _Recording:
    """A wraps the join tree and records the windows it is called on."""

    calls: list[list[int]]

    def __init__(self, pattern: SesPattern) -> None:
        self.inner = JoinTreeMatcher(pattern)
        self.calls = []

    def each(
        self, events: Sequence[Mapping[str, Any]], positions: Sequence[int]
    ) -> Iterator[SesMatch]:
        self.calls.append([p + 1 for p in positions])
        return self.inner.each(events, positions)


def test_lazy_calls_with_fpc() -> None:
    """A runs on three windows only: patient 1's at e14 (Figure 5), and patient 2's
    from e5 and from e7 at the end of the stream (e4 is a blood count: condition 5;
    after e7 leaves no Ciclofosfamide remains)."""
    strategy = TwoPhase(P1, _Recording)
    strategy.run(CHEMO)
    assert isinstance(strategy.algorithm, _Recording)
    assert strategy.algorithm.calls == [
        [1, 2, 3, 9, 11],
        [5, 7, 8, 10, 12, 13],
        [7, 8, 10, 12, 13],
    ]


@pytest.mark.parametrize("flags", ["none", "f", "fp", "fpc", "c", "pc"])
def test_chemo_matches_under_every_pruning(flags: str) -> None:
    f = Flags.parse(flags)
    strategy = TwoPhase(P1, JoinTreeMatcher, f.filtering, f.partitioning, f.conditions)
    found = [m.key() for m in strategy.run(CHEMO)]
    assert len(found) == len(set(found))
    assert set(found) == MATCHES
    assert len(found) == 11


def test_pruning_reduces_the_work() -> None:
    """Filtering keeps 13 of 14 events; partitioning shrinks the windows; the
    conditions leave three calls of A (fewer than the 13 windows of f)."""
    counts = {}
    for flags in ("none", "f", "fp", "fpc"):
        f = Flags.parse(flags)
        strategy = TwoPhase(P1, JoinTreeMatcher, f.filtering, f.partitioning, f.conditions)
        strategy.run(CHEMO)
        counts[flags] = strategy.counters
    assert (counts["none"].kept, counts["f"].kept) == (14, 13)
    assert (counts["none"].calls, counts["f"].calls, counts["fpc"].calls) == (14, 13, 3)
    assert counts["fp"].events_to_a < counts["f"].events_to_a < counts["none"].events_to_a
