"""Typed CSV reading: random bad cells reject their rows only.

A numeric column with a few cells that are not numbers stays numeric (by the majority
rule, or a declared schema), so ``b.price < a.price`` compares numbers, never text;
every row with a bad cell is rejected with a reason naming the column and the value;
and the matches are the oracle's over the good rows alone. Both engines of
``kleene run`` read CSV the same way.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import kleene
from kleene import oracle
from kleene.cli import EXIT_OK, main
from kleene.io import read_events
from kleene.lang import parse
from tests.cli.support import kleene as run_kleene
from tests.cli.support import read_jsonl
from tests.helpers import id_sets

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

QUERY = (
    "PATTERN SEQ(A a, B b) WHERE skip_till_any_match { [symbol] and b.price < a.price } WITHIN 5"
)
BAD_NUMBERS = ["abc", "1.2.3", "--", "1e", "twelve", "0x1G"]
FIELDS = ["id", "type", "timestamp", "symbol", "price", "volume"]


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[dict[str, str]], list[dict[str, Any]], dict[str, str]]:
    """(CSV rows as text, the good rows typed for the oracle, bad row id -> column)."""
    n = draw(st.integers(3, 20))
    floats = draw(st.booleans())
    rows, good = [], []
    t = 0
    for i in range(n):
        t += draw(st.integers(0, 2))
        price: float = draw(st.integers(1, 12))  # 9 < 10 numerically, "9" > "10" as text
        if floats:
            price += 0.5
        row = {
            "id": f"e{i}",
            "type": draw(st.sampled_from("AABBC")),
            "timestamp": str(t),
            "symbol": draw(st.sampled_from(["x", "y"])),
            "price": str(price),
            "volume": str(draw(st.integers(0, 99))),
        }
        rows.append(row)
        good.append({**row, "timestamp": t, "price": price, "volume": int(row["volume"])})
    bad: dict[str, str] = {}
    # fewer bad cells than half a column, so the majority rule keeps it numeric
    for column in ("price", "volume", "timestamp"):
        chosen = draw(st.lists(st.integers(0, n - 1), max_size=(n - 1) // 2, unique=True))
        for j in chosen:
            if rows[j]["id"] in bad:
                continue
            rows[j][column] = draw(st.sampled_from(BAD_NUMBERS))
            bad[rows[j]["id"]] = column
    return rows, [g for g in good if g["id"] not in bad], bad


def write_csv(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(table=tables(), declared=st.booleans())
def test_bad_cells_reject_their_rows_and_columns_keep_their_type(
    tmp_path: Path,
    table: tuple[list[dict[str, str]], list[dict[str, Any]], dict[str, str]],
    declared: bool,
) -> None:
    rows, good, bad = table
    note(repr(rows))
    path = tmp_path / "events.csv"
    write_csv(path, rows)
    schema = "price:double,volume:int,timestamp:int" if declared else None
    events = read_events(path, schema=schema)
    q = kleene.compile(QUERY)
    m = q.matcher()
    found = m.push(events) + m.flush()
    rejected = m.take_rejected()
    assert {r.id for r in rejected} == set(bad)
    for r in rejected:
        column = bad[r.id]
        cell = next(row[column] for row in rows if row["id"] == r.id)
        assert f"column {column!r}" in r.reason and repr(cell) in r.reason
    assert m.st.time.position + m.rejected_count == len(rows)
    assert id_sets(found) == id_sets(oracle.evaluate(parse(QUERY), good))


def test_one_bad_cell_leaves_the_column_numeric(tmp_path: Path) -> None:
    # as text, "9" > "10" and the A at 10 would be followed by a lower B at 9 only
    path = tmp_path / "events.csv"
    write_csv(
        path,
        [
            {"id": "a", "type": "A", "timestamp": "1", "symbol": "x", "price": "10"},
            {"id": "b", "type": "B", "timestamp": "2", "symbol": "x", "price": "9"},
            {"id": "c", "type": "B", "timestamp": "3", "symbol": "x", "price": "100"},
            {"id": "d", "type": "B", "timestamp": "4", "symbol": "x", "price": "unknown"},
        ],
    )
    result = kleene.compile(QUERY).run_detailed(read_events(path))
    assert id_sets(result.matches) == {(("a", ("a",)), ("b", ("b",)))}
    (r,) = result.rejected
    assert r.id == "d" and "column 'price'" in r.reason and "'unknown'" in r.reason


def test_a_mostly_text_column_stays_text(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_text("type,timestamp,code\nA,1,x1\nB,2,7\nA,3,zz\n", encoding="utf-8")
    table = read_events(path)
    assert table.column("code").to_pylist() == ["x1", "7", "zz"]
    assert "kleene_problem" not in table.column_names


def test_schema_syntax_and_errors(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_text("type,timestamp,code\nA,1,007\nB,2,8\n", encoding="utf-8")
    assert read_events(path, schema="code:string").column("code").to_pylist() == ["007", "8"]
    assert read_events(path, schema={"code": "double"}).column("code").to_pylist() == [7.0, 8.0]
    with pytest.raises(kleene.EventError, match="unknown type 'money'"):
        read_events(path, schema="code:money")
    with pytest.raises(kleene.EventError, match="name:type"):
        read_events(path, schema="code")
    with pytest.raises(
        kleene.EventError, match="schema names 'price', which the file has no column for"
    ):
        read_events(path, schema="price:double")


def _bad_cell_file(tmp_path: Path) -> tuple[Path, Path]:
    events = tmp_path / "events.csv"
    write_csv(
        events,
        [
            {"id": "a", "type": "A", "timestamp": "1", "symbol": "x", "price": "10", "volume": "1"},
            {"id": "b", "type": "B", "timestamp": "2", "symbol": "x", "price": "9", "volume": "1"},
            {
                "id": "c",
                "type": "B",
                "timestamp": "3",
                "symbol": "x",
                "price": "oops",
                "volume": "1",
            },
            {"id": "d", "type": "B", "timestamp": "4", "symbol": "x", "price": "8", "volume": "?"},
            {"id": "e", "type": "B", "timestamp": "5", "symbol": "x", "price": "7", "volume": "2"},
        ],
    )
    query = tmp_path / "q.sase"
    query.write_text(QUERY.replace("WITHIN 5", "WITHIN 5 seconds") + "\n", encoding="utf-8")
    return events, query


def _written(
    tmp_path: Path, engine: str, *extra: str, in_process: bool = False
) -> tuple[list[Any], list[Any]]:
    """The match ids and rejected reasons ``kleene run`` writes, run as a command or
    (``in_process``, on the test session when on Spark: a JVM of its own costs ~15 s)
    through :func:`kleene.cli.main`."""
    events, query = _bad_cell_file(tmp_path)
    out = tmp_path / f"{engine}.jsonl"
    rejected = tmp_path / f"{engine}.rejected.jsonl"
    args = ["--engine", engine, "--rejected", str(rejected), "--time-unit", "s", "-q", *extra]
    if in_process:
        assert main(["run", str(query), "-i", str(events), "-o", str(out), *args]) == EXIT_OK
    else:
        done = run_kleene("run", query, "-i", events, "-o", out, *args, timeout=600)
        assert done.returncode == 0, done.stderr
    matches = sorted(json.dumps(r["ids"], sort_keys=True) for r in read_jsonl(out))
    reasons = sorted((r["id"], r["reason"]) for r in read_jsonl(rejected))
    return matches, reasons


def test_cli_reads_csv_typed_with_schema_and_time_unit(tmp_path: Path) -> None:
    matches, reasons = _written(tmp_path, "local", "--schema", "volume:double")
    assert [r[0] for r in reasons] == ["c", "d"]
    assert "column 'price': 'oops'" in reasons[0][1]
    assert "column 'volume': '?'" in reasons[1][1] and "schema" in reasons[1][1]
    assert len(matches) == 2  # a then b, a then e (not d: rejected)
    events, query = _bad_cell_file(tmp_path)
    done = run_kleene("run", query, "-i", events, "-o", tmp_path / "x.jsonl", "-q")
    assert done.returncode != 0 and "--time-unit" in done.stderr


@pytest.mark.spark
def test_spark_engine_rejects_the_same_rows_for_the_same_reasons(
    spark: SparkSession, tmp_path: Path
) -> None:
    local = _written(tmp_path, "local")
    on_spark = _written(tmp_path, "spark", "--master", "local[1]", in_process=True)
    assert on_spark == local
    assert [r[0] for r in local[1]] == ["c", "d"]


def test_cli_refuses_an_input_without_a_column_the_query_reads(tmp_path: Path) -> None:
    events = tmp_path / "events.csv"
    events.write_text("type,timestamp,symbol\nA,1,x\nB,2,x\n", encoding="utf-8")
    query = tmp_path / "q.sase"
    query.write_text(QUERY + "\n", encoding="utf-8")
    done = run_kleene("run", query, "-i", events, "-o", tmp_path / "out.jsonl", "-q")
    assert done.returncode != 0
    assert "no 'price' column" in done.stderr and "Traceback" not in done.stderr
