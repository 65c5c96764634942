"""``kleene generate`` of the TPStream and match-window workloads (cars, situations,
chemo, trades): every format writes the library's table, and bad options are usage
errors that say what is wrong."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from kleene.datagen import cars, chemo, situations, trades
from kleene.io import read_table
from tests.cli.inprocess import run_main

WORKLOADS: dict[str, tuple[list[str], pa.Table, str]] = {
    "cars": (
        ["--cars", "12", "--duration", "200", "--aggressive", "0.5", "--seed", "2"],
        cars.generate(12, duration=200, aggressive=0.5, seed=2),
        "car reports (12 cars, 200 s, 50% aggressive, seed 2)",
    ),
    "situations": (
        ["-n", "700", "--names", "X,Y", "--ratio", "1:1", "--ratio", "1:5", "--seed", "3"],
        situations.generate(700, names=["X", "Y"], ratios=[(1, 1), (1, 5)], seed=3),
        "events of situation streams X, Y (seed 3, ratios 1:1 -> 1:5)",
    ),
    "chemo": (
        ["--patients", "4", "--days", "60", "--seed", "4"],
        chemo.generate(4, days=60, seed=4),
        "chemotherapy events (4 patients, 60 days, seed 4)",
    ),
    "trades": (
        ["-n", "900", "--symbols", "4", "--rate", "20", "--seed", "5"],
        trades.generate(900, symbols=4, rate=20, seed=5),
        "share trades (4 symbols, 20/s, seed 5)",
    ),
}


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_generate_writes_the_library_table(
    workload: str, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args, expected, what = WORKLOADS[workload]
    path = tmp_path / f"{workload}.{fmt}"
    done = run_main(monkeypatch, "generate", workload, *args, "-o", path)
    assert done.code == 0, done.stderr
    assert f"wrote {expected.num_rows:,} {what}" in done.stdout.decode()
    assert read_table(path).equals(expected)


def test_situations_attributes_and_default_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.parquet"
    done = run_main(monkeypatch, "generate", "situations", "-k", "4", "-n", "300", "-o", path)
    assert done.code == 0, done.stderr
    assert read_table(path).equals(situations.generate(300, attributes=4))


def test_situations_durations_and_gaps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "s.parquet"
    args = ["-n", "900", "--hold", "20-30", "--hold", "B=5-10", "--gap", "15-20"]
    done = run_main(monkeypatch, "generate", "situations", *args, "-o", path)
    assert done.code == 0, done.stderr
    expected = situations.generate(900, hold=(20, 30), holds={"B": (5, 10)}, gap=(15, 20))
    assert read_table(path).equals(expected)


def test_to_standard_output(monkeypatch: pytest.MonkeyPatch) -> None:
    done = run_main(
        monkeypatch, "generate", "chemo", "-p", "1", "-d", "30", "-o", "-", "--format", "jsonl"
    )
    assert done.code == 0, done.stderr
    lines = done.stdout.decode().splitlines()
    assert len(lines) == chemo.generate(1, days=30).num_rows
    assert '"PID":1' in lines[0].replace(" ", "")
    assert "chemotherapy events" in done.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["situations", "--ratio", "1:x"], "--ratio takes one weight per attribute"),
        (["situations", "--ratio", "1:2"], "one weight per attribute (3), got 1:2"),
        (["situations", "-k", "2", "--names", "X,Y,Z"], "2 attributes but 3 names"),
        (["situations", "--names", "A,,B"], "attribute name '' must be an identifier"),
        (["situations", "--hold", "10"], "--hold takes a range of whole seconds like 10-100"),
        (["situations", "--gap", "a-b"], "--gap takes a range"),
        (["situations", "--hold", "Q=1-2"], "'Q', which is not an attribute"),
        (["cars", "--aggressive", "1.5"], "aggressive share must be a probability"),
        (["trades", "--rate", "5000"], "must be <= 1000"),
        (["chemo", "--days", "0"], "must be at least 1"),
    ],
)
def test_bad_options_are_usage_errors(
    args: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "out.csv"
    done = run_main(monkeypatch, "generate", *args, "-o", path)
    assert done.code == 2
    assert message in done.stderr
    assert not path.exists()
