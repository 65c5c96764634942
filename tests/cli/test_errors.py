"""Exit codes and messages of the ``kleene`` command when something is wrong.

0 success; 2 usage and query errors (with line, column and caret, no traceback);
1 failures while running (missing files, unreadable input). Two cases run the command
in a process of its own; the others run :func:`kleene.cli.main` in process (an
exception escaping it fails the test as a traceback would).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kleene.datagen.stock import generate
from kleene.io import write_table
from tests.cli.inprocess import run_main
from tests.cli.support import EXAMPLES
from tests.cli.support import kleene as run_kleene

RISING = EXAMPLES / "stock_rising.sase"


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("events") / "stock.csv"
    write_table(generate(200, seed=1), path)
    return path


def _caret_column(stderr: str) -> tuple[int, int, int]:
    """The line and column the message names, and the column the caret points at in the
    echoed query line."""
    named = re.search(r"line (\d+), column (\d+)", stderr)
    assert named, stderr
    lines = stderr.splitlines()
    caret_row = next(i for i, text in enumerate(lines) if text.strip() == "^")
    source, caret = lines[caret_row - 1], lines[caret_row]
    indent = len(source) - len(source.lstrip(" "))
    return int(named.group(1)), int(named.group(2)), caret.index("^") - indent + 1


def test_syntax_error_shows_line_column_and_caret(events: Path, tmp_path: Path) -> None:
    query = tmp_path / "bad.sase"
    query.write_text("PATTERN SEQ(Stock+ a[], Stock b)\nWHERE a[1].price > > 5\nWITHIN 10\n")
    done = run_kleene("run", query, "-i", events, "-o", tmp_path / "m.jsonl")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert str(query) in done.stderr
    line, column, caret = _caret_column(done.stderr)
    assert (line, column, caret) == (2, 20, 20)
    assert "WHERE a[1].price > > 5" in done.stderr
    assert not (tmp_path / "m.jsonl").exists()


def test_query_error_shows_where_the_unknown_variable_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    query = tmp_path / "unknown.sase"
    query.write_text("PATTERN SEQ(Stock a, Stock b)\nWHERE a.price < c.price\n")
    done = run_main(monkeypatch, "explain", query)
    assert done.code == 2
    assert "Traceback" not in done.stderr
    assert "'c'" in done.stderr
    line, column, caret = _caret_column(done.stderr)
    assert (line, column) == (2, 17) and caret == column


def test_missing_query_file_fails_with_exit_1(events: Path, tmp_path: Path) -> None:
    done = run_kleene("run", tmp_path / "nope.sase", "-i", events, "-o", tmp_path / "m.jsonl")
    assert done.returncode == 1
    assert "query file not found" in done.stderr and "Traceback" not in done.stderr


def test_missing_input_file_fails_with_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "missing.csv"
    done = run_main(monkeypatch, "run", RISING, "-i", missing, "-o", tmp_path / "m.jsonl")
    assert done.code == 1
    assert f"input file not found: {missing}" in done.stderr
    assert "Traceback" not in done.stderr


def test_bad_format_is_a_usage_error(
    events: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = run_main(
        monkeypatch, "run", RISING, "-i", events, "--format", "xml", "-o", tmp_path / "m.jsonl"
    )
    assert done.code == 2
    assert "invalid choice: 'xml'" in done.stderr


def test_unknown_extension_is_a_usage_error(
    events: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    odd = tmp_path / "events.txt"
    odd.write_bytes(events.read_bytes())
    done = run_main(monkeypatch, "run", RISING, "-i", odd, "-o", tmp_path / "m.jsonl")
    assert done.code == 2
    assert "give it with --input-format" in done.stderr and "Traceback" not in done.stderr


def test_unknown_output_extension_names_the_output_option(
    events: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = run_main(monkeypatch, "run", RISING, "-i", events, "-o", tmp_path / "m.out")
    assert done.code == 2
    assert "give it with --output-format" in done.stderr and "Traceback" not in done.stderr
    output = tmp_path / "m.out"
    done = run_main(
        monkeypatch, "run", RISING, "-i", events, "-o", output, "--output-format", "parquet"
    )
    assert done.code == 0, done.stderr
    assert output.read_bytes()[:4] == b"PAR1"


def test_csv_output_is_a_usage_error(
    events: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = run_main(monkeypatch, "run", RISING, "-i", events, "-o", tmp_path / "m.csv")
    assert done.code == 2
    assert ".jsonl or .parquet" in done.stderr


def test_unreadable_input_fails_with_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "Stock", "timestamp": 1}\n{"type": "Stock", "timestamp": \n')
    done = run_main(monkeypatch, "run", RISING, "-i", broken, "-o", tmp_path / "m.jsonl")
    assert done.code == 1
    assert "line 2" in done.stderr and "Traceback" not in done.stderr
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"not parquet at all")
    done = run_main(monkeypatch, "run", RISING, "-i", corrupt, "-o", tmp_path / "m.jsonl")
    assert done.code == 1
    assert "cannot read" in done.stderr and "Traceback" not in done.stderr


def test_missing_required_option_is_a_usage_error(
    events: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = run_main(monkeypatch, "run", RISING, "-i", events)
    assert done.code == 2
    assert "--output" in done.stderr


def test_bad_generator_parameter_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = run_main(
        monkeypatch, "generate", "stock", "--increase-prob", "1.5", "-o", tmp_path / "s.csv"
    )
    assert done.code == 2
    assert "increase probability" in done.stderr
    assert not (tmp_path / "s.csv").exists()


def test_failed_run_leaves_no_output_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json}\n")
    for name in ("m.jsonl", "m.parquet"):
        output = tmp_path / name
        done = run_main(monkeypatch, "run", RISING, "-i", broken, "-o", output)
        assert done.code == 1
        assert not output.exists()
        assert not (tmp_path / f"{name}.rejected.jsonl").exists()
