"""``kleene`` and its files: inputs it refuses to overwrite, outputs written whole or not
at all, Parquet dataset directories, JSON arrays, standard input and output, and the
errors for files it cannot read."""

from __future__ import annotations

import io
import json
import os
import stat
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

import kleene
from kleene.errors import EventError
from kleene.io import Format, FormatError, MatchSink, read_events, read_table, write_table
from kleene.io import readers as readers_module
from tests.cli.inprocess import run_main
from tests.cli.support import canonical, expected_record, read_jsonl
from tests.cli.support import kleene as run_kleene

QUERY = "PATTERN SEQ(A a, B b) WHERE skip_till_any_match AND a.x < b.x WITHIN 5"
EVENTS = [{"id": i, "type": "AB"[i % 3 % 2], "timestamp": i, "x": (i * 7) % 5} for i in range(40)]


def _expected(events: object = EVENTS) -> list[str]:
    matches = kleene.compile(QUERY).run(events)
    assert matches, "the query finds matches on these events"
    return canonical(expected_record(m) for m in matches)


@pytest.fixture
def query(tmp_path: Path) -> Path:
    path = tmp_path / "q.sase"
    path.write_text(QUERY)
    return path


@pytest.fixture
def events_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in EVENTS))
    return path


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".kleene-"))


# --- refusing to overwrite an input ------------------------------------------------------


def test_output_equal_to_the_input_is_refused(
    monkeypatch: pytest.MonkeyPatch, query: Path, events_jsonl: Path
) -> None:
    before = events_jsonl.read_bytes()
    done = run_main(monkeypatch, "run", query, "-i", events_jsonl, "-o", events_jsonl)
    assert done.code == 2
    assert f"--output {events_jsonl} is the input" in done.stderr
    assert events_jsonl.read_bytes() == before


def test_overwrite_through_links_and_other_spellings_is_refused(
    monkeypatch: pytest.MonkeyPatch, query: Path, events_jsonl: Path, tmp_path: Path
) -> None:
    before = events_jsonl.read_bytes()
    symlink = tmp_path / "link.jsonl"
    symlink.symlink_to(events_jsonl)
    hardlink = tmp_path / "hard.jsonl"
    os.link(events_jsonl, hardlink)
    dotted = tmp_path / "sub" / ".." / "events.jsonl"
    (tmp_path / "sub").mkdir()
    for output in (symlink, hardlink, dotted):
        done = run_main(monkeypatch, "run", query, "-i", events_jsonl, "-o", output)
        assert done.code == 2, output
        assert "is the input: refusing to overwrite it" in done.stderr
    done = run_main(
        monkeypatch,
        "run",
        query,
        "-i",
        events_jsonl,
        "-o",
        tmp_path / "m.jsonl",
        "--rejected",
        symlink,
    )
    assert done.code == 2 and "--rejected" in done.stderr
    assert events_jsonl.read_bytes() == before
    assert not (tmp_path / "m.jsonl").exists()


def test_query_file_output_directory_and_shared_outputs_are_refused(
    monkeypatch: pytest.MonkeyPatch, events_jsonl: Path, tmp_path: Path
) -> None:
    odd_query = tmp_path / "q.jsonl"
    odd_query.write_text(QUERY)
    done = run_main(monkeypatch, "run", odd_query, "-i", events_jsonl, "-o", odd_query)
    assert done.code == 2 and "is the query file" in done.stderr
    assert odd_query.read_text() == QUERY
    folder = tmp_path / "out.jsonl"
    folder.mkdir()
    done = run_main(monkeypatch, "run", odd_query, "-i", events_jsonl, "-o", folder)
    assert done.code == 2 and "is a directory" in done.stderr
    same = tmp_path / "m.jsonl"
    done = run_main(
        monkeypatch, "run", odd_query, "-i", events_jsonl, "-o", same, "--rejected", same
    )
    assert done.code == 2 and "name the same file" in done.stderr


# --- outputs through a temporary file ------------------------------------------------------


