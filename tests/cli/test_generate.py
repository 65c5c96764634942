"""``kleene generate``: deterministic files in every format (the command in a process of
its own for the library table and the Hadoop trace, :func:`kleene.cli.main` in process
for the rest)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kleene
from kleene.datagen.hadoop import generate as generate_hadoop
from kleene.datagen.stock import generate
from kleene.io import read_table
from tests.cli.inprocess import run_main
from tests.cli.support import ROOT
from tests.cli.support import kleene as run_kleene

ARGS = ("--events", "3000", "--symbols", "3", "--increase-prob", "0.6")


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_generate_writes_the_library_table(fmt: str, tmp_path: Path) -> None:
    path = tmp_path / f"stock.{fmt}"
    done = run_kleene("generate", "stock", *ARGS, "--seed", "4", "-o", path)
    assert done.returncode == 0, done.stderr
    assert "3,000" in done.stdout
    expected = generate(3000, symbols=3, increase_prob=0.6, seed=4)
    assert read_table(path).equals(expected)


def test_same_seed_same_bytes_different_seed_different_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = {name: tmp_path / f"{name}.jsonl" for name in ("one", "two", "other")}
    seeds = {"one": "8", "two": "8", "other": "9"}
    for name, path in paths.items():
        done = run_main(monkeypatch, "generate", "stock", *ARGS, "--seed", seeds[name], "-o", path)
        assert done.code == 0, done.stderr
    assert paths["one"].read_bytes() == paths["two"].read_bytes()
    assert paths["one"].read_bytes() != paths["other"].read_bytes()


def test_format_flag_overrides_the_extension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "stock.out"
    done = run_main(monkeypatch, "generate", "stock", *ARGS, "-o", path, "--format", "parquet")
    assert done.code == 0, done.stderr
    assert path.read_bytes()[:4] == b"PAR1"


def test_generate_hadoop_trace_runs_a_monitoring_query(tmp_path: Path) -> None:
    path = tmp_path / "trace.parquet"
    done = run_kleene("generate", "hadoop", "--jobs", "5", "--seed", "3", "-o", path)
    assert done.returncode == 0, done.stderr
    table = read_table(path)
    assert table.equals(generate_hadoop(5, seed=3))
    query = (ROOT / "bench" / "queries" / "hadoop_q1.sase").read_text()
    # the trace's times are seconds
    assert len(kleene.compile(query, time_unit="s").run(table)) == 5  # one match per job


def test_generate_uncertain_and_imprecise_hadoop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kleene.datagen import uncertain

    path = tmp_path / "uncertain.parquet"
    done = run_main(monkeypatch, "generate", "uncertain", "-n", "500", "--delta", "2", "-o", path)
    assert done.code == 0, done.stderr
    assert "500 events with uncertainty intervals (delta 2)" in done.stdout.decode()
    assert read_table(path).equals(uncertain.generate(500, delta=2))
    path = tmp_path / "trace.parquet"
    done = run_main(monkeypatch, "generate", "hadoop", "--jobs", "2", "--imprecise", "-o", path)
    assert done.code == 0, done.stderr
    assert read_table(path).equals(uncertain.with_intervals(generate_hadoop(2)))
