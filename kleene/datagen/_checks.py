"""Parameter checks shared by the generators; each raises ValueError naming the knob."""

from __future__ import annotations


def at_least(name: str, value: float, low: float) -> None:
    if value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")


def positive(name: str, value: float) -> None:
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value}")


def probability(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{name} must be a probability in [0, 1], got {value}")


def bounds(name: str, pair: tuple[int, int], low: int | None = None) -> None:
    """A (low, high) range: not empty, and not below ``low`` when given."""
    first, last = pair
    if first > last or (low is not None and first < low):
        floor = "" if low is None else f"{low} <= "
        raise ValueError(f"{name} range must satisfy {floor}low <= high, got {pair}")