def test_a_failed_run_keeps_the_old_outputs_and_leaves_no_temporary_file(
    monkeypatch: pytest.MonkeyPatch, query: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"type": "A", "timestamp": 1}\n{"type": \n')
    for name in ("m.jsonl", "m.parquet"):
        output = tmp_path / name
        rejected = tmp_path / f"{name}.rejected.jsonl"
        output.write_bytes(b"old matches")
        rejected.write_bytes(b"old rejected")
        done = run_main(monkeypatch, "run", query, "-i", broken, "-o", output)
        assert done.code == 1
        assert output.read_bytes() == b"old matches"
        assert rejected.read_bytes() == b"old rejected"
    assert _leftovers(tmp_path) == []


def test_a_successful_run_replaces_the_old_output_keeping_its_permissions(
    monkeypatch: pytest.MonkeyPatch, query: Path, events_jsonl: Path, tmp_path: Path
) -> None:
    output = tmp_path / "m.jsonl"
    output.write_text("old\n")
    output.chmod(0o640)
    done = run_main(monkeypatch, "run", query, "-i", events_jsonl, "-o", output, "-q")
    assert done.code == 0, done.stderr
    assert canonical(read_jsonl(output)) == _expected()
    assert stat.S_IMODE(output.stat().st_mode) == 0o640
    assert _leftovers(tmp_path) == []


def test_a_new_output_gets_the_usual_permissions(
    monkeypatch: pytest.MonkeyPatch, query: Path, events_jsonl: Path, tmp_path: Path
) -> None:
    mask = os.umask(0o022)
    try:
        output = tmp_path / "m.parquet"
        done = run_main(monkeypatch, "run", query, "-i", events_jsonl, "-o", output, "-q")
    finally:
        os.umask(mask)
    assert done.code == 0, done.stderr
    assert stat.S_IMODE(output.stat().st_mode) == 0o644


def test_write_table_failing_midway_keeps_the_old_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "t.parquet"
    path.write_bytes(b"old")

    def broken(table: pa.Table, where: object) -> None:
        Path(str(where)).write_bytes(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(pq, "write_table", broken)
    with pytest.raises(OSError, match="disk full"):
        write_table(pa.table({"x": [1]}), path)
    assert path.read_bytes() == b"old"
    assert _leftovers(tmp_path) == []


def test_a_match_sink_writes_nothing_in_place_until_closed(tmp_path: Path) -> None:
    path = tmp_path / "m.jsonl"
    path.write_text("old\n")
    sink = MatchSink(path)
    sink.add(kleene.compile(QUERY).run(EVENTS))
    assert path.read_text() == "old\n"
    sink.close()
    assert canonical(read_jsonl(path)) == _expected()
    assert _leftovers(tmp_path) == []


# --- Parquet dataset directories --------------------------------------------------------


def test_a_parquet_dataset_directory_is_read_in_file_name_order(
    monkeypatch: pytest.MonkeyPatch, query: Path, tmp_path: Path
) -> None:
    table = pa.Table.from_pylist(EVENTS)
    folder = tmp_path / "events"
    folder.mkdir()
    # written out of name order; Spark's marker files are skipped
    pq.write_table(table.slice(20), folder / "part-00001.parquet")
    pq.write_table(table.slice(0, 20), folder / "part-00000.parquet")
    (folder / "_SUCCESS").write_bytes(b"")
    assert read_table(folder).equals(table)
    output = tmp_path / "m.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", folder, "-o", output, "-q")
    assert done.code == 0, done.stderr
    assert canonical(read_jsonl(output)) == _expected()


def test_a_directory_for_another_format_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, query: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "events.csv"
    folder.mkdir()
    (folder / "part-0.csv").write_text("type,timestamp\nA,1\n")
    with pytest.raises(EventError, match="only a Parquet dataset"):
        read_events(folder)
    done = run_main(monkeypatch, "run", query, "-i", folder, "-o", tmp_path / "m.jsonl")
    assert done.code == 1
    assert f"{folder} is a directory: only a Parquet dataset" in done.stderr


# --- JSON arrays -----------------------------------------------------------------------


def test_a_json_array_reads_like_json_lines(tmp_path: Path) -> None:
    mixed = [*EVENTS[:3], {"id": 3, "type": "B", "timestamp": 3, "x": "high"}]
    for records in (EVENTS, mixed):
        lines = tmp_path / "e.jsonl"
        lines.write_text("".join(json.dumps(e) + "\n" for e in records))
        array = tmp_path / "e.json"
        array.write_text("  \n" + json.dumps(records, indent=2))
        from_lines, from_array = read_events(lines), read_events(array)
        assert type(from_array) is type(from_lines)
        if isinstance(from_lines, pa.Table):
            assert from_array.equals(from_lines)
        else:
            assert from_array.equals(from_lines)
            assert from_array["x"].tolist() == [r["x"] for r in records]
    empty = tmp_path / "empty.json"
    empty.write_text("[]")
    assert read_table(empty).num_rows == 0


def test_a_json_array_runs_like_json_lines(
    monkeypatch: pytest.MonkeyPatch, query: Path, tmp_path: Path
) -> None:
    array = tmp_path / "events.json"
    array.write_text(json.dumps(EVENTS))
    output = tmp_path / "m.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", array, "-o", output, "-q")
    assert done.code == 0, done.stderr
    assert canonical(read_jsonl(output)) == _expected()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[{"type": "A"}, 5]', "element 2 of the array is not a JSON object"),
        ('[{"type": "A"},\n {"type": ', "line 2, column 11: not valid JSON"),
    ],
)
def test_bad_json_arrays_name_the_file_and_the_spot(
    text: str, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(EventError, match=message) as caught:
        read_events(path)
    assert str(path) in str(caught.value)


# --- files that cannot be read --------------------------------------------------------------


def _garbage(size: int) -> bytes:
    return bytes((i * 151 + 7) % 256 for i in range(size))


@pytest.mark.parametrize("name", ["events.csv", "events.jsonl", "events.json"])
def test_binary_input_is_named_and_never_echoed(
    name: str, monkeypatch: pytest.MonkeyPatch, query: Path, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_bytes(_garbage(3000))
    done = run_main(monkeypatch, "run", query, "-i", path, "-o", tmp_path / "m.jsonl")
    assert done.code == 1
    assert f"{path} is not" in done.stderr and "binary data" in done.stderr
    assert "\ufffd" not in done.stderr and "Traceback" not in done.stderr


def test_text_that_is_not_utf8_is_named(tmp_path: Path) -> None:
    early = tmp_path / "early.csv"
    early.write_bytes(b"type,timestamp\nA,1\n\xff\xfeB,2\n")
    with pytest.raises(EventError, match=r"early.csv is not UTF-8 text \(invalid byte at 19\)"):
        read_events(early)
    # past the bytes looked at first: pyarrow reads such a column as bytes
    late = tmp_path / "late.csv"
    rows = "".join(f"A,{t}\n" for t in range(20_000))
    late.write_bytes(b"type,timestamp\n" + rows.encode() + b"\xff,20000\n")
    with pytest.raises(
        EventError, match=r"late.csv: column 'type' is not UTF-8 text \(data row 20001\)"
    ):
        read_events(late)
    late_lines = tmp_path / "late.jsonl"
    body = "".join(json.dumps({"type": "A", "timestamp": t}) + "\n" for t in range(5_000))
    late_lines.write_bytes(body.encode() + b'{"type": "\xff", "timestamp": 1}\n')
    with pytest.raises(EventError, match=r"late.jsonl: field 'type' holds text that is not UTF-8"):
        read_events(late_lines)


def test_truncated_parquet_is_named(
    monkeypatch: pytest.MonkeyPatch, query: Path, tmp_path: Path
) -> None:
    whole = tmp_path / "whole.parquet"
    pq.write_table(pa.Table.from_pylist(EVENTS), whole)
    cut = tmp_path / "cut.parquet"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    done = run_main(monkeypatch, "run", query, "-i", cut, "-o", tmp_path / "m.jsonl")
    assert done.code == 1
    assert f"cannot read {cut} as parquet" in done.stderr and "Traceback" not in done.stderr


def test_an_unreadable_file_is_named(
    monkeypatch: pytest.MonkeyPatch, query: Path, events_jsonl: Path, tmp_path: Path
) -> None:
    # tests may run as root, whom file modes do not stop: deny at the open call instead
    real = pa.input_stream

    def denied(where: object, *args: object, **kwargs: object) -> object:
        if str(where) == str(events_jsonl):
            raise PermissionError(13, "Permission denied", str(where))
        return real(where, *args, **kwargs)

    monkeypatch.setattr(readers_module.pa, "input_stream", denied)
    with pytest.raises(EventError, match=f"cannot read {events_jsonl} as jsonl: Permission denied"):
        read_events(events_jsonl)
    done = run_main(monkeypatch, "run", query, "-i", events_jsonl, "-o", tmp_path / "m.jsonl")
    assert done.code == 1
    assert f"cannot read {events_jsonl} as jsonl: Permission denied" in done.stderr


def test_an_unreadable_query_file_is_named(
    monkeypatch: pytest.MonkeyPatch, events_jsonl: Path, tmp_path: Path
) -> None:
    query = tmp_path / "q.sase"
    query.write_bytes(b"PATTERN SEQ(A a, B b) WHERE a.x = '\xff'")
    done = run_main(monkeypatch, "explain", query)
    assert done.code == 1
    assert f"{query}: the query is not UTF-8 text" in done.stderr


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("empty.csv", b""),
        ("header.csv", b"id,type,timestamp,x\n"),
        ("empty.jsonl", b""),
        ("blank.jsonl", b"\n  \n"),
        ("empty.json", b"[]"),
    ],
)
def test_empty_inputs_hold_zero_events(
    name: str, content: bytes, monkeypatch: pytest.MonkeyPatch, query: Path, tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    output = tmp_path / "m.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", path, "-o", output)
    assert done.code == 0, done.stderr
    assert output.read_text() == ""
    assert "events read     │ 0" in done.stdout.decode()


