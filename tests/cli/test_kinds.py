"""The command line asks the kind registry only: a query file's kind is told from its
tokens (a comment never changes it), each kind's part is its ``Kind.cli`` entry, and
the flags are checked against the kind in one place."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from kleene import kinds
from kleene.cli import CliPart, build_parser
from kleene.cli._flags import FLAGS, compile_options
from kleene.cli._kinds import DEFAULT, part_of
from tests.cli.inprocess import run_main

COMMENTED = "// taken from the docs\nPATTERN SEQ(E a, E b) WITHIN 5\n"
BUILT_IN = ("sase", "program", "interval", "tpstream", "eventset")


def test_a_comment_with_from_does_not_make_a_tpstream_query(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The bug of issue 25: ``kleene explain`` read this file as a TPStream query."""
    query = tmp_path / "c.sase"
    query.write_text(COMMENTED, encoding="utf-8")
    done = run_main(monkeypatch, "explain", query)
    assert done.code == 0, done.stderr
    assert done.stdout.decode().startswith("engine: ")
    data = tmp_path / "e.jsonl"
    data.write_text(
        "".join(json.dumps({"id": i, "type": "E", "timestamp": i}) + "\n" for i in range(3))
    )
    out = tmp_path / "m.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", data, "-o", out, "-q")
    assert done.code == 0, done.stderr
    found = [json.loads(line)["ids"] for line in out.read_text().splitlines()]
    assert found == [{"a": [0], "b": [1]}, {"a": [1], "b": [2]}]


def test_every_built_in_kind_has_its_cli_part() -> None:
    for name in BUILT_IN:
        part = part_of(kinds.get(name))
        assert isinstance(part, CliPart) and part is not DEFAULT, name


def test_a_part_that_is_no_cli_part_is_refused() -> None:
    odd = kinds.Kind("odd", "odd query", "kleene.query:Query", cli="kleene.query:Query")
    with pytest.raises(TypeError, match="cli part of kind 'odd' is not a CliPart"):
        part_of(odd)


def _arguments(command: str) -> argparse.Namespace:
    if command == "run":
        return build_parser().parse_args(["run", "q", "-i", "e.jsonl", "-o", "m.jsonl"])
    return build_parser().parse_args(["explain", "q"])


@pytest.mark.parametrize("command", ["run", "explain"])
def test_every_flag_is_the_parsers_and_its_default_is_never_refused(command: str) -> None:
    args = _arguments(command)
    assert {f.dest for f in FLAGS} <= set(vars(_arguments("run"))) | set(vars(_arguments("x")))
    for name in BUILT_IN:
        kind = kinds.get(name)
        options = compile_options(kind, args)
        assert set(options) <= set(kind.options()), name


def test_the_defaults_of_run_reach_the_query() -> None:
    options = compile_options(kinds.get("sase"), _arguments("run"))
    assert options["time_field"] == "timestamp" and options["max_matches"] == 10_000_000
    assert "strategy" not in options and "output" not in options
    interval = compile_options(kinds.get("interval"), _arguments("run"))
    assert interval["engine"] == "auto" and interval["lower_field"] == "lower"
    assert interval["max_runs"] == 1_000_000 and interval["max_matches"] == 10_000_000


def test_the_time_models_are_the_registrys() -> None:
    for time in kinds.time_models():
        assert build_parser().parse_args(["explain", "q", "--time", time]).time == time
    with pytest.raises(SystemExit):
        build_parser().parse_args(["explain", "q", "--time", "fuzzy"])


def test_png_is_refused_for_a_kind_that_does_not_draw_before_anything_is_printed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query = tmp_path / "q.ses"
    query.write_text("PATTERN SEQ({A a, B b}, C c) WITHIN 5\n", encoding="utf-8")
    done = run_main(monkeypatch, "explain", query, "--png", tmp_path / "q.png")
    assert done.code == 2 and done.stdout == b""
    assert done.stderr == (
        "kleene: error: --png does not apply to an event-set pattern; it applies to a "
        "TPStream query, a SASE+ program and a SASE+ query\n"
    )


def test_a_refusal_names_the_kinds_that_take_the_flag_and_their_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query = tmp_path / "q.tps"
    query.write_text("FROM S DEFINE A AS S.x = 1, B AS S.x = 2 PATTERN A before B WITHIN 5\n")
    done = run_main(monkeypatch, "explain", query, "--strategy", "skip-till-any-match")
    assert done.code == 2
    assert done.stderr == (
        "kleene: error: --strategy does not apply to a TPStream query; it applies to a "
        "SASE+ program and a SASE+ query and to a query over interval events "
        "(--time interval)\n"
    )


def test_a_kinds_note_says_why(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    query = tmp_path / "q.sase"
    query.write_text("PATTERN SEQ(A a, B b) WITHIN 5\n")
    data = tmp_path / "e.jsonl"
    data.write_text("")
    done = run_main(
        monkeypatch, "run", query, "-i", data, "-o", tmp_path / "m.jsonl",
        "--time", "interval", "--allowed-lateness", "2",
    )  # fmt: skip
    assert done.code == 2
    assert (
        "--allowed-lateness does not apply to a query over interval events: the arrival "
        "order of interval events is checked against their bounds" in done.stderr
    )


def test_a_kind_refused_by_its_time_model_names_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    query = tmp_path / "q.tps"
    query.write_text("FROM S DEFINE A AS S.x = 1, B AS S.x = 2 PATTERN A before B WITHIN 5\n")
    done = run_main(monkeypatch, "explain", query, "--time", "interval")
    assert done.code == 2
    assert f"{query}: this text is a TPStream query, which takes time=" in done.stderr


SPARK_CASES = [
    ("PATTERN SEQ(A a, B b) WITHIN 5", (), "Query"),
    ("PATTERN SEQ(A a, B b) WITHIN 5", ("--time", "interval"), "IntervalQuery"),
    ("PATTERN SEQ({A a, B b}, C c) WITHIN 5", (), "SesQuery"),
    ("FROM S DEFINE A AS S.x = 1, B AS S.x = 2 PATTERN A before B WITHIN 5", (), "TemporalQuery"),
]


@pytest.mark.parametrize(("text", "extra", "cls"), SPARK_CASES)
@pytest.mark.parametrize("columns", [["id", "type", "timestamp", "lower", "upper", "x"], ["id"]])
def test_engine_spark_runs_the_kinds_spark_part(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    text: str,
    extra: tuple[str, ...],
    cls: str,
    columns: list[str],
) -> None:
    """``--engine spark`` hands the query to its kind's runner, with the kind's check
    of a DataFrame's columns (here a stand-in for the Spark pipeline)."""
    import kleene.cli._spark

    seen: list[object] = []

    def pipeline(*args: object, check: Callable[[object], None]) -> None:
        check(SimpleNamespace(columns=columns))
        seen.append(args[1])

    monkeypatch.setattr(kleene.cli._spark, "run_spark", pipeline)
    query, data = tmp_path / "q.txt", tmp_path / "e.jsonl"
    query.write_text(text)
    data.write_text('{"id": 1, "type": "A", "timestamp": 1}\n')
    out = tmp_path / "m.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", data, "-o", out, "--engine", "spark", *extra)
    if len(columns) > 1 or cls == "TemporalQuery":  # TPStream rejects events one by one
        assert done.code == 0, done.stderr
        assert [type(q).__name__ for q in seen] == [cls]
    else:
        assert done.code == 1 and "type" in done.stderr and not seen
