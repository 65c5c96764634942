"""Share trades at millisecond granularity, shaped like the NYSE data of the match-window
paper (Cadonna, Gamper, Böhlen), section 6.1: 1M trades over 34 hours, queried with
windows τ of 10-100 ms and patterns such as Pnyse, "rising Apple and Google prices in any
order, then a falling IBM price" (``prev(a.price) < a.price``).

Every event has the type ``Trade`` and the attributes ``symbol`` (text), ``price`` (in
dollars with whole cents) and ``volume`` (shares). The first symbols are ``AAPL``,
``GOOG`` and ``IBM`` (those Pnyse names), then further tickers of a fixed list, then
``S0021``, ``S0022``, ...; symbol ``i`` (from 1) trades with weight ``1 / i`` (a few
symbols take most trades, as on an exchange).

Trades arrive at ``rate`` trades per second (the paper's data: about 8; at most 1000):
``timestamp`` is in milliseconds and each millisecond holds a trade with probability
``rate / 1000`` (the discrete counterpart of a Poisson process), so timestamps are
strictly increasing and the stream is totally ordered.

Each symbol's price is a geometric random walk from a start price drawn uniformly in
[20, 500] dollars, with a relative move of standard deviation ``volatility`` per trade,
rounded to cents; volumes are round lots of 100 shares (log-normal, median 300) with one
trade in five an odd lot of 1-99 shares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from kleene.datagen._checks import at_least, positive

EVENT_TYPE = "Trade"
COLUMNS = ("id", "type", "timestamp", "symbol", "price", "volume")
TICKERS = (
    "AAPL",
    "GOOG",
    "IBM",
    "MSFT",
    "AMZN",
    "ORCL",
    "INTC",
    "CSCO",
    "HPQ",
    "XOM",
    "GE",
    "JPM",
    "BAC",
    "WMT",
    "KO",
    "PFE",
    "T",
    "VZ",
    "DIS",
    "MCD",
)
START_PRICE = (20.0, 500.0)


@dataclass(frozen=True)
class TradeParams:
    """The knobs of the trade stream."""

    events: int = 1_000_000
    symbols: int = 10
    seed: int = 0
    rate: float = 8.0
    volatility: float = 0.0005

    def validate(self) -> None:
        """Raise ValueError when a parameter is out of its domain."""
        at_least("events", self.events, 0)
        at_least("symbols", self.symbols, 1)
        positive("rate (trades per second)", self.rate)
        if not self.rate <= 1000:
            raise ValueError(f"rate (trades per second) must be <= 1000, got {self.rate}")
        at_least("volatility", self.volatility, 0)


def symbol_names(symbols: int) -> list[str]:
    """The tickers of the first ``symbols`` symbols."""
    named = list(TICKERS[:symbols])
    return named + [f"S{i:04d}" for i in range(len(named) + 1, symbols + 1)]


def generate(
    events: int = 1_000_000,
    *,
    symbols: int = 10,
    seed: int = 0,
    rate: float = 8.0,
    volatility: float = 0.0005,
) -> pa.Table:
    """Generate ``events`` trades as a table with columns ``id, type, timestamp, symbol,
    price, volume`` (``timestamp`` in ms, ``price`` in dollars). The same parameters and
    seed always give the same table."""
    return generate_table(TradeParams(events, symbols, seed, rate, volatility))


def generate_table(params: TradeParams) -> pa.Table:
    """:func:`generate` with its parameters in one object."""
    params.validate()
    n = params.events
    rng = np.random.default_rng(params.seed)
    weights = 1.0 / np.arange(1, params.symbols + 1)
    symbol = rng.choice(params.symbols, size=n, p=weights / weights.sum())
    # a trade in each millisecond with probability rate / 1000: geometric gaps
    timestamp = np.cumsum(rng.geometric(params.rate / 1000.0, size=n)).astype(np.int64)
    start = rng.uniform(*START_PRICE, size=params.symbols)
    steps = rng.normal(0.0, params.volatility, size=n)
    price = np.round(start[symbol] * np.exp(_cumsum_per_symbol(symbol, steps)), 2)
    lots = np.maximum(np.rint(rng.lognormal(np.log(3.0), 0.8, size=n)), 1) * 100
    odd = rng.random(n) < 0.2
    volume = np.where(odd, rng.integers(1, 100, size=n), lots).astype(np.int64)
    names = pa.array(symbol_names(params.symbols), pa.string())
    return pa.table(
        {
            "id": pa.array(np.arange(n, dtype=np.int64)),
            "type": pa.array([EVENT_TYPE], pa.string()).take(np.zeros(n, dtype=np.int64)),
            "timestamp": pa.array(timestamp),
            "symbol": names.take(pa.array(symbol)),
            "price": pa.array(np.maximum(price, 0.01)),
            "volume": pa.array(volume),
        }
    )


def _cumsum_per_symbol(symbol: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """For every trade, the sum of its symbol's steps after that symbol's first trade up to
    and including this one (0 at a symbol's first trade)."""
    n = symbol.shape[0]
    if n == 0:
        return np.zeros(0)
    order = np.argsort(symbol, kind="stable")
    sorted_symbol = symbol[order]
    sorted_steps = steps[order].copy()
    first = np.ones(n, dtype=bool)
    first[1:] = sorted_symbol[1:] != sorted_symbol[:-1]
    sorted_steps[first] = 0.0
    total = np.cumsum(sorted_steps)
    group_start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    out = np.empty(n)
    out[order] = total - total[group_start]
    return out
