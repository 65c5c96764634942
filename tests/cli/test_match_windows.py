"""``kleene run|explain --match-windows``: the CLI form of ``kleene.compile(...,
match_windows=True)``; the same matches as without it, refused outside its sound case."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.inprocess import run_main
from tests.cli.support import read_jsonl

SEQ = "PATTERN SEQ(A a, B b, C c) WHERE skip_till_any_match AND [sym] WITHIN 5"


def _events(path: Path) -> Path:
    # per symbol x: a complete A, B, C within 5; per symbol y: a C too late for its A
    rows = [
        ("A", "x", 0),
        ("A", "y", 1),
        ("B", "x", 2),
        ("B", "y", 3),
        ("C", "x", 4),
        ("A", "x", 20),
        ("B", "x", 22),
        ("C", "y", 30),
        ("C", "x", 24),
    ]
    rows.sort(key=lambda r: r[2])
    path.write_text(
        "".join(
            json.dumps({"id": i, "type": t, "sym": s, "timestamp": ts}) + "\n"
            for i, (t, s, ts) in enumerate(rows)
        )
    )
    return path


def test_match_windows_writes_the_same_matches(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query = tmp_path / "q.sase"
    query.write_text(SEQ)
    data = _events(tmp_path / "events.jsonl")
    plain, windowed = tmp_path / "plain.jsonl", tmp_path / "windows.jsonl"
    assert run_main(monkeypatch, "run", query, "-i", data, "-o", plain, "-q").code == 0
    done = run_main(monkeypatch, "run", query, "-i", data, "-o", windowed, "-q", "--match-windows")
    assert done.code == 0, done.stderr
    found = read_jsonl(windowed)
    assert found == read_jsonl(plain)
    assert len(found) == 2  # x at 0-4 and x at 20-24; y's C comes too late


def test_explain_says_match_windows_apply(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    query = tmp_path / "q.sase"
    query.write_text(SEQ)
    done = run_main(monkeypatch, "explain", query, "--match-windows")
    assert done.code == 0, done.stderr
    assert "match windows:" in done.stdout.decode()
    assert "match windows:" not in run_main(monkeypatch, "explain", query).stdout.decode()


@pytest.mark.parametrize(
    ("text", "extra", "says"),
    [
        ("PATTERN SEQ(A a, !(B b), C c) WITHIN 5", (), "negated component"),
        (
            SEQ,
            ("--time", "interval", "--uncertainty", "1"),
            "--match-windows does not apply to a query over interval events",
        ),
        (
            "PATTERN SEQ({A a, B b}, {C c}) WITHIN 5",
            (),
            "--match-windows does not apply to an event-set",
        ),
    ],
)
def test_match_windows_outside_its_sound_case_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, text: str, extra: tuple[str, ...], says: str
) -> None:
    query = tmp_path / "q.sase"
    query.write_text(text)
    data = _events(tmp_path / "events.jsonl")
    out = tmp_path / "out.jsonl"
    done = run_main(
        monkeypatch, "run", query, "-i", data, "-o", out, "-q", "--match-windows", *extra
    )
    assert done.code == 2
    assert says in done.stderr
    assert "Traceback" not in done.stderr
