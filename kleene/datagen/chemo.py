"""Chemotherapy events shaped like the Chemo relation of the match-window paper (Cadonna,
Gamper, Böhlen), Figure 1 and section 6.1 (the Onco data set).

Every event has the paper's attributes ``PID`` (patient), ``L`` (label: what happened),
``V`` (value) and ``U`` (unit), with its occurrence time T as ``timestamp`` in seconds
from the start of the data; ``type`` repeats ``L`` so a query may name the label as an
event type. The labels, after the variables of the paper's Ponco pattern:

=====  ======================================  ==========  ===========================
L      what                                    U           V
=====  ======================================  ==========  ===========================
C      Ciclofosfamide administered, day 1      mg          750 mg/m² × body surface
D      Doxorubicina administered, day 1        mg          50 mg/m² × body surface
R      Rituximab administered, day 1           mg          375 mg/m² × body surface
P      Prednisone administered, days 1-5       mg          about 100, varying by day
B      white blood cell count                  1/µl        falls to a nadir near day 10
H      red blood cell count                    10^6/µl     slowly falls over the cycles
=====  ======================================  ==========  ===========================

Each patient follows a protocol of 4-8 cycles of 21 (or, for one patient in four, 14)
days, and the treatments are shifted in time: a patient starts on a uniformly drawn day
of the data's ``days`` (the paper notes that the Onco data's treatments are shifted so
patients are not spread evenly over the data). In a cycle the drugs are given on day 1
(Prednisone on days 1-5, each day's dose varying around the patient's own), blood is
counted on day 1 before the drugs, around day 10 and around day 17 (in a 14-day cycle
around days 7 and 12). A patient's body
surface (1.5-2.2 m²) sets the doses; values carry the paper's precision (doses to 0.5
mg, white counts to 100/µl). Events fall in working hours (drugs 8:00-16:00, blood
counts 7:00-8:00), and whatever would happen after ``days`` is left out.

The table is sorted by time; timestamps are strictly increasing (an event drawn in the
same second as the one before it moves to the next second), so the relation is totally
ordered by T as the paper assumes, and each patient's events are in time order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kleene.datagen._checks import at_least

DAY = 86_400  # seconds
HOUR = 3_600
LABELS = ("C", "D", "R", "P", "B", "H")
UNITS = {"C": "mg", "D": "mg", "R": "mg", "P": "mg", "B": "1/µl", "H": "10^6/µl"}
COLUMNS = ("id", "type", "timestamp", "PID", "L", "V", "U")
DOSE_PER_M2 = {"C": 750.0, "D": 50.0, "R": 375.0}
PREDNISONE_DAYS = 5
COUNT_DAYS = (0, 9, 16)  # days of a 21-day cycle (0-based) blood is counted, +-1 day


@dataclass(frozen=True)
class ChemoParams:
    """The knobs of the chemotherapy data."""

    patients: int = 100
    days: int = 365
    seed: int = 0

    def validate(self) -> None:
        """Raise ValueError when a parameter is out of its domain."""
        at_least("patients", self.patients, 0)
        at_least("days", self.days, 1)


def generate(patients: int = 100, *, days: int = 365, seed: int = 0) -> pa.Table:
    """Generate the events of ``patients`` patients over ``days`` days as a table with
    columns ``id, type, timestamp, PID, L, V, U`` (``timestamp`` in seconds). The same
    parameters and seed always give the same table."""
    return generate_table(ChemoParams(patients, days, seed))


@dataclass
class _Events:
    """Events as parallel lists, appended per patient."""

    time: list[np.ndarray]
    pid: list[np.ndarray]
    label: list[np.ndarray]  # index into LABELS
    value: list[np.ndarray]

    def add(self, pid: int, label: str, time: np.ndarray, value: np.ndarray) -> None:
        self.time.append(time)
        self.pid.append(np.full(time.size, pid, dtype=np.int64))
        self.label.append(np.full(time.size, LABELS.index(label), dtype=np.int64))
        self.value.append(value)


def generate_table(params: ChemoParams) -> pa.Table:
    """:func:`generate` with its parameters in one object."""
    params.validate()
    rng = np.random.default_rng(params.seed)
    events = _Events([], [], [], [])
    for pid in range(1, params.patients + 1):
        _patient(events, pid, params.days, rng)
    return _assemble(events, params.days)


def _patient(events: _Events, pid: int, days: int, rng: np.random.Generator) -> None:
    """One patient's protocol: cycles from a shifted start day."""
    first_day = int(rng.integers(0, days))
    cycle_days = 14 if rng.random() < 0.25 else 21
    cycles = int(rng.integers(4, 9))
    surface = rng.uniform(1.5, 2.2)
    prednisone = 100.0 * rng.uniform(0.85, 1.15)
    white = rng.uniform(5_000, 9_000)  # the patient's count before treatment
    red = rng.uniform(4.2, 5.4)
    day1 = first_day + cycle_days * np.arange(cycles)
    for label, per_m2 in DOSE_PER_M2.items():
        dose = _half_mg(per_m2 * surface * rng.uniform(0.97, 1.03, size=cycles))
        events.add(pid, label, _at(rng, day1, 8, 16), dose)
    pred_days = (day1[:, None] + np.arange(PREDNISONE_DAYS)).ravel()
    dose = _half_mg(prednisone * rng.uniform(0.8, 1.2, size=pred_days.size))
    events.add(pid, "P", _at(rng, pred_days, 8, 16), dose)
    planned = np.rint(np.array(COUNT_DAYS) * cycle_days / 21).astype(np.int64)
    offsets = planned[None, :] + rng.integers(-1, 2, size=(cycles, len(COUNT_DAYS)))
    offsets[:, 0] = 0  # day 1: counted (7:00-8:00) before the drugs (from 8:00)
    count_days = (day1[:, None] + offsets).ravel()
    cycle_of = np.repeat(np.arange(cycles), len(COUNT_DAYS))
    since_drugs = offsets.ravel()
    # the nadir: a dip of 40-80% around day 10 of each cycle, deeper in later cycles
    depth = np.minimum(0.4 + 0.05 * cycle_of + rng.uniform(0, 0.1, size=cycle_of.size), 0.8)
    dip = depth * np.exp(-(((since_drugs - 9) / 4.0) ** 2)) * (since_drugs > 0)
    counts = white * (1 - dip) * rng.uniform(0.93, 1.07, size=cycle_of.size)
    counted = _at(rng, count_days, 7, 7.75)
    events.add(pid, "B", counted, np.round(counts, -2))
    reds = red * (1 - 0.03 * cycle_of) * rng.uniform(0.97, 1.03, size=cycle_of.size)
    events.add(pid, "H", counted + 600, np.round(reds, 2))  # 10 minutes later


