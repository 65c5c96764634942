"""Car sensor data on an expressway, like the Linear Road data of TPStream (EDBT 2018),
section 6.1, for the aggressive-driver query of Listing 1.

The expressway follows Linear Road's layout: 100 segments of one mile (5,280 ft), a
position ``x`` in feet from 0 to 527,999, two directions (``direction`` 0 eastbound with
``x`` growing, 1 westbound), lane 0 the entrance ramp, lanes 1-3 the travel lanes and
lane 4 the exit ramp. ``cars`` cars enter at uniformly drawn times of the first
``duration`` seconds, at a uniformly drawn segment, and drive 5-40 miles (or to the end of
the expressway); car ids grow with the time a car enters. While on the expressway a car
reports every second: ``timestamp`` (s), ``car_id``, ``direction``, ``lane``,
``segment``, ``x``, ``speed`` (mph, to 0.1) and ``accel`` (m/s², to 0.01: the change of
speed since the car's previous report, 0 at its first).

Drivers differ in temperament. Every driver steers towards a target speed of their own
that drifts with traffic (a mean-reverting walk of a few mph), with bounded acceleration:

* calm drivers (half of the others): target 50-60 mph, acceleration within -3.5..3 m/s²;
* normal drivers: target 58-68 mph, within -4.5..4 m/s², so they sometimes speed
  (above 70 mph) but never accelerate or brake hard;
* aggressive drivers (a share ``aggressive`` of all cars): target 62-76 mph, within
  -5..6 m/s², and, on average ``episodes`` times an hour, an *episode*: slow down to
  5-25 mph, then a sharp acceleration of 7.6-9.5 m/s² for 4-6 s, cruise 1-40 s, then
  brake at -8.5..-11 m/s² for 2-5 s.

Only some episodes satisfy Listing 1 (accel > 8 for at least 5 s, then speed > 70 mph for
4-30 s, braking below -9 for at least 3 s): a burst that is too short or too soft, a
cruise long enough for the speeding to exceed 30 s or a soft brake break it, so
aggressive-driver matches come at a low rate set by ``aggressive`` and ``episodes``, and
none at all without aggressive drivers. The simulation advances second by second over
the cars on the road, vectorized with numpy.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kleene.datagen._checks import at_least, probability

EVENT_TYPE = "CarSensors"
COLUMNS = (
    "id",
    "type",
    "timestamp",
    "car_id",
    "direction",
    "lane",
    "segment",
    "x",
    "speed",
    "accel",
)
MPH_PER_MPS = 3600 / 1609.344  # one m/s in mph
FEET_PER_MILE = 5280
SEGMENTS = 100
MAX_SPEED = 160.0  # mph
RAMP_SECONDS = 5  # reports on the entrance ramp
EXIT_FEET = 528  # the last tenth of a mile is on the exit ramp
PROGRESS_EVERY = 60  # simulated seconds between calls of a progress callback

# per temperament (calm, normal, aggressive): target speed range, accel bounds (m/s²)
TARGET = ((50.0, 60.0), (58.0, 68.0), (62.0, 76.0))
BOUNDS = ((-3.5, 3.0), (-4.5, 4.0), (-5.0, 6.0))
AGGRESSIVE = 2

# episode phases of an aggressive driver
NONE, SLOW, BURST, CRUISE, BRAKE = range(5)


@dataclass(frozen=True)
class CarParams:
    """The knobs of the car data."""

    cars: int = 1000
    duration: int = 3600
    seed: int = 0
    aggressive: float = 0.05
    episodes: float = 6.0

    def validate(self) -> None:
        """Raise ValueError when a parameter is out of its domain."""
        at_least("cars", self.cars, 0)
        at_least("duration (s)", self.duration, 1)
        probability("aggressive share", self.aggressive)
        at_least("episodes per hour", self.episodes, 0)
        if self.episodes > 3600:
            raise ValueError(f"episodes per hour must be <= 3600, got {self.episodes}")


def generate(
    cars: int = 1000,
    *,
    duration: int = 3600,
    seed: int = 0,
    aggressive: float = 0.05,
    episodes: float = 6.0,
    progress: Callable[[int], None] | None = None,
) -> pa.Table:
    """Generate the reports of ``cars`` cars over ``duration`` seconds as a table with
    columns ``id, type, timestamp, car_id, direction, lane, segment, x, speed, accel``,
    sorted by time, then car. ``aggressive`` is the share of aggressive drivers and
    ``episodes`` how often (per hour on the road) one drives aggressively. ``progress``,
    when given, is called now and then with the seconds simulated since its last call.
    The same parameters and seed always give the same table."""
    return generate_table(CarParams(cars, duration, seed, aggressive, episodes), progress)


@dataclass
class _Road:
    """The state of every car (parallel arrays indexed by car, in order of entry)."""

    enter: np.ndarray  # second the car enters
    temperament: np.ndarray
    direction: np.ndarray
    x: np.ndarray  # feet
    left: np.ndarray  # feet still to drive
    speed: np.ndarray  # mph
    base: np.ndarray  # target speed without the drift
    drift: np.ndarray
    lane: np.ndarray
    seen: np.ndarray  # reports so far
    done: np.ndarray
    phase: np.ndarray  # episode phase
    count: np.ndarray  # seconds left in the phase
    slow_to: np.ndarray  # episode: speed to slow to, burst, cruise and brake plan
    burst: np.ndarray
    cruise: np.ndarray
    brake: np.ndarray
    brake_accel: np.ndarray
    burst_accel: np.ndarray


def generate_table(params: CarParams, progress: Callable[[int], None] | None = None) -> pa.Table:
    """:func:`generate` with its parameters in one object."""
    params.validate()
    rng = np.random.default_rng(params.seed)
    road = _road(params, rng)
    out: list[tuple[np.ndarray, ...]] = []
    first = 0
    for t in range(params.duration):
        while first < params.cars and road.done[first]:
            first += 1
        last = int(np.searchsorted(road.enter, t, side="right"))
        if first < last:
            out.append(_step(road, slice(first, last), t, params, rng))
        if progress is not None and (t + 1) % PROGRESS_EVERY == 0:
            progress(PROGRESS_EVERY)
    if progress is not None and params.duration % PROGRESS_EVERY:
        progress(params.duration % PROGRESS_EVERY)
    return _assemble(out)


def _road(p: CarParams, rng: np.random.Generator) -> _Road:
    """Every car before it enters: when, where, how far, and its driver."""
    n = p.cars
    enter = np.sort(rng.integers(0, p.duration, size=n))
    kind = np.where(rng.random(n) < 0.5, 0, 1)
    kind[rng.random(n) < p.aggressive] = AGGRESSIVE
    direction = rng.integers(0, 2, size=n)
    segment = rng.integers(0, SEGMENTS, size=n)
    x = segment * FEET_PER_MILE + rng.integers(0, FEET_PER_MILE, size=n)
    to_end = np.where(direction == 0, SEGMENTS * FEET_PER_MILE - 1 - x, x)
    trip = rng.uniform(5, 40, size=n) * FEET_PER_MILE
    target = np.array(TARGET)[kind]
    zeros = np.zeros(n)
    return _Road(
        enter=enter,
        temperament=kind,
        direction=direction,
        x=x.astype(np.float64),
        left=np.minimum(trip, to_end),
        speed=rng.uniform(20, 35, size=n),
        base=rng.uniform(target[:, 0], target[:, 1]),
        drift=zeros.copy(),
        lane=np.zeros(n, dtype=np.int64),
        seen=np.zeros(n, dtype=np.int64),
        done=np.zeros(n, dtype=bool),
        phase=np.zeros(n, dtype=np.int64),
        count=np.zeros(n, dtype=np.int64),
        slow_to=zeros.copy(),
        burst=np.zeros(n, dtype=np.int64),
        cruise=np.zeros(n, dtype=np.int64),
        brake=np.zeros(n, dtype=np.int64),
        brake_accel=zeros.copy(),
        burst_accel=zeros.copy(),
    )


def _step(
    road: _Road, cars: slice, t: int, p: CarParams, rng: np.random.Generator
) -> tuple[np.ndarray, ...]:
    """One second for the cars in ``cars`` that are on the road: their reports."""
    on = ~road.done[cars]
    index = np.arange(cars.start, cars.stop)[on]
    first = road.seen[index] == 0
    speed = road.speed[index]
    accel = _wanted_accel(road, index, p, rng)
    new_speed = np.clip(speed + accel * MPH_PER_MPS, 0.0, MAX_SPEED)
    new_speed[first] = speed[first]  # the first report is where the car enters
    accel = (new_speed - speed) / MPH_PER_MPS
    feet = np.where(first, 0.0, (speed + new_speed) / 2 * FEET_PER_MILE / 3600)
    road.speed[index] = new_speed
    road.left[index] -= feet
    road.x[index] += np.where(road.direction[index] == 0, feet, -feet)
    road.seen[index] += 1
    lane = _lanes(road, index, rng)
    road.done[index] = road.left[index] <= 0
    x = np.clip(np.rint(road.x[index]), 0, SEGMENTS * FEET_PER_MILE - 1).astype(np.int64)
    return (
        np.full(index.size, t, dtype=np.int64),
        index + 1,
        road.direction[index],
        lane,
        x // FEET_PER_MILE,
        x,
        np.round(new_speed, 1),
        np.round(accel, 2),
    )


def _wanted_accel(
    road: _Road, index: np.ndarray, p: CarParams, rng: np.random.Generator
) -> np.ndarray:
    """The acceleration each driver chooses: towards the target speed, or by the plan of
    an aggressive episode."""
    kind = road.temperament[index]
    road.drift[index] = 0.98 * road.drift[index] + rng.normal(0.0, 0.8, size=index.size)
    target = road.base[index] + road.drift[index]
    accel = 0.15 * (target - road.speed[index]) / MPH_PER_MPS
    accel += rng.normal(0.0, 0.3, size=index.size)
    bounds = np.array(BOUNDS)[kind]
    accel = np.clip(accel, bounds[:, 0], bounds[:, 1])
    start = (
        (kind == AGGRESSIVE)
        & (road.phase[index] == NONE)
        & (road.seen[index] > RAMP_SECONDS)
        & (rng.random(index.size) < p.episodes / 3600.0)
    )
    _plan_episodes(road, index[start], rng)
    return _episode_accel(road, index, accel, rng)


def _plan_episodes(road: _Road, index: np.ndarray, rng: np.random.Generator) -> None:
    """Draw the plan of the episodes that start now."""
    n = index.size
    road.phase[index] = SLOW
    road.slow_to[index] = rng.uniform(5.0, 25.0, size=n)
    road.burst[index] = rng.integers(4, 7, size=n)
    road.burst_accel[index] = rng.uniform(7.6, 9.5, size=n)
    road.cruise[index] = rng.integers(1, 41, size=n)
    road.brake[index] = rng.integers(2, 6, size=n)
    road.brake_accel[index] = rng.uniform(-11.0, -8.5, size=n)


def _episode_accel(
    road: _Road, index: np.ndarray, accel: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Override ``accel`` for the cars in an episode and move their phases on."""
    phase = road.phase[index]
    slowing = phase == SLOW
    reached = slowing & (road.speed[index] <= road.slow_to[index])
    accel = np.where(slowing & ~reached, -3.5, accel)
    # a reached slow-down starts the burst this very second
    phase = np.where(reached, BURST, phase)
    count = np.where(reached, road.burst[index], road.count[index])
    jitter = rng.normal(0.0, 0.15, size=index.size)
    accel = np.where(phase == BURST, road.burst_accel[index] + jitter, accel)
    accel = np.where(phase == CRUISE, jitter, accel)
    accel = np.where(phase == BRAKE, road.brake_accel[index] + jitter, accel)
    timed = phase >= BURST
    count = np.where(timed, count - 1, count)
    over = timed & (count <= 0)
    next_phase = np.where(phase == BRAKE, NONE, phase + 1)
    length = np.select([phase == BURST, phase == CRUISE], [road.cruise[index], road.brake[index]])
    road.phase[index] = np.where(over, next_phase, phase)
    road.count[index] = np.where(over, length, count)
    return accel