def test_an_event_error_names_the_input(
    monkeypatch: pytest.MonkeyPatch, query: Path, tmp_path: Path
) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text('{"type": "A", "timestamp": 1}\n')

    def refuse(*args: object, **kwargs: object) -> object:
        raise EventError("events have no usable time column")

    import kleene.cli._run

    monkeypatch.setattr(kleene.cli._run, "read_events", refuse)
    done = run_main(monkeypatch, "run", query, "-i", path, "-o", tmp_path / "m.jsonl")
    assert done.code == 1
    assert f"{path}: events have no usable time column" in done.stderr


# --- standard input and output, format options, --version ---------------------------------


def test_standard_input_needs_its_format_and_is_read(
    monkeypatch: pytest.MonkeyPatch, query: Path, events_jsonl: Path, tmp_path: Path
) -> None:
    output = tmp_path / "m.jsonl"
    done = run_main(monkeypatch, "run", query, "-i", "-", "-o", output)
    assert done.code == 2 and "give it with --input-format" in done.stderr
    data = events_jsonl.read_bytes()
    done = run_main(
        monkeypatch,
        "run",
        query,
        "-i",
        "-",
        "--input-format",
        "jsonl",
        "-o",
        output,
        "-q",
        stdin=data,
    )
    assert done.code == 0, done.stderr
    assert canonical(read_jsonl(output)) == _expected()
    done = run_main(
        monkeypatch,
        "run",
        query,
        "-i",
        "-",
        "--input-format",
        "csv",
        "-o",
        output,
        stdin=b"\x00\x01",
    )
    assert done.code == 1
    assert "standard input is not csv text" in done.stderr


