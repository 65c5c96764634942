"""Share trades at millisecond granularity (match-window paper, section 6.1): shape,
determinism, arrival rate, prices in cents walking per symbol."""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pytest

from kleene.datagen.trades import COLUMNS, generate, symbol_names


def test_columns_types_and_symbols() -> None:
    table = generate(5000, symbols=25, seed=1)
    assert table.column_names == list(COLUMNS)
    assert set(table.column("type").to_pylist()) == {"Trade"}
    assert table.column("id").to_pylist() == list(range(5000))
    for name in ("id", "timestamp", "volume"):
        assert pa.types.is_integer(table.schema.field(name).type)
    assert pa.types.is_floating(table.schema.field("price").type)
    names = symbol_names(25)
    assert names[:3] == ["AAPL", "GOOG", "IBM"] and names[-1] == "S0025"
    assert len(set(names)) == 25
    assert set(table.column("symbol").to_pylist()) == set(names)


def test_same_seed_same_table_and_different_seed_different_table() -> None:
    assert generate(3000, symbols=4, seed=2).equals(generate(3000, symbols=4, seed=2))
    assert not generate(3000, symbols=4, seed=2).equals(generate(3000, symbols=4, seed=3))


@pytest.mark.parametrize("rate", [8.0, 200.0, 1000.0])
def test_timestamps_are_strictly_increasing_milliseconds_at_the_rate(rate: float) -> None:
    time = generate(100_000, seed=3, rate=rate).column("timestamp").to_numpy()
    assert np.all(np.diff(time) >= 1)
    assert abs(time[-1] / time.size - 1000.0 / rate) < 0.03 * 1000.0 / rate


def test_a_million_trades_span_about_the_papers_34_hours() -> None:
    # the paper's NYSE data: 1M trades in 34 hours; the default rate is 8 a second
    hours = 1_000_000 / 8 / 3600
    assert 33 < hours < 36


def test_prices_are_cents_walking_per_symbol_and_volumes_positive() -> None:
    table = generate(50_000, symbols=3, seed=4, volatility=0.001)
    price = table.column("price").to_numpy()
    symbol = np.array(table.column("symbol").to_pylist())
    assert np.all(price > 0)
    assert np.allclose(price * 100, np.round(price * 100))
    for name in ("AAPL", "GOOG", "IBM"):
        walk = price[symbol == name]
        assert 20 * 0.9 <= walk[0] <= 500 * 1.1
        moves = np.diff(np.log(walk))
        assert np.abs(moves).max() < 0.01  # steps of sd 0.001, plus rounding to cents
        # Pnyse needs both rising and falling consecutive trades of a symbol
        assert (moves > 0).mean() > 0.3 and (moves < 0).mean() > 0.3
    volume = table.column("volume").to_numpy()
    assert volume.min() >= 1
    assert 0.15 < np.mean(volume % 100 != 0) < 0.25  # odd lots


def test_first_symbols_trade_most() -> None:
    symbol = generate(30_000, symbols=5, seed=5).column("symbol").to_pylist()
    counts = [symbol.count(name) for name in symbol_names(5)]
    assert counts == sorted(counts, reverse=True)
    assert abs(counts[0] / counts[1] - 2) < 0.2  # weights 1/rank


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"events": -1}, "events must be >= 0"),
        ({"symbols": 0}, "symbols must be >= 1"),
        ({"rate": 0}, "rate (trades per second) must be > 0"),
        ({"rate": 1001}, "must be <= 1000"),
        ({"rate": float("nan")}, "must be <= 1000"),
        ({"volatility": -0.1}, "volatility must be >= 0"),
    ],
)
def test_bad_parameters_are_refused_naming_the_knob(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        generate(**{"events": 10, **kwargs})  # type: ignore[arg-type]


def test_no_trades() -> None:
    assert generate(0).num_rows == 0