def _lanes(road: _Road, index: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Entrance ramp for the first reports, exit ramp near the trip's end, else a travel
    lane, changed now and then (more often by aggressive drivers)."""
    seen = road.seen[index]
    lane = road.lane[index]
    joining = (seen > RAMP_SECONDS) & (lane == 0)
    lane = np.where(joining, rng.integers(1, 4, size=index.size), lane)
    rate = np.where(road.temperament[index] == AGGRESSIVE, 0.05, 0.01)
    change = (lane >= 1) & (lane <= 3) & (rng.random(index.size) < rate)
    step = np.where(rng.random(index.size) < 0.5, -1, 1)
    lane = np.where(change, np.clip(lane + step, 1, 3), lane)
    lane = np.where(road.left[index] <= EXIT_FEET, 4, lane)
    road.lane[index] = lane
    return lane


def _assemble(out: list[tuple[np.ndarray, ...]]) -> pa.Table:
    names = COLUMNS[2:]
    columns = [
        np.concatenate([step[i] for step in out]) if out else np.zeros(0, dtype=np.int64)
        for i in range(len(names))
    ]
    n = columns[0].size
    table: dict[str, pa.Array] = {
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "type": pa.array([EVENT_TYPE], pa.string()).take(np.zeros(n, dtype=np.int64)),
    }
    for name, column in zip(names, columns, strict=True):
        kind = np.float64 if name in ("speed", "accel") else np.int64
        table[name] = pa.array(column.astype(kind))
    return pa.table(table)