def test_standard_output_gets_the_matches_and_stderr_the_summary(
    monkeypatch: pytest.MonkeyPatch, query: Path, events_jsonl: Path
) -> None:
    done = run_main(monkeypatch, "run", query, "-i", events_jsonl, "-o", "-")
    assert done.code == 2 and "give it with --output-format" in done.stderr
    done = run_main(
        monkeypatch, "run", query, "-i", events_jsonl, "-o", "-", "--output-format", "jsonl"
    )
    assert done.code == 0, done.stderr
    lines = [json.loads(x) for x in done.stdout.decode().splitlines()]
    assert canonical(lines) == _expected()
    assert "matches" in done.stderr and "standard output" in done.stderr
    done = run_main(
        monkeypatch, "run", query, "-i", events_jsonl, "-o", "-", "--output-format", "parquet"
    )
    assert done.code == 0, done.stderr
    table = pq.read_table(io.BytesIO(done.stdout))
    assert table.num_rows == len(_expected())


def test_rejected_events_with_standard_output(
    monkeypatch: pytest.MonkeyPatch, query: Path, tmp_path: Path
) -> None:
    path = tmp_path / "events.jsonl"
    events = [*EVENTS[:6], {"id": 99, "type": "B", "timestamp": 7}]  # no x: rejected
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    done = run_main(monkeypatch, "run", query, "-i", path, "-o", "-", "--output-format", "jsonl")
    assert done.code == 0, done.stderr
    assert "1 rejected events were not written (give --rejected FILE" in done.stderr
    rejected = tmp_path / "bad.jsonl"
    done = run_main(
        monkeypatch,
        "run",
        query,
        "-i",
        path,
        "-o",
        "-",
        "--output-format",
        "jsonl",
        "--rejected",
        rejected,
    )
    assert done.code == 0, done.stderr
    assert [r["id"] for r in read_jsonl(rejected)] == [99]
    done = run_main(
        monkeypatch, "run", query, "-i", path, "-o", tmp_path / "m.jsonl", "--rejected", "-", "-q"
    )
    assert done.code == 0, done.stderr
    assert [json.loads(x)["id"] for x in done.stdout.decode().splitlines()] == [99]
    done = run_main(
        monkeypatch,
        "run",
        query,
        "-i",
        path,
        "-o",
        "-",
        "--output-format",
        "jsonl",
        "--rejected",
        "-",
    )
    assert done.code == 2 and "cannot both be standard output" in done.stderr