def _at(rng: np.random.Generator, days: np.ndarray, start: float, end: float) -> np.ndarray:
    """A uniformly drawn second of each day between the hours ``start`` and ``end``."""
    seconds = rng.integers(round(start * HOUR), round(end * HOUR), size=days.size)
    return days.astype(np.int64) * DAY + seconds


def _half_mg(dose: np.ndarray) -> np.ndarray:
    """Doses rounded to 0.5 mg."""
    return np.round(dose * 2.0) / 2.0


def _assemble(events: _Events, days: int) -> pa.Table:
    empty = np.zeros(0, dtype=np.int64)
    time = np.concatenate(events.time) if events.time else empty
    pid = np.concatenate(events.pid) if events.pid else empty
    label = np.concatenate(events.label) if events.label else empty
    value = np.concatenate(events.value).astype(np.float64) if events.value else np.zeros(0)
    inside = time < days * DAY
    time, pid, label, value = time[inside], pid[inside], label[inside], value[inside]
    order = np.lexsort((label, pid, time))
    time = _strictly_increasing(time[order])
    n = time.size
    labels = pa.array(LABELS, pa.string())
    units = pa.array([UNITS[name] for name in LABELS], pa.string())
    which = pa.array(label[order])
    return pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "type": labels.take(which),
            "timestamp": pa.array(time),
            "PID": pa.array(pid[order]),
            "L": labels.take(which),
            "V": pa.array(value[order]),
            "U": units.take(which),
        }
    )


def _strictly_increasing(time: np.ndarray) -> np.ndarray:
    """Sorted times moved forward as little as needed to make them strictly increasing."""
    if time.size == 0:
        return time
    steps = np.arange(time.size, dtype=np.int64)
    return np.maximum.accumulate(time - steps) + steps
