"""The stock stream of SIGMOD 2008, section 6: shape, determinism and statistics."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from kleene.datagen.stock import COLUMNS, generate

N = 100_000


def _per_symbol_diffs(table: pa.Table) -> np.ndarray:
    """Price changes between consecutive events of the same symbol."""
    symbol = table.column("symbol").to_numpy()
    price = table.column("price").to_numpy()
    out = []
    for s in np.unique(symbol):
        out.append(np.diff(price[symbol == s]))
    return np.concatenate(out)


def test_columns_and_sequence_fields() -> None:
    table = generate(1000, symbols=3, seed=5)
    assert table.column_names == list(COLUMNS)
    assert table.num_rows == 1000
    assert table.column("id").to_pylist() == list(range(1000))
    assert table.column("timestamp").to_pylist() == list(range(1, 1001))
    assert set(table.column("type").to_pylist()) == {"Stock"}
    for name in ("id", "timestamp", "symbol", "price", "volume"):
        assert pa.types.is_integer(table.schema.field(name).type)


def test_value_ranges_follow_the_paper() -> None:
    table = generate(N, symbols=2, seed=1)
    price = table.column("price").to_numpy()
    volume = table.column("volume").to_numpy()
    assert price.min() >= 1 and price.max() <= 1000
    assert volume.min() >= 1 and volume.max() <= 1000
    assert set(table.column("symbol").to_pylist()) == {1, 2}


def test_custom_ranges_are_respected() -> None:
    table = generate(20_000, symbols=4, seed=2, price_range=(10, 30), volume_range=(5, 7))
    price = table.column("price").to_numpy()
    volume = table.column("volume").to_numpy()
    assert price.min() >= 10 and price.max() <= 30
    assert set(np.unique(volume).tolist()) == {5, 6, 7}


def test_same_seed_same_table_and_different_seed_different_table() -> None:
    first = generate(10_000, symbols=3, increase_prob=0.6, seed=11)
    again = generate(10_000, symbols=3, increase_prob=0.6, seed=11)
    other = generate(10_000, symbols=3, increase_prob=0.6, seed=12)
    assert first.equals(again)
    assert not first.equals(other)
    assert first.column("price") != other.column("price")


@pytest.mark.parametrize("p", [0.7, 0.55, 0.2])
def test_price_moves_have_the_requested_probabilities(p: float) -> None:
    diffs = _per_symbol_diffs(generate(N, symbols=2, increase_prob=p, seed=3))
    assert abs(np.mean(diffs > 0) - p) < 0.01
    assert abs(np.mean(diffs < 0) - (1 - p) / 2) < 0.01
    assert abs(np.mean(diffs == 0) - (1 - p) / 2) < 0.01


def test_each_move_is_one_step_or_a_wrap_around() -> None:
    step = 3
    table = generate(50_000, symbols=2, increase_prob=0.9, seed=4, step=step)
    diffs = np.abs(_per_symbol_diffs(table))
    span = 1000
    allowed = {0, step, span - step}
    assert set(np.unique(diffs).tolist()) <= allowed
    # with p = 0.9 the walk climbs past the top, so it does wrap around
    assert (diffs == span - step).any()


def test_walks_are_per_symbol() -> None:
    """A symbol's price moves only at that symbol's events: interleaving other symbols
    does not change its walk."""
    table = generate(5000, symbols=5, increase_prob=1.0, seed=9, price_range=(1, 10**6))
    symbol = table.column("symbol").to_numpy()
    price = table.column("price").to_numpy()
    for s in range(1, 6):
        walk = price[symbol == s]
        assert np.array_equal(np.diff(walk), np.ones(len(walk) - 1, dtype=np.int64))


def test_symbols_and_volumes_are_uniform() -> None:
    table = generate(N, symbols=4, seed=6)
    counts = np.bincount(table.column("symbol").to_numpy())[1:]
    assert np.all(np.abs(counts / N - 0.25) < 0.01)
    volume = table.column("volume").to_numpy()
    assert abs(volume.mean() - 500.5) < 5
    assert abs(np.mean(volume < 150) - 149 / 1000) < 0.01


def test_empty_stream() -> None:
    table = generate(0, seed=1)
    assert table.num_rows == 0
    assert table.column_names == list(COLUMNS)


@pytest.mark.parametrize(
    "options",
    [
        {"events": -1},
        {"symbols": 0},
        {"increase_prob": 1.5},
        {"increase_prob": -0.1},
        {"price_range": (5, 1)},
        {"step": -1},
    ],
)
def test_bad_parameters_are_refused(options: dict[str, object]) -> None:
    params: dict[str, object] = {"events": 10, **options}
    with pytest.raises(ValueError):
        generate(**params)  # type: ignore[arg-type]
