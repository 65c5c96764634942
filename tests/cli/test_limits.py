"""``kleene run --max-runs / --max-matches``: an exploding query stops with exit code 1
and a message naming the limit, and the matches found before it stay written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import kleene
from kleene.cli import CLI_MAX_MATCHES, build_parser
from kleene.io import MatchSink
from tests.cli.inprocess import run_main
from tests.cli.support import expected_record, read_jsonl

ANY = "PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match { }"


def _files(tmp_path: Path, events: list[dict[str, Any]]) -> tuple[Path, Path]:
    query = tmp_path / "any.sase"
    query.write_text(ANY)
    data = tmp_path / "events.jsonl"
    data.write_text("".join(json.dumps(e) + "\n" for e in events))
    return query, data


def _ab(n: int) -> list[dict[str, Any]]:
    a = [{"type": "A", "timestamp": i, "id": i} for i in range(n)]
    return [*a, {"type": "B", "timestamp": n, "id": n}]


def test_max_matches_keeps_exactly_the_matches_before_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = _ab(12)  # 4,095 matches end at the B event
    query, data = _files(tmp_path, events)
    out = tmp_path / "out.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", data, "-o", out, "--max-matches", "100", "-q")
    assert done.code == 1
    assert "max_matches=100" in done.stderr and "--max-matches" in done.stderr
    assert f"100 matches found before the limit are in {out}" in done.stderr
    # the same matches, in the same order, as the first 100 the matcher hands out
    found: list[Any] = []
    m = kleene.compile(ANY, max_matches=None).matcher(on_matches=found.extend)
    m.push(events)
    m.flush()
    assert read_jsonl(out) == [expected_record(x) for x in found[:100]]


def test_max_runs_stops_growing_live_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # no B: every A starts a run that collects every later A (quadratic state)
    query, data = _files(tmp_path, _ab(300)[:-1])
    out = tmp_path / "out.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", data, "-o", out, "--max-runs", "500", "-q")
    assert done.code == 1
    assert "max_runs=500" in done.stderr and "--max-runs" in done.stderr
    assert "Traceback" not in done.stderr
    assert out.exists() and read_jsonl(out) == []


def test_max_matches_zero_is_no_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    query, data = _files(tmp_path, _ab(12))
    out = tmp_path / "out.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", data, "-o", out, "--max-matches", "0", "-q")
    assert done.code == 0, done.stderr
    assert len(read_jsonl(out)) == 2**12 - 1
    # and without the option the CLI default applies (documented in README)
    args = build_parser().parse_args(["run", str(query), "-i", "x.jsonl", "-o", "y.jsonl"])
    assert args.max_matches == CLI_MAX_MATCHES
    assert args.max_runs == kleene.compile(ANY).config.max_runs


def test_a_jsonl_sink_writes_matches_as_they_come(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    matches = kleene.compile(ANY).run(_ab(3))
    with MatchSink(path) as sink:
        sink.add(matches[:2])
        # on disk before the sink is closed, in the temporary file renamed at the end:
        # a long run's output grows there instead of in memory
        (partial,) = tmp_path.glob(".kleene-*")
        assert read_jsonl(partial) == [expected_record(m) for m in matches[:2]]
        sink.add(matches[2:])
        assert len(read_jsonl(partial)) == len(matches)
        assert not path.exists()
    assert read_jsonl(path) == [expected_record(m) for m in matches]
