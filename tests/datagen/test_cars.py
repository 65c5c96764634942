"""Linear-Road-like car reports (TPStream, section 6.1): shape, determinism, the
expressway's layout, speed and acceleration that agree, and aggressive-driver episodes
that the query of Listing 1 finds, computed here directly from the raw reports."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pytest

from kleene.datagen.cars import COLUMNS, MPH_PER_MPS, generate

Interval = tuple[int, int]


@pytest.fixture(scope="module")
def aggressive_table() -> pa.Table:
    return generate(200, duration=1800, seed=3, aggressive=0.25)


def per_car(table: pa.Table) -> dict[int, dict[str, np.ndarray]]:
    car = table.column("car_id").to_numpy()
    order = np.argsort(car, kind="stable")  # the table is in time order
    cut = np.flatnonzero(np.diff(car[order])) + 1
    out = {}
    for rows in np.split(order, cut):
        out[int(car[rows[0]])] = {
            name: table.column(name).to_numpy()[rows]
            for name in ("timestamp", "lane", "segment", "x", "direction", "speed", "accel")
        }
    return out


def situations(time: np.ndarray, holds: np.ndarray, low: int, high: float) -> list[Interval]:
    """Definition 7 directly: the maximal runs of reports satisfying the predicate that an
    unsatisfying report precedes and ends, [first time, time of the ending report), with
    a duration in [low, high]."""
    found = []
    start = None  # of the run going on, when an unsatisfying report preceded it
    for i in range(1, len(time)):
        if holds[i] and not holds[i - 1]:
            start = int(time[i])
        elif not holds[i] and holds[i - 1] and start is not None:
            if low <= time[i] - start <= high:
                found.append((start, int(time[i])))
            start = None
    return found


# Allen's relations of Table 1 on half-open intervals, as Listing 1 uses them
def meets(a: Interval, b: Interval) -> bool:
    return a[1] == b[0]


def overlaps(a: Interval, b: Interval) -> bool:
    return a[0] < b[0] < a[1] < b[1]


def starts(a: Interval, b: Interval) -> bool:
    return a[0] == b[0] and a[1] < b[1]


def during(a: Interval, b: Interval) -> bool:
    return b[0] < a[0] and a[1] < b[1]


def finishes(a: Interval, b: Interval) -> bool:
    return a[0] > b[0] and a[1] == b[1]


def before(a: Interval, b: Interval) -> bool:
    return a[1] < b[0]


def any_of(*relations: Callable[[Interval, Interval], bool]) -> Callable[..., bool]:
    return lambda a, b: any(r(a, b) for r in relations)


def aggressive_drivers(table: pa.Table) -> list[tuple[int, Interval, Interval, Interval]]:
    """Listing 1 over the raw reports: per car, A (accel > 8 for at least 5 s), B (speed
    > 70 mph for 4-30 s) and C (accel < -9 for at least 3 s) with A meets/overlaps/starts/
    during B, C during B or B finishes/overlaps/meets C, A before C, within 5 minutes."""
    a_b = any_of(meets, overlaps, starts, during)
    matches = []
    for car, r in per_car(table).items():
        sa = situations(r["timestamp"], r["accel"] > 8, 5, np.inf)
        sb = situations(r["timestamp"], r["speed"] > 70, 4, 30)
        sc = situations(r["timestamp"], r["accel"] < -9, 3, np.inf)
        for a in sa:
            for b in sb:
                for c in sc:
                    b_c = during(c, b) or finishes(b, c) or overlaps(b, c) or meets(b, c)
                    span = max(a[1], b[1], c[1]) - min(a[0], b[0], c[0])
                    if a_b(a, b) and b_c and before(a, c) and span <= 300:
                        matches.append((car, a, b, c))
    return matches


def test_columns_and_types() -> None:
    table = generate(20, duration=300, seed=1)
    assert table.column_names == list(COLUMNS)
    assert set(table.column("type").to_pylist()) == {"CarSensors"}
    assert table.column("id").to_pylist() == list(range(table.num_rows))
    for name in COLUMNS[2:8]:
        assert pa.types.is_integer(table.schema.field(name).type)
    for name in ("speed", "accel"):
        assert pa.types.is_floating(table.schema.field(name).type)


def test_same_seed_same_table_and_different_seed_different_table() -> None:
    assert generate(30, duration=400, seed=2).equals(generate(30, duration=400, seed=2))
    assert not generate(30, duration=400, seed=2).equals(generate(30, duration=400, seed=5))


def test_every_car_reports_every_second_in_time_order(aggressive_table: pa.Table) -> None:
    time = aggressive_table.column("timestamp").to_numpy()
    car = aggressive_table.column("car_id").to_numpy()
    assert np.all((np.diff(time) > 0) | ((np.diff(time) == 0) & (np.diff(car) > 0)))
    assert time.min() >= 0 and time.max() < 1800
    cars = per_car(aggressive_table)
    assert set(cars) <= set(range(1, 201)) and len(cars) > 190
    entered = [cars[c]["timestamp"][0] for c in sorted(cars)]
    assert entered == sorted(entered)  # ids in the order cars enter
    for r in cars.values():
        assert np.all(np.diff(r["timestamp"]) == 1)


def test_positions_follow_the_expressway(aggressive_table: pa.Table) -> None:
    for r in per_car(aggressive_table).values():
        assert np.all((r["x"] >= 0) & (r["x"] < 528_000))
        assert np.array_equal(r["segment"], r["x"] // 5280)
        assert np.all((r["lane"] >= 0) & (r["lane"] <= 4))
        assert r["lane"][0] == 0 and len(set(r["direction"].tolist())) == 1
        moved = np.diff(r["x"]) * (1 if r["direction"][0] == 0 else -1)
        assert np.all(moved >= -1)  # cars drive forwards (x is rounded to feet)
        # feet per second agree with the mean speed over the second
        expected = (r["speed"][1:] + r["speed"][:-1]) / 2 * 5280 / 3600
        inside = (r["x"][1:] > 0) & (r["x"][1:] < 527_999)
        assert np.all(np.abs(moved - expected)[inside] <= 1.5)


def test_acceleration_is_the_change_of_speed(aggressive_table: pa.Table) -> None:
    for r in per_car(aggressive_table).values():
        assert r["accel"][0] == 0
        change = np.diff(r["speed"]) / MPH_PER_MPS
        # both are rounded: speed to 0.1 mph, accel to 0.01 m/s²
        assert np.all(np.abs(change - r["accel"][1:]) <= 0.1 / MPH_PER_MPS + 0.01)
        assert np.all((r["speed"] >= 0) & (r["speed"] <= 160))


def test_listing_1_finds_aggressive_drivers_at_a_low_rate(aggressive_table: pa.Table) -> None:
    matches = aggressive_drivers(aggressive_table)
    assert matches
    # few of the reports, and only from some of the cars
    assert len(matches) < aggressive_table.num_rows / 5_000
    assert len({car for car, *_ in matches}) < 0.25 * 200


def test_no_aggressive_drivers_no_matches() -> None:
    table = generate(200, duration=1800, seed=3, aggressive=0.0)
    accel = table.column("accel").to_numpy()
    assert accel.max() < 8 and accel.min() > -9
    assert (table.column("speed").to_numpy() > 70).any()  # normal drivers still speed
    assert aggressive_drivers(table) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cars": -1}, "cars must be >= 0"),
        ({"duration": 0}, "duration (s) must be >= 1"),
        ({"aggressive": 1.5}, "aggressive share must be a probability"),
        ({"episodes": -1}, "episodes per hour must be >= 0"),
    ],
)
def test_bad_parameters_are_refused_naming_the_knob(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        generate(**{"cars": 3, **kwargs})  # type: ignore[arg-type]


def test_no_cars() -> None:
    assert generate(0, duration=10).num_rows == 0


def test_progress_reports_every_simulated_second_once() -> None:
    seen: list[int] = []
    table = generate(10, duration=150, seed=1, progress=seen.append)
    assert sum(seen) == 150 and len(seen) == 3  # every 60 simulated seconds, then the rest
    assert table.equals(generate(10, duration=150, seed=1))
