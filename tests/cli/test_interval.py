"""``kleene run`` and ``kleene explain`` with ``--time interval`` (VLDB 2010 events)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.cli.inprocess import run_main
from tests.cli.support import read_jsonl, read_parquet_matches

QUERY = "PATTERN SEQ(A a, B b)\nWHERE a.v < b.v\nWITHIN 10\nRETURN a.v AS av\n"
# a in [0, 2] and b in [1, 3], uniform: a < b in 6 of the 9 worlds (confidence 2/3);
# event 3 has lower > upper and is rejected
EVENTS = pd.DataFrame(
    {
        "type": ["A", "B", "B", "C"],
        "id": [1, 2, 3, 4],
        "lower": [0, 1, 5, 2],
        "upper": [2, 3, 4, 2],
        "v": [1, 5, 7, 0],
    }
)
WANT = [
    {
        "ids": {"a": [1], "b": [2]},
        "start": 0,
        "end": 3,
        "partition": [],
        "confidence": pytest.approx(2 / 3, abs=1e-12),
        "av": 1,
    }
]


def _write(frame: pd.DataFrame, path: Path) -> Path:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path, index=False)
    return path


@pytest.mark.parametrize("source", ["csv", "jsonl", "parquet"])
@pytest.mark.parametrize("target", ["jsonl", "parquet"])
def test_a_round_trip_writes_signature_range_confidence_and_rejected(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, source: str, target: str
) -> None:
    query = tmp_path / "q.sase"
    query.write_text(QUERY)
    events = _write(EVENTS, tmp_path / f"events.{source}")
    out = tmp_path / f"out.{target}"
    done = run_main(
        monkeypatch, "run", query, "--input", events, "--time", "interval", "-o", out, "-q"
    )
    assert done.code == 0, done.stderr
    got = read_jsonl(out) if target == "jsonl" else read_parquet_matches(out)
    assert got == WANT
    rejected = read_jsonl(tmp_path / f"out.{target}.rejected.jsonl")
    assert [(r["id"], r["reason"]) for r in rejected] == [
        (3, "lower bound 5 is after upper bound 4")
    ]


def test_uncertainty_u_max_confidence_and_engine_options(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """timestamp 1 +- 1 and 2 +- 1 are the intervals above; --confidence 0.7 drops the
    2/3 result, 0.6 keeps it, under either framework; --u-max 1 rejects both (2 long)."""
    query = tmp_path / "q.sase"
    query.write_text(QUERY)
    frame = pd.DataFrame({"type": ["A", "B"], "id": [1, 2], "timestamp": [1, 2], "v": [1, 5]})
    events = _write(frame, tmp_path / "e.csv")
    base = ("run", query, "--input", events, "--time", "interval", "--uncertainty", "1", "-q")
    for engine in ("points", "events"):
        for threshold, count in (("0.6", 1), ("0.7", 0)):
            out = tmp_path / f"{engine}{threshold}.jsonl"
            args = (*base, "--engine", engine, "--confidence", threshold, "-o", out)
            assert run_main(monkeypatch, *args).code == 0
            got = read_jsonl(out)
            assert len(got) == count and all(r["ids"] == WANT[0]["ids"] for r in got)
    out = tmp_path / "short.jsonl"
    assert run_main(monkeypatch, *base, "--u-max", "1", "-o", out).code == 0
    assert read_jsonl(out) == []
    assert len(read_jsonl(tmp_path / "short.jsonl.rejected.jsonl")) == 2


def test_an_empty_parquet_result_has_the_confidence_column(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import pyarrow.parquet as pq

    query = tmp_path / "q.sase"
    query.write_text("PATTERN SEQ(A a, B b)")
    events = _write(EVENTS[EVENTS.type == "C"], tmp_path / "e.parquet")
    out = tmp_path / "out.parquet"
    assert (
        run_main(monkeypatch, "run", query, "-i", events, "--time", "interval", "-o", out).code == 0
    )
    schema = pq.read_schema(out)
    assert schema.field("confidence").type == "double" and pq.read_table(out).num_rows == 0


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (
            ("--u-max", "3"),
            2,
            "--u-max does not apply to a SASE+ query; it applies to a query over interval "
            "events (--time interval)",
        ),
        (
            ("--engine", "events"),
            2,
            "--engine events does not apply to a SASE+ query; it applies to a query over "
            "interval events (--time interval)",
        ),
        (("--time", "interval", "--lower-field", "lo"), 1, "'lo'"),
        (("--time", "interval", "--allowed-lateness", "3"), 2, "--allowed-lateness does not"),
        (("--time", "interval", "--confidence", "2"), 2, "confidence must lie between 0 and 1"),
        (("--time", "interval", "--max-runs", "1"), 1, "max_runs=1 "),
        (("--time", "interval", "--max-matches", "0"), 0, ""),
    ],
)
def test_exit_codes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, args: tuple[str, ...], code: int, message: str
) -> None:
    query = tmp_path / "q.sase"
    query.write_text(QUERY)
    events = _write(EVENTS, tmp_path / "e.parquet")
    done = run_main(monkeypatch, "run", query, "-i", events, "-o", tmp_path / "o.jsonl", *args)
    assert done.code == code, done.stderr
    assert message in done.stderr


def test_explain_says_which_framework_and_why(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query = tmp_path / "q.sase"
    query.write_text(QUERY)
    done = run_main(monkeypatch, "explain", query, "--time", "interval", "--u-max", "5")
    assert done.code == 0, done.stderr
    text = done.stdout.decode()
    assert "U_max 5" in text and "engine: events" in text and "query order" in text
    done = run_main(monkeypatch, "explain", query, "--time", "interval", "--engine", "points")
    assert "engine: points" in done.stdout.decode() and "asked for" in done.stdout.decode()
