"""The synthetic situation streams of TPStream, section 6.1: shape, determinism, the
10-100 s situations with 10-50 s gaps, and the shifting occurrence ratios of 6.4.2."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from kleene.datagen.situations import generate

PHASES = [(1, 1, 1), (1, 50, 50), (50, 1, 50)]


def runs(values: np.ndarray) -> list[tuple[bool, int, int]]:
    """The maximal runs of equal values: (value, first index, length)."""
    change = np.flatnonzero(values[1:] != values[:-1]) + 1
    starts = np.r_[0, change]
    lengths = np.diff(np.r_[starts, values.size])
    return [(bool(values[s]), int(s), int(n)) for s, n in zip(starts, lengths, strict=True)]


def column(table: pa.Table, name: str) -> np.ndarray:
    return table.column(name).to_numpy(zero_copy_only=False)


def test_one_event_per_time_unit_with_boolean_attributes() -> None:
    table = generate(500, seed=3)
    assert table.column_names == ["id", "type", "timestamp", "A", "B", "C"]
    assert table.column("timestamp").to_pylist() == list(range(500))
    assert table.column("id").to_pylist() == list(range(500))
    assert set(table.column("type").to_pylist()) == {"Synthetic"}
    for name in "ABC":
        assert pa.types.is_boolean(table.schema.field(name).type)


def test_names_and_number_of_attributes() -> None:
    assert generate(100, attributes=5).column_names[3:] == ["A", "B", "C", "D", "E"]
    named = generate(100, names=["speeding", "braking"], seed=1)
    assert named.column_names[3:] == ["speeding", "braking"]
    assert generate(100, attributes=2, names=["x", "y"]).column_names[3:] == ["x", "y"]


def test_same_seed_same_table_and_different_seed_different_table() -> None:
    assert generate(5000, seed=7).equals(generate(5000, seed=7))
    assert not generate(5000, seed=7).equals(generate(5000, seed=8))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_situations_last_10_to_100_and_gaps_10_to_50(seed: int) -> None:
    n = 50_000
    table = generate(n, attributes=4, seed=seed)
    holds: list[int] = []
    gaps: list[int] = []
    for name in "ABCD":
        found = runs(column(table, name))
        assert not found[0][0], "the stream opens with a gap"
        for value, start, length in found:
            if start + length == n:
                continue  # cut off by the end of the stream
            (holds if value else gaps).append(length)
    assert min(holds) >= 10 and max(holds) <= 100
    assert min(gaps) >= 10 and max(gaps) <= 50
    # uniform draws: the means of U[10, 100] and U[10, 50], and both ends are reached
    assert abs(np.mean(holds) - 55) < 3 and abs(np.mean(gaps) - 30) < 2
    assert min(holds) <= 12 and max(holds) >= 98 and min(gaps) <= 11 and max(gaps) >= 49


def test_attributes_are_independent_streams() -> None:
    table = generate(20_000, seed=4)
    a, b = column(table, "A"), column(table, "B")
    assert not np.array_equal(a, b)
    # each holds about 55 / 85 of the time, and together about that squared
    assert abs(np.mean(a & b) - np.mean(a) * np.mean(b)) < 0.05


def test_phases_shift_the_occurrence_ratio_and_keep_the_durations() -> None:
    n = 3 * 60_000
    table = generate(n, ratios=PHASES, seed=5)
    counts = np.zeros((3, 3))
    for j, name in enumerate("ABC"):
        for value, start, length in runs(column(table, name)):
            if value:
                counts[start * 3 // n, j] += 1
                assert 10 <= length <= 100 or start + length == n
            elif start > 0 and start + length < n:
                assert length >= 10
    full = 60_000 / 85  # situations a phase holds at weight 1
    assert np.all(np.abs(counts[0] - full) < 0.15 * full)
    for phase, weights in enumerate(PHASES):
        for j, weight in enumerate(weights):
            expected = full * weight / max(weights)
            assert abs(counts[phase, j] - expected) < 0.15 * expected + 8


def test_one_phase_of_ratios_thins_the_rarer_attributes() -> None:
    table = generate(100_000, ratios=[(1, 4)], names=["rare", "often"], seed=6)
    starts = {
        name: sum(value for value, _, _ in runs(column(table, name))) for name in ("rare", "often")
    }
    assert 3 < starts["often"] / starts["rare"] < 5


def test_an_attribute_may_hold_for_a_range_of_its_own() -> None:
    # section 6.3.1: B's mean duration half or twice A's 55 s
    table = generate(60_000, names=["A", "B"], holds={"B": (5, 50)}, gap=(20, 30), seed=8)
    for name, (low, high) in (("A", (10, 100)), ("B", (5, 50))):
        found = runs(column(table, name))
        holds = [n for value, start, n in found if value and start + n < 60_000]
        gaps = [n for value, start, n in found if not value and start > 0 and start + n < 60_000]
        assert low <= min(holds) <= low + 2 and high - 2 <= max(holds) <= high
        assert abs(np.mean(holds) - (low + high) / 2) < 0.05 * high
        assert min(gaps) >= 20 and max(gaps) <= 30


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"duration": -1}, "duration must be >= 0"),
        ({"attributes": 27}, "beyond 26 need explicit names"),
        ({"attributes": 2, "names": ["x"]}, "2 attributes but 1 names"),
        ({"names": ["x", "x"]}, "must differ"),
        ({"names": ["timestamp"]}, "other than id, type and timestamp"),
        ({"ratios": [(1, 2)]}, "one weight per attribute (3)"),
        ({"ratios": [(1, 0, 1)]}, "weight must be > 0"),
        ({"ratios": [(1, float("inf"), 1)]}, "must be finite"),
        ({"hold": (20, 10)}, "situation duration range"),
        ({"holds": {"D": (1, 2)}}, "for 'D', which is not an attribute (A, B, C)"),
        ({"holds": {"B": (0, 2)}}, "B's situation duration range must satisfy 1 <= low"),
        ({"gap": (0, 5)}, "gap range must satisfy 1 <= low"),
    ],
)
def test_bad_parameters_are_refused_naming_the_knob(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        generate(**{"duration": 100, **kwargs})
