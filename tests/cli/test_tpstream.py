"""``kleene run`` and ``kleene explain`` with TPStream queries: the aggressive-driver
query of docs/semantics.md over the two cars of tests/tpstream/test_runtime.py from CSV,
JSON lines and Parquet; the time-line picture of ``--png``; options that do not apply."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.cli.inprocess import run_main
from tests.cli.support import read_jsonl, read_parquet_matches
from tests.tpstream.test_runtime import DRIVERS, SPEED, cars


def _files(tmp_path: Path, source: str, rows: list[dict] | None = None) -> tuple[Path, Path]:
    query = tmp_path / "drivers.tps"
    query.write_text(DRIVERS + "\n", encoding="utf-8")
    frame = pd.DataFrame(cars() if rows is None else rows)
    path = tmp_path / f"cars.{source}"
    if source == "csv":
        frame.to_csv(path, index=False)
    elif source == "jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path, index=False)
    return query, path


# docs/semantics.md's worked example: car 1 accelerates over [1, 4), speeds over
# [2, 8) and brakes from 6; the match is known at 8, C still going on (no end yet).
EXPECTED = {
    "situations": {
        "A": {"start": 1, "end": 4},
        "B": {"start": 2, "end": 8},
        "C": {"start": 6, "end": None},
    },
    "partition": [1],
    "time": 8,
    "detected": 8,
    "id": 1,
    "avg_speed": sum(SPEED[2:8]) / 6,
    "b_length": 6,
}


@pytest.mark.parametrize("source", ["csv", "jsonl", "parquet"])
@pytest.mark.parametrize("target", ["jsonl", "parquet"])
def test_run_writes_the_aggressive_driver(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: str, target: str
) -> None:
    query, data = _files(tmp_path, source)
    out = tmp_path / f"out.{target}"
    done = run_main(monkeypatch, "run", query, "--input", data, "-o", out, "-q")
    assert done.code == 0, done.stderr
    got = read_jsonl(out) if target == "jsonl" else read_parquet_matches(out)
    assert got == [EXPECTED]


def test_run_writes_rejected_events_with_their_reasons(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    rows = cars()
    rows[4] = dict(rows[4], speed=None)  # car 1 at time 3: no speed
    rows.append(dict(rows[-1]))  # a repeated time in car 2's partition
    query, data = _files(tmp_path, "jsonl", rows)
    out, rejected = tmp_path / "out.jsonl", tmp_path / "rejected.jsonl"
    done = run_main(
        monkeypatch, "run", query, "--input", data, "-o", out, "--rejected", rejected, "-q"
    )
    assert done.code == 0, done.stderr
    reasons = {r["position"]: r["reason"] for r in read_jsonl(rejected)}
    assert set(reasons) == {4, 20}
    assert "speed" in reasons[4] and "duplicate time" in reasons[20]


def test_an_empty_result_has_the_match_columns(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query, data = _files(tmp_path, "parquet", [r for r in cars() if r["car_id"] == 2])
    out = tmp_path / "out.parquet"
    assert run_main(monkeypatch, "run", query, "--input", data, "-o", out, "-q").code == 0
    assert pd.read_parquet(out).columns.tolist() == ["situations", "partition", "time", "detected"]


def test_explain_shows_situations_and_the_evaluation_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query, _ = _files(tmp_path, "csv")
    done = run_main(monkeypatch, "explain", query)
    assert done.code == 0, done.stderr
    text = done.stdout.decode()
    assert "B: CS.speed > 70 [AT LEAST 4, AT MOST 30]" in text
    assert "evaluation order: A -> B -> C (estimated cost" in text
    assert "next best" in text


def test_explain_png_draws_the_time_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    query, _ = _files(tmp_path, "csv")
    picture = tmp_path / "drivers.png"
    done = run_main(monkeypatch, "explain", "--png", picture, query)
    assert done.code == 0, done.stderr
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"pattern drawn to {picture}" in done.stdout.decode()


def test_explain_png_of_an_unsatisfiable_pattern_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query = tmp_path / "cycle.tps"
    query.write_text(
        "FROM S DEFINE A AS S.x = 0, B AS S.x = 1, C AS S.x = 2\n"
        "PATTERN A before B AND B before C AND C before A WITHIN 10\n",
        encoding="utf-8",
    )
    picture = tmp_path / "cycle.png"
    done = run_main(monkeypatch, "explain", "--png", picture, query)
    assert done.code != 0
    assert "no intervals satisfy every constraint" in done.stderr
    assert not picture.exists()


@pytest.mark.parametrize("option", [["--strategy", "skip-till-any-match"], ["--non-overlap"]])
def test_point_query_options_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, option: list[str]
) -> None:
    query, data = _files(tmp_path, "csv")
    out = tmp_path / "out.jsonl"
    done = run_main(monkeypatch, "run", query, "--input", data, "-o", out, *option)
    assert done.code != 0
    assert f"{option[0]} does not apply to a TPStream query" in done.stderr


def test_max_matches_stops_a_runaway_pattern(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.tpstream.test_limits import RUNAWAY, everything, stream

    query = tmp_path / "runaway.tps"
    query.write_text(RUNAWAY + "\n", encoding="utf-8")
    data = tmp_path / "events.jsonl"
    pd.DataFrame(stream(10)).to_json(data, orient="records", lines=True)
    out = tmp_path / "out.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", data, "-o", out, "--max-matches", "12")
    assert done.code == 1
    assert "max_matches=12" in done.stderr and "--max-matches" in done.stderr
    expected = [(m.situations["A"].start, m.situations["B"].start) for m in everything(10)]
    got = [(r["situations"]["A"]["start"], r["situations"]["B"]["start"]) for r in read_jsonl(out)]
    assert got == expected[:12]
    unlimited = run_main(monkeypatch, "run", query, "-i", data, "-o", out, "--max-matches", "0")
    assert unlimited.code == 0, unlimited.stderr
    assert len(read_jsonl(out)) == 55
