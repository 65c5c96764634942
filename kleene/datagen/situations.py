"""Synthetic situation streams of TPStream (EDBT 2018), section 6.1.

One event per time unit (1 Hz: ``timestamp`` 0, 1, 2, ...), each with ``k`` boolean
attributes (named ``A``, ``B``, ``C``, ... unless named explicitly). Every attribute is a
situation stream of its own: it is true for a run of consecutive events lasting a
uniformly drawn 10-100 time units (a situation), then false for a uniformly drawn 10-50
units (a gap), and so on; attributes are drawn independently. The stream opens with a gap,
so each situation starts after an event that does not satisfy it (its derived start is
its first true event), and a situation that the end of the stream cuts off is shorter.

Occurrence ratios (section 6.4.2: 1:1:1, then 1:50:50, then 50:1:50) thin that rhythm:
with weights ``w``, each would-be situation of an attribute is kept with probability
``w_i / max(w)`` and turned into gap otherwise, so attributes occur in the ratio of their
weights while every situation still lasts 10-100 units; a thinned attribute's gaps are
then longer than 50. Several phases of weights split the stream into equal parts; a
would-be situation is kept or not by the weights of the phase it starts in.
"""

from __future__ import annotations

import math
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kleene.datagen._checks import at_least, bounds, positive

EVENT_TYPE = "Synthetic"
DURATION = (10, 100)  # how long a situation holds (section 6.1)
GAP = (10, 50)  # the gap between two situations of one attribute


@dataclass(frozen=True)
class SituationParams:
    """The knobs of the situation stream; defaults follow section 6.1."""

    duration: int = 100_000
    names: tuple[str, ...] = ("A", "B", "C")
    ratios: tuple[tuple[float, ...], ...] = ()
    seed: int = 0
    hold: tuple[int, int] = DURATION
    gap: tuple[int, int] = GAP
    holds: tuple[tuple[str, tuple[int, int]], ...] = ()  # per-attribute hold ranges

    def validate(self) -> None:
        """Raise ValueError when a parameter is out of its domain."""
        at_least("duration", self.duration, 0)
        at_least("attributes", len(self.names), 1)
        for name in self.names:
            if not name.isidentifier() or name in ("id", "type", "timestamp"):
                raise ValueError(
                    f"attribute name {name!r} must be an identifier other than id, type "
                    "and timestamp"
                )
        if len(set(self.names)) != len(self.names):
            raise ValueError(f"attribute names must differ, got {', '.join(self.names)}")
        for phase in self.ratios:
            if len(phase) != len(self.names):
                raise ValueError(
                    f"an occurrence ratio needs one weight per attribute ({len(self.names)}), "
                    f"got {':'.join(f'{w:g}' for w in phase)}"
                )
            for weight in phase:
                positive("an occurrence ratio's weight", weight)
                if not math.isfinite(weight):
                    raise ValueError(f"an occurrence ratio's weight must be finite, got {weight}")
        bounds("situation duration", self.hold, 1)
        bounds("gap", self.gap, 1)
        for name, hold in self.holds:
            if name not in self.names:
                raise ValueError(
                    f"a duration range for {name!r}, which is not an attribute "
                    f"({', '.join(self.names)})"
                )
            bounds(f"{name}'s situation duration", hold, 1)

    def hold_of(self, name: str) -> tuple[int, int]:
        """The range ``name``'s situations last."""
        return dict(self.holds).get(name, self.hold)


def default_names(attributes: int) -> tuple[str, ...]:
    """``A``, ``B``, ... for up to 26 attributes; ValueError beyond that."""
    at_least("attributes", attributes, 1)
    if attributes > len(string.ascii_uppercase):
        raise ValueError(f"attributes beyond 26 need explicit names, got {attributes}")
    return tuple(string.ascii_uppercase[:attributes])


def generate(
    duration: int = 100_000,
    *,
    attributes: int | None = None,
    names: Sequence[str] | None = None,
    ratios: Sequence[Sequence[float]] = (),
    seed: int = 0,
    hold: tuple[int, int] = DURATION,
    gap: tuple[int, int] = GAP,
    holds: Mapping[str, tuple[int, int]] | None = None,
) -> pa.Table:
    """Generate ``duration`` events (one per time unit) as a table with columns
    ``id, type, timestamp`` and one boolean column per attribute.

    ``names`` (default ``A``, ``B``, ... for ``attributes`` attributes, 3 when neither
    is given) name the boolean
    columns; ``ratios`` gives the occurrence ratio of the attributes per phase (one weight
    per attribute; phases split the stream evenly; none: all 1). ``hold`` and ``gap`` are
    the inclusive ranges situations and gaps are drawn from; ``holds`` gives some
    attributes a range of their own (section 6.3.1 varies the ratio of two attributes'
    mean durations). The same parameters and seed always give the same table.
    """
    chosen = tuple(names) if names is not None else default_names(attributes or 3)
    if attributes is not None and attributes != len(chosen):
        raise ValueError(f"{attributes} attributes but {len(chosen)} names: {', '.join(chosen)}")
    phases = tuple(tuple(float(w) for w in phase) for phase in ratios)
    own = tuple((name, (int(r[0]), int(r[1]))) for name, r in (holds or {}).items())
    return generate_table(SituationParams(duration, chosen, phases, seed, hold, gap, own))


def generate_table(params: SituationParams) -> pa.Table:
    """:func:`generate` with its parameters in one object."""
    params.validate()
    n = params.duration
    rng = np.random.default_rng(params.seed)
    columns: dict[str, pa.Array] = {
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "type": pa.array([EVENT_TYPE]).take(np.zeros(n, dtype=np.int64)),
        "timestamp": pa.array(np.arange(n, dtype=np.int64)),
    }
    keep = _keep_probabilities(params)
    for index, name in enumerate(params.names):
        columns[name] = pa.array(_attribute(params, params.hold_of(name), rng, keep[:, index]))
    return pa.table(columns)


def _keep_probabilities(params: SituationParams) -> np.ndarray:
    """Per phase (rows) and attribute (columns): the chance a would-be situation is kept."""
    if not params.ratios:
        return np.ones((1, len(params.names)))
    weights = np.array(params.ratios, dtype=np.float64)
    return weights / weights.max(axis=1, keepdims=True)


def _attribute(
    params: SituationParams, hold: tuple[int, int], rng: np.random.Generator, keep: np.ndarray
) -> np.ndarray:
    """One attribute's values: alternating gaps and (kept) situations over the stream."""
    n = params.duration
    # enough cycles to pass the end even if every draw is the shortest
    cycles = n // (hold[0] + params.gap[0]) + 1
    gaps = rng.integers(params.gap[0], params.gap[1] + 1, size=cycles)
    holds = rng.integers(hold[0], hold[1] + 1, size=cycles)
    draws = rng.random(cycles)
    starts = np.cumsum(gaps + holds) - holds  # each situation starts after its gap
    phase = np.minimum(starts * keep.size // max(n, 1), keep.size - 1)
    kept = (draws < keep[phase]) & (starts < n)
    values = np.zeros(n + 1, dtype=np.int64)
    np.add.at(values, starts[kept], 1)
    np.add.at(values, np.minimum(starts[kept] + holds[kept], n), -1)
    return np.cumsum(values[:n]) > 0