def test_stdin_to_stdout_through_a_real_pipe(query: Path, events_jsonl: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kleene",
            "run",
            str(query),
            "-i",
            "-",
            "--input-format",
            "jsonl",
            "-o",
            "-",
            "--output-format",
            "jsonl",
        ],
        input=events_jsonl.read_bytes(),
        capture_output=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in done.stdout.decode().splitlines()]
    assert canonical(lines) == _expected()
    assert b"events read" in done.stderr


def test_generate_to_standard_output(monkeypatch: pytest.MonkeyPatch) -> None:
    done = run_main(
        monkeypatch, "generate", "stock", "-n", "50", "-o", "-", "--output-format", "csv"
    )
    assert done.code == 0, done.stderr
    from kleene.datagen.stock import generate

    written = pa_csv.read_csv(io.BytesIO(done.stdout))
    assert written.equals(generate(50))
    assert "wrote 50 stock events" in done.stderr and "standard output" in done.stderr


def test_format_options_and_the_old_name(
    monkeypatch: pytest.MonkeyPatch, query: Path, events_jsonl: Path, tmp_path: Path
) -> None:
    renamed = tmp_path / "events.data"
    renamed.write_bytes(events_jsonl.read_bytes())
    for option in ("--input-format", "--format"):
        output = tmp_path / "m.results"
        done = run_main(
            monkeypatch,
            "run",
            query,
            "-i",
            renamed,
            option,
            "jsonl",
            "-o",
            output,
            "--output-format",
            "jsonl",
            "-q",
        )
        assert done.code == 0, done.stderr
        assert canonical(read_jsonl(output)) == _expected()
    done = run_main(
        monkeypatch,
        "run",
        query,
        "-i",
        events_jsonl,
        "-o",
        tmp_path / "m",
        "--output-format",
        "csv",
    )
    assert done.code == 2  # argparse: matches are not written as CSV
    assert "invalid choice: 'csv'" in done.stderr
    with pytest.raises(FormatError, match="give the format explicitly"):
        read_events(renamed)
    assert read_table(renamed, Format.JSONL).num_rows == len(EVENTS)


