"""``kleene run`` and ``kleene explain`` with event-set patterns (match-window paper):
Q1 over the Chemo events of Figure 1 from CSV, JSON lines and Parquet; the options that
choose algorithm A and the pre-processing; options that do not apply are refused."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import kleene
from kleene.io.records import match_order
from tests.cli.inprocess import run_main
from tests.cli.support import read_jsonl, read_parquet_matches
from tests.eventsets.chemo import Q1, events

FIELDS = ("--type-field", "L", "--time-field", "T", "--time-unit", "d")


def _files(tmp_path: Path, source: str) -> tuple[Path, Path]:
    query = tmp_path / "q1.ses"
    query.write_text(Q1 + "\n", encoding="utf-8")
    frame = pd.DataFrame(events())
    path = tmp_path / f"chemo.{source}"
    if source == "csv":
        frame.to_csv(path, index=False)
    elif source == "jsonl":
        frame.to_json(path, orient="records", lines=True, force_ascii=False)
    else:
        frame.to_parquet(path, index=False)
    return query, path


def _expected() -> list[dict]:
    """The oracle-checked matches of Q1 (tests/eventsets/test_chemo_oracle.py) as
    records: ids per variable (lists, also for single variables), start and end times,
    the partition (the patient, PID: Q1's partitioning attribute)."""
    q = kleene.compile(Q1, type_field="L", time_field="T", time_unit="d", preprocessing="none")
    records = [
        {"ids": {v: list(ids) for v, ids in m.ids().items()}, "start": m.start, "end": m.end}
        for m in q.run(events())
    ]
    pids = {e["id"]: e["PID"] for e in events()}
    return sorted(({**r, "partition": [pids[r["ids"]["c"][0]]]} for r in records), key=match_order)


@pytest.mark.parametrize("source", ["csv", "jsonl", "parquet"])
@pytest.mark.parametrize("target", ["jsonl", "parquet"])
def test_run_writes_q1s_eleven_matches(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: str, target: str
) -> None:
    query, data = _files(tmp_path, source)
    out = tmp_path / f"out.{target}"
    done = run_main(monkeypatch, "run", query, "--input", data, "-o", out, *FIELDS, "-q")
    assert done.code == 0, done.stderr
    got = read_jsonl(out) if target == "jsonl" else read_parquet_matches(out)
    assert len(got) == 11
    assert sorted(got, key=match_order) == _expected()
    first = next(r for r in got if r["ids"] == {"c": ["e1"], "p": ["e3", "e9"], "b": ["e11"]})
    assert (first["start"], first["end"]) == (3, 17)


@pytest.mark.parametrize("algorithm", ["automaton", "jointree"])
@pytest.mark.parametrize("pre", ["none", "f", "fp", "fpc"])
def test_every_algorithm_and_preprocessing_write_the_same_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, algorithm: str, pre: str
) -> None:
    query, data = _files(tmp_path, "csv")
    out = tmp_path / "out.jsonl"
    options = ("--algorithm", algorithm, "--preprocessing", pre)
    done = run_main(monkeypatch, "run", query, "--input", data, "-o", out, *FIELDS, *options)
    assert done.code == 0, done.stderr
    assert sorted(read_jsonl(out), key=match_order) == _expected()
    assert f"event sets, {algorithm}, preprocessing {pre}" in done.stdout.decode()


def test_explain_says_which_steps_apply(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    query, _ = _files(tmp_path, "csv")
    done = run_main(monkeypatch, "explain", query)
    assert done.code == 0, done.stderr
    text = done.stdout.decode()
    assert "algorithm: automaton" in text and "preprocessing: fpc" in text
    assert "partitioning: one window per PID" in text
    options = ("--preprocessing", "f", "--algorithm", "jointree")
    done = run_main(monkeypatch, "explain", query, *options)
    assert "partitioning: off" in done.stdout.decode()
    assert "algorithm: jointree" in done.stdout.decode()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (("--strategy", "skip-till-any-match"), "--strategy does not apply to an event-set"),
        (("--allowed-lateness", "2"), "--allowed-lateness does not apply"),
        (("--preprocessing", "fx"), "unknown pruning 'fx'"),
    ],
)
def test_options_that_do_not_apply_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, options: tuple[str, ...], words: str
) -> None:
    query, data = _files(tmp_path, "csv")
    out = tmp_path / "out.jsonl"
    done = run_main(monkeypatch, "run", query, "--input", data, "-o", out, *FIELDS, *options)
    assert done.code == 2 and words in done.stderr
    assert not out.exists()


def test_max_runs_bounds_an_event_set_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    query, data = _files(tmp_path, "csv")
    out = tmp_path / "out.jsonl"
    done = run_main(
        monkeypatch, "run", query, "--input", data, "-o", out, *FIELDS, "--max-runs", "1"
    )
    assert done.code == 1 and "max_runs=1" in done.stderr


def test_a_point_query_refuses_the_event_set_options(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query = tmp_path / "q.sase"
    query.write_text("PATTERN SEQ(A a, B b) WITHIN 5\n")
    done = run_main(monkeypatch, "explain", query, "--algorithm", "jointree")
    assert (
        done.code == 2
        and "--algorithm does not apply to a SASE+ query; it applies to an event-set pattern"
        in done.stderr
    )


def test_an_input_without_the_time_column_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query, _ = _files(tmp_path, "csv")
    data = tmp_path / "e.csv"
    pd.DataFrame(events()).drop(columns=["T"]).to_csv(data, index=False)
    out = tmp_path / "out.jsonl"
    done = run_main(monkeypatch, "run", query, "--input", data, "-o", out, *FIELDS)
    assert done.code != 0 and "no column 'T' (time_field)" in done.stderr


def test_max_matches_stops_the_run_with_the_matches_before_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query, data = _files(tmp_path, "csv")
    out = tmp_path / "out.jsonl"
    done = run_main(
        monkeypatch, "run", query, "--input", data, "-o", out, *FIELDS, "--max-matches", "4"
    )
    assert done.code != 0 and "max_matches=4" in done.stderr
    assert len(read_jsonl(out)) == 4
    done = run_main(
        monkeypatch, "run", query, "--input", data, "-o", out, *FIELDS, "--max-matches", "0"
    )
    assert done.code == 0 and len(read_jsonl(out)) == 11  # 0: no limit
