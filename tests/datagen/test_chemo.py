"""Chemotherapy events with the schema of the match-window paper's Figure 1: shape,
determinism, ordering, value ranges, treatment cycles shifted per patient, and that the
paper's query Q1 finds matches in them."""

from __future__ import annotations

import itertools
import re
from collections import defaultdict
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from kleene.datagen.chemo import COLUMNS, DAY, UNITS, generate

Row = dict[str, Any]


def by_patient(table: pa.Table) -> dict[int, list[Row]]:
    out: dict[int, list[Row]] = defaultdict(list)
    for row in table.to_pylist():
        out[row["PID"]].append(row)
    return out


def days_of(rows: list[Row], label: str) -> list[int]:
    return [row["timestamp"] // DAY for row in rows if row["L"] == label]


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return generate(60, days=365, seed=1)


def test_schema_of_figure_1(table: pa.Table) -> None:
    assert table.column_names == list(COLUMNS)
    assert table.column("id").to_pylist() == list(range(table.num_rows))
    assert table.column("type").equals(table.column("L"))
    assert set(table.column("L").to_pylist()) == set(UNITS)
    for row in table.to_pylist()[:500]:
        assert row["U"] == UNITS[row["L"]]
    for name in ("id", "timestamp", "PID"):
        assert pa.types.is_integer(table.schema.field(name).type)
    assert pa.types.is_floating(table.schema.field("V").type)
    assert set(table.column("PID").to_pylist()) <= set(range(1, 61))


def test_same_seed_same_table_and_different_seed_different_table() -> None:
    assert generate(10, seed=3).equals(generate(10, seed=3))
    assert not generate(10, seed=3).equals(generate(10, seed=4))


def test_totally_ordered_by_time_within_the_days(table: pa.Table) -> None:
    time = table.column("timestamp").to_numpy()
    assert np.all(np.diff(time) > 0)
    assert time.min() >= 0 and time.max() < 365 * DAY
    assert len(generate(100, days=30, seed=2).column("timestamp")) > 0


def test_values_in_the_ranges_of_the_protocol(table: pa.Table) -> None:
    values: dict[str, list[float]] = defaultdict(list)
    for row in table.to_pylist():
        values[row["L"]].append(row["V"])
    # doses per m² times a body surface of 1.5-2.2 m², within 3%
    for label, per_m2 in (("C", 750), ("D", 50), ("R", 375)):
        assert 1.5 * per_m2 * 0.97 - 0.5 <= min(values[label])
        assert max(values[label]) <= 2.2 * per_m2 * 1.03 + 0.5
    assert min(values["P"]) >= 100 * 0.85 * 0.8 - 0.5 and max(values["P"]) <= 100 * 1.15 * 1.2 + 0.5
    for label in ("C", "D", "R", "P"):
        assert all(v * 2 == round(v * 2) for v in values[label])  # to 0.5 mg
    assert min(values["B"]) >= 900 and max(values["B"]) <= 9_700
    assert all(v % 100 == 0 for v in values["B"])
    assert min(values["H"]) >= 2.5 and max(values["H"]) <= 5.6


def test_each_patient_follows_cycles_shifted_in_time(table: pa.Table) -> None:
    patients = by_patient(table)
    first_days = set()
    for rows in patients.values():
        times = [row["timestamp"] for row in rows]
        assert times == sorted(times)
        cycle_starts = days_of(rows, "C")
        assert days_of(rows, "D") == cycle_starts == days_of(rows, "R")
        gaps = set(np.diff(cycle_starts).tolist())
        assert len(gaps) <= 1 and gaps <= {14, 21}
        # Prednisone on days 1-5 of each cycle (the last cycle may be cut off)
        pred = set(days_of(rows, "P"))
        for start in cycle_starts[:-1]:
            assert {start + d for d in range(5)} <= pred
        # day 1: the blood is counted before the drugs
        for start in cycle_starts:
            day = [row for row in rows if row["timestamp"] // DAY == start]
            labels = [row["L"] for row in day]
            assert labels[:2] == ["B", "H"] and labels.count("B") == 1
        first_days.add(cycle_starts[0] if cycle_starts else min(times) // DAY)
    # treatments start on different days, spread over the year
    assert len(first_days) > len(patients) * 0.7
    assert max(first_days) - min(first_days) > 200


def test_white_counts_dip_between_cycles(table: pa.Table) -> None:
    before, between = [], []
    for rows in by_patient(table).values():
        starts = set(days_of(rows, "C"))
        for row in rows:
            if row["L"] == "B":
                (before if row["timestamp"] // DAY in starts else between).append(row["V"])
    assert np.mean(between) < 0.8 * np.mean(before)


def q1_matches(rows: list[Row], within: int = 15 * DAY) -> int:
    """Query Q1 of the paper, directly: one C and two or more P of increasing dose (in
    any order), then one B, all within 15 days. Counts the B events that end a match
    with two consecutive P events of increasing dose."""
    found = 0
    for b in (r for r in rows if r["L"] == "B"):
        early = [r for r in rows if b["timestamp"] - within <= r["timestamp"] < b["timestamp"]]
        ps = [r["V"] for r in early if r["L"] == "P"]
        rising = any(p < q for p, q in itertools.pairwise(ps))
        if rising and any(r["L"] == "C" for r in early):
            found += 1
    return found


def test_the_papers_query_q1_has_matches_for_most_patients(table: pa.Table) -> None:
    patients = by_patient(table)
    matched = sum(q1_matches(rows) > 0 for rows in patients.values())
    assert matched > 0.7 * len(patients)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"patients": -1}, "patients must be >= 0"), ({"days": 0}, "days must be >= 1")],
)
def test_bad_parameters_are_refused_naming_the_knob(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        generate(**{"patients": 3, **kwargs})


def test_no_patients() -> None:
    assert generate(0).num_rows == 0