def test_version(monkeypatch: pytest.MonkeyPatch) -> None:
    import tomllib

    from tests.cli.support import ROOT

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert kleene.__version__ == declared
    done = run_main(monkeypatch, "--version")
    assert done.code == 0
    assert done.stdout.decode().strip() == f"kleene {declared}"


def test_spark_refuses_standard_input_and_json_arrays(
    monkeypatch: pytest.MonkeyPatch, query: Path, tmp_path: Path
) -> None:
    output = tmp_path / "m.jsonl"
    done = run_main(
        monkeypatch,
        "run",
        query,
        "-i",
        "-",
        "--input-format",
        "jsonl",
        "-o",
        output,
        "--engine",
        "spark",
    )
    assert done.code == 2 and "spark engine reads files" in done.stderr
    array = tmp_path / "events.json"
    array.write_text(json.dumps(EVENTS))
    done = run_main(monkeypatch, "run", query, "-i", array, "-o", output, "--engine", "spark")
    assert done.code == 2 and "is a JSON array" in done.stderr
    assert not output.exists()


def test_real_subprocess_overwrite_refusal_exit_code(query: Path, events_jsonl: Path) -> None:
    done = run_kleene("run", query, "-i", events_jsonl, "-o", events_jsonl)
    assert done.returncode == 2
    assert "refusing to overwrite" in done.stderr and "Traceback" not in done.stderr


def test_the_query_from_standard_input(
    monkeypatch: pytest.MonkeyPatch, events_jsonl: Path, tmp_path: Path
) -> None:
    output = tmp_path / "m.jsonl"
    done = run_main(
        monkeypatch, "run", "-", "-i", events_jsonl, "-o", output, "-q", stdin=QUERY.encode()
    )
    assert done.code == 0, done.stderr
    assert canonical(read_jsonl(output)) == _expected()
    done = run_main(monkeypatch, "explain", "-", stdin=b"PATTERN SEQ(A a, B b WHERE")
    assert done.code == 2 and "standard input: line 1, column 22" in done.stderr
    done = run_main(
        monkeypatch, "run", "-", "-i", "-", "--input-format", "jsonl", "-o", output, stdin=b""
    )
    assert done.code == 2 and "cannot both be standard input" in done.stderr


@pytest.mark.parametrize("value", ["-1", "nan", "inf"])
def test_allowed_lateness_must_be_a_finite_non_negative_number(
    value: str, monkeypatch: pytest.MonkeyPatch, query: Path, events_jsonl: Path, tmp_path: Path
) -> None:
    output = tmp_path / "m.jsonl"
    done = run_main(
        monkeypatch, "run", query, "-i", events_jsonl, "-o", output, "--allowed-lateness", value
    )
    assert done.code == 2 and "--allowed-lateness: must be a finite number" in done.stderr


def test_an_output_that_cannot_be_created_is_named(
    monkeypatch: pytest.MonkeyPatch, query: Path, events_jsonl: Path, tmp_path: Path
) -> None:
    import tempfile

    def refuse(*args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied", str(tmp_path / ".kleene-x-m.jsonl"))

    output = tmp_path / "m.jsonl"
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    done = run_main(monkeypatch, "run", query, "-i", events_jsonl, "-o", output)
    assert done.code == 1
    assert done.stderr == f"kleene: error: {output}: Permission denied\n"
