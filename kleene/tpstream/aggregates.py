"""Incremental aggregates over a situation's events (EDBT 2018, section 5.1: Algorithm 1's
initAgg and updateAgg).

A state is plain data (it goes into snapshots as it is): a list ``[ok, *values]`` where
``ok`` turns False for good once a value cannot take part (the expression rules of
docs/semantics.md, "Arithmetic and types": ``sum`` and ``avg`` add numbers only, ``min``
and ``max`` order two numbers, two strings or two datetimes). The finished value of a
failed aggregate is None: the RETURN item reading it is null.
"""

from __future__ import annotations

import datetime as dt
from typing import Any


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _order_kind(value: Any) -> str | None:
    if is_number(value):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dt.datetime):
        return "datetime"
    return None


def start(func: str, value: Any) -> list[Any]:
    """The state of ``func`` after the situation's first event (``value`` is the
    aggregated attribute's value, None for count)."""
    if func == "count":
        return [True, 1]
    if func in ("first", "last"):
        return [True, value]
    if func in ("sum", "avg"):
        return [is_number(value), value, 1]
    return [_order_kind(value) is not None, value]


def add(func: str, state: list[Any], value: Any) -> None:
    """Updates ``state`` with one more event of the situation."""
    if func == "count":
        state[1] += 1
    elif func == "last":
        state[1] = value
    elif func == "first" or not state[0]:
        return
    elif func in ("sum", "avg"):
        if not is_number(value):
            state[0] = False
            return
        state[1] += value
        state[2] += 1
    elif _order_kind(value) != _order_kind(state[1]):
        state[0] = False
    elif (value < state[1]) if func == "min" else (value > state[1]):
        state[1] = value


def result(func: str, state: list[Any]) -> Any:
    """The aggregate's value (None when it has none)."""
    if not state[0]:
        return None
    if func == "avg":
        return state[1] / state[2]
    return state[1]
