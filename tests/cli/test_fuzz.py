"""Fuzzing the ``kleene`` command: random argument combinations over good, bad and missing
files, and garbled event files. Whatever the input, the command exits 0, 1 or 2, prints
no traceback and no "unexpected ..." error (a non-kleene exception), and an error about a
file names that file."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.io import write_table
from tests.cli.inprocess import Done, run_main

QUERY = "PATTERN SEQ(A a, B+ b[], C c) WHERE skip_till_next_match AND [k] AND b[i].x > a.x WITHIN 8"
EVENTS = [
    {"id": i, "type": "ABC"[(i * 5) % 7 % 3], "timestamp": i // 2, "k": i % 2, "x": (i * 3) % 7}
    for i in range(60)
]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A pool of files the arguments are drawn from."""
    folder = tmp_path_factory.mktemp("pool")
    table = pa.Table.from_pylist(EVENTS)
    paths: dict[str, Path] = {}
    for fmt in ("csv", "jsonl", "parquet"):
        paths[fmt] = folder / f"events.{fmt}"
        write_table(table, paths[fmt])
    paths["array"] = folder / "array.json"
    paths["array"].write_text(json.dumps(EVENTS))
    paths["query"] = folder / "q.sase"
    paths["query"].write_text(QUERY)
    paths["program"] = folder / "p.sase"
    paths["program"].write_text(
        "DEFINE Up AS PATTERN SEQ(A a, B b) WHERE a.x < b.x RETURN a.k AS k;\n"
        "PATTERN SEQ(Up u, C c) WHERE [k] WITHIN 10"
    )
    paths["bad_query"] = folder / "bad.sase"
    paths["bad_query"].write_text("PATTERN SEQ(A a, B b WHERE")
    paths["binary"] = folder / "binary.csv"
    paths["binary"].write_bytes(bytes(range(256)) * 4)
    paths["empty"] = folder / "empty.jsonl"
    paths["empty"].write_bytes(b"")
    paths["dataset"] = folder / "dataset"
    paths["dataset"].mkdir()
    pq.write_table(table, paths["dataset"] / "part-0.parquet")
    paths["folder_csv"] = folder / "folder.csv"
    paths["folder_csv"].mkdir()
    paths["missing"] = folder / "missing.csv"
    paths["odd"] = folder / "events.txt"
    paths["odd"].write_bytes(paths["csv"].read_bytes())
    return paths


def _check(done: Done, named: list[Path]) -> None:
    assert done.code in (0, 1, 2), done
    assert "Traceback" not in done.stderr, done.stderr
    assert "KLEENE_TRACEBACK" not in done.stderr, done.stderr  # a non-kleene exception
    if done.code == 1:
        assert any(str(p) in done.stderr for p in named) or "standard input" in done.stderr, (
            done.stderr
        )


INPUT_KEYS = [
    "csv",
    "jsonl",
    "parquet",
    "array",
    "binary",
    "empty",
    "dataset",
    "folder_csv",
    "missing",
    "odd",
    "query",
    "-",
]
QUERY_KEYS = ["query", "program", "bad_query", "missing", "csv"]


