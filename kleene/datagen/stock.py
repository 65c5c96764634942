"""The stock ticker stream of SIGMOD 2008, section 6.

Every event has the one type ``Stock`` and the attributes ``symbol``, ``price`` and
``volume``. Symbols are drawn uniformly from ``1..symbols``; volumes uniformly from the
volume range (the paper's is ``[1, 1000]``). For each symbol the price performs a walk over
the price range (the paper's is ``[1, 1000]``): at each event of that symbol the price goes
up by ``step`` with probability ``p``, down by ``step`` with probability ``(1 - p) / 2``
and stays the same otherwise. The first event of a symbol carries its start price, drawn
uniformly from the price range.

The paper does not say what happens at the ends of the price range. Here the range is
circular: a step past the top comes back in at the bottom and vice versa. This keeps the
walk inside the range without biasing the direction of moves (only the one step that
wraps around flips direction), and it keeps the generator free of per-event loops.

Each event also has ``id`` (0, 1, 2, ...: its position in the stream) and ``timestamp``
(1, 2, 3, ...: one time unit per event). The whole stream is built with numpy in a few
vectorized passes, so ten million events take seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kleene.datagen._checks import at_least, bounds, probability

EVENT_TYPE = "Stock"
COLUMNS = ("id", "type", "timestamp", "symbol", "price", "volume")


@dataclass(frozen=True)
class StockParams:
    """The knobs of the stock stream. Defaults follow SIGMOD 2008, section 6, Table 1."""

    events: int = 100_000
    symbols: int = 2
    increase_prob: float = 0.7
    seed: int = 0
    price_range: tuple[int, int] = (1, 1000)
    volume_range: tuple[int, int] = (1, 1000)
    step: int = 1

    def validate(self) -> None:
        """Raise ValueError when a parameter is out of its domain."""
        at_least("events", self.events, 0)
        at_least("symbols", self.symbols, 1)
        probability("increase probability", self.increase_prob)
        bounds("price", self.price_range)
        bounds("volume", self.volume_range)
        at_least("step", self.step, 0)


def generate(
    events: int = 100_000,
    *,
    symbols: int = 2,
    increase_prob: float = 0.7,
    seed: int = 0,
    price_range: tuple[int, int] = (1, 1000),
    volume_range: tuple[int, int] = (1, 1000),
    step: int = 1,
) -> pa.Table:
    """Generate a stock stream of ``events`` events as a table with columns
    ``id, type, timestamp, symbol, price, volume`` (all integers but ``type``).

    The same parameters and seed always give the same table.
    """
    return generate_table(
        StockParams(events, symbols, increase_prob, seed, price_range, volume_range, step)
    )


def generate_table(params: StockParams) -> pa.Table:
    """:func:`generate` with its parameters in one object."""
    params.validate()
    n = params.events
    rng = np.random.default_rng(params.seed)
    symbol = rng.integers(1, params.symbols + 1, size=n, dtype=np.int64)
    moves = _price_moves(rng.random(n), params.increase_prob, params.step)
    low, high = params.price_range
    start_price = rng.integers(low, high + 1, size=params.symbols, dtype=np.int64)
    price = _walk_per_symbol(symbol, moves, start_price[symbol - 1], low, high)
    vlow, vhigh = params.volume_range
    volume = rng.integers(vlow, vhigh + 1, size=n, dtype=np.int64)
    return pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "type": _constant_text(EVENT_TYPE, n),
            "timestamp": pa.array(np.arange(1, n + 1, dtype=np.int64)),
            "symbol": pa.array(symbol),
            "price": pa.array(price),
            "volume": pa.array(volume),
        }
    )


def _price_moves(u: np.ndarray, p: float, step: int) -> np.ndarray:
    """Map uniform draws to moves: +step with probability p, -step with (1-p)/2, else 0."""
    moves = np.zeros(u.shape[0], dtype=np.int64)
    moves[u < p] = step
    moves[(u >= p) & (u < p + (1.0 - p) / 2.0)] = -step
    return moves


def _walk_per_symbol(
    symbol: np.ndarray, moves: np.ndarray, start: np.ndarray, low: int, high: int
) -> np.ndarray:
    """Price of every event: its symbol's start price plus the moves of that symbol's later
    events up to and including this one, wrapped into ``[low, high]``."""
    n = symbol.shape[0]
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    # a stable sort on small unsigned keys is a radix sort in numpy
    keys = symbol.astype(np.uint16) if symbol.max() < 2**16 else symbol
    order = np.argsort(keys, kind="stable")
    sorted_symbol = symbol[order]
    sorted_moves = moves[order]
    first = np.ones(n, dtype=bool)
    first[1:] = sorted_symbol[1:] != sorted_symbol[:-1]
    sorted_moves[first] = 0  # the first event of a symbol carries the start price
    total = np.cumsum(sorted_moves)
    # subtract the running total reached before each symbol's first event
    group_start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    offset = total[group_start]
    walked = np.empty(n, dtype=np.int64)
    walked[order] = total - offset
    span = high - low + 1
    return low + np.mod(start - low + walked, span)


def _constant_text(value: str, n: int) -> pa.Array:
    """A string column holding ``value`` n times, built from its buffers in one go."""
    data = value.encode("utf-8")
    width = len(data)
    if width * n >= 2**31 - 1:
        offsets = np.arange(0, width * (n + 1), width, dtype=np.int64)
        kind = pa.large_string()
    else:
        offsets = np.arange(0, width * (n + 1), width, dtype=np.int32)
        kind = pa.string()
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(offsets), pa.py_buffer(data * n)])
