"""``kleene run`` and ``kleene explain`` with a program (DEFINE and UNION)."""

from __future__ import annotations

from pathlib import Path

import pytest

import kleene
from kleene.datagen.stock import generate
from kleene.io import write_table
from tests.cli.inprocess import run_main
from tests.cli.support import EXAMPLES, canonical, expected_record, read_jsonl

RISES = EXAMPLES / "stock_rises.sase"


def test_run_writes_the_program_matches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    events = generate(3_000, symbols=2, increase_prob=0.7, seed=3)
    source = tmp_path / "stock.parquet"
    write_table(events, source)
    out = tmp_path / "rises.jsonl"
    done = run_main(monkeypatch, "run", RISES, "--input", source, "--output", out, "--quiet")
    assert done.code == 0, done.stderr
    expected = kleene.compile_program(RISES.read_text()).run(events)
    assert expected, "the example finds matches on this stream"
    assert canonical(read_jsonl(out)) == canonical(expected_record(m) for m in expected)


def test_programs_refuse_the_spark_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "stock.csv"
    write_table(generate(10, symbols=1, increase_prob=0.7, seed=1), source)
    done = run_main(
        monkeypatch,
        "run",
        RISES,
        "--input",
        source,
        "--output",
        tmp_path / "o.jsonl",
        "--engine",
        "spark",
    )
    assert done.code == 2
    assert "runs on the local engine only" in done.stderr


def test_explain_shows_every_statement(monkeypatch: pytest.MonkeyPatch) -> None:
    done = run_main(monkeypatch, "explain", RISES)
    assert done.code == 0, done.stderr
    assert done.stdout.decode().count("== DEFINE Rise ==") == 1
    assert done.stdout.decode().count("== UNION ==") == 1
    assert "== RETURNED ==" in done.stdout.decode()