@st.composite
def run_arguments(draw: Any, files: dict[str, Path], out: Path) -> tuple[list[str], list[Path]]:
    query = files[draw(st.sampled_from(QUERY_KEYS))]
    source_key = draw(st.sampled_from(INPUT_KEYS))
    source = "-" if source_key == "-" else str(files[source_key])
    output = draw(
        st.sampled_from(
            [
                str(out / "m.jsonl"),
                str(out / "m.parquet"),
                str(out / "m.csv"),
                "-",
                source,
                str(out),
                str(query),
                str(out / "m"),
            ]
        )
    )
    args = ["run", str(query), "-i", source, "-o", output]
    options = {
        "--input-format": st.sampled_from(["csv", "jsonl", "parquet"]),
        "--output-format": st.sampled_from(["jsonl", "parquet"]),
        "--rejected": st.sampled_from(
            [str(out / "r.jsonl"), str(out / "r.parquet"), str(out / "r.csv"), "-", output, source]
        ),
        "--strategy": st.sampled_from(["skip-till-any-match", "partition-contiguity"]),
        "--batch-size": st.sampled_from(["1", "7", "0", "x"]),
        "--allowed-lateness": st.sampled_from(["0", "3", "-1", "nan"]),
        "--time-field": st.sampled_from(["timestamp", "x", "nope"]),
        "--type-field": st.sampled_from(["type", "nope", "k"]),
    }
    for name in draw(st.lists(st.sampled_from(sorted(options)), max_size=4, unique=True)):
        args += [name, draw(options[name])]
    for flag in draw(st.lists(st.sampled_from(["-q", "--non-overlap"]), max_size=2, unique=True)):
        args.append(flag)
    return args, [query, Path(source), Path(output), out]


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_random_run_arguments(files: dict[str, Path], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        args, named = data.draw(run_arguments(files, Path(folder)))
        stdin = files["jsonl"].read_bytes() if data.draw(st.booleans()) else b"\x00garbage"
        done = run_main(patch, *args, stdin=stdin)
        _check(done, named)
        assert not [p for p in Path(folder).iterdir() if p.name.startswith(".kleene-")]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_random_explain_and_generate_arguments(files: dict[str, Path], data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        out = Path(folder)
        if data.draw(st.booleans()):
            queries = data.draw(st.lists(st.sampled_from(QUERY_KEYS), min_size=1, max_size=3))
            args = ["explain", *(str(files[k]) for k in queries)]
            named = [files[k] for k in queries]
            if data.draw(st.booleans()):
                args += ["--png", data.draw(st.sampled_from([str(out / "a.png"), str(out / "d")]))]
        else:
            workload = data.draw(st.sampled_from(["stock", "hadoop"]))
            output = data.draw(
                st.sampled_from([str(out / "g.csv"), str(out / "g.parquet"), str(out / "g"), "-"])
            )
            args = ["generate", workload, "-o", output]
            if data.draw(st.booleans()):
                args += ["--output-format", data.draw(st.sampled_from(["csv", "jsonl", "xml"]))]
            if workload == "stock":
                args += ["-n", data.draw(st.sampled_from(["0", "20", "-3"]))]
                args += ["-p", data.draw(st.sampled_from(["0.5", "2", "nan"]))]
            else:
                args += ["--jobs", data.draw(st.sampled_from(["1", "0"]))]
            named = [Path(output)]
        if data.draw(st.booleans()):
            args.insert(
                data.draw(st.integers(0, len(args))),
                data.draw(st.sampled_from(["--bogus", "--version", "-"])),
            )
        _check(run_main(patch, *args), named)


def _garble(data: bytes, draw: Any) -> bytes:
    cut = draw(st.integers(0, len(data)))
    kind = draw(st.sampled_from(["truncate", "flip", "insert", "splice"]))
    if kind == "truncate":
        return data[:cut]
    if kind == "flip":
        noise = draw(st.binary(min_size=1, max_size=8))
        return data[:cut] + noise + data[cut + len(noise) :]
    if kind == "insert":
        return data[:cut] + draw(st.binary(min_size=1, max_size=16)) + data[cut:]
    text = draw(st.sampled_from([b"\n", b",", b'"', b"{", b"]", b"\xff", b"\x00", b"1e999"]))
    return data[:cut] + text + data[cut:]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_garbled_event_files(files: dict[str, Path], data: st.DataObject) -> None:
    fmt = data.draw(st.sampled_from(["csv", "jsonl", "parquet", "array"]))
    source = files[fmt]
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        garbled = Path(folder) / source.name
        garbled.write_bytes(_garble(source.read_bytes(), data.draw))
        output = Path(folder) / "m.jsonl"
        done = run_main(patch, "run", str(files["query"]), "-i", str(garbled), "-o", str(output))
        _check(done, [garbled])
        assert done.code in (0, 1), done.stderr
        assert output.exists() == (done.code == 0)
