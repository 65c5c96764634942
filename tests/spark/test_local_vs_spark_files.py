"""``kleene run --engine local`` and ``--engine spark`` write the same files.

Every example query and a set of generated inputs (out-of-order events within and beyond
the allowed lateness, integer and datetime times, missing attributes, collapsed output,
RETURN items without AS or named like a fixed key, an input without an id column) run
through the command (in process, on the test session) with both engines; the match file
and the rejected file must be equal byte for byte once their lines are put in the
documented order (:func:`kleene.io.records.match_order`, ``rejected_order``).
"""

from __future__ import annotations

import datetime as dt
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

from kleene.cli import EXIT_OK, EXIT_USAGE, main
from kleene.datagen.stock import generate
from kleene.io import write_table
from kleene.io.records import match_order, rejected_order

pytestmark = pytest.mark.spark

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

NEXT = """
PATTERN SEQ(Stock a, Stock b)
WHERE skip_till_next_match AND [symbol] AND b.price > a.price
WITHIN 4
RETURN a.symbol, b.price - a.price, b.volume AS start, a.timestamp
"""

KLEENE = """
PATTERN SEQ(Stock+ a[], Stock b)
WHERE skip_till_next_match AND [symbol] AND a[i].price > a[i-1].price AND b.volume < 150
WITHIN 5 seconds
RETURN a[1].timestamp, max(a[].timestamp), b.timestamp - a[1].timestamp AS took,
       a.LEN, avg(a[].price)
"""

COLLAPSED = """
PATTERN SEQ(Stock a, Stock+ b[], Stock c)
WHERE skip_till_any_match(a, b[], c) {
    [symbol] and a.volume < 500 and b[i].price > a.price
    and b[i].volume > b[i-1].volume and c.price < a.price }
WITHIN 12
OUTPUT COLLAPSED
"""


def shuffled_times(n: int, seed: int, *, jitter: int) -> list[int]:
    """Times 1..n, each moved back by up to ``jitter``: events out of time order, some
    within an allowed lateness of 2 and some beyond it."""
    rng = random.Random(seed)
    return [t - rng.choice([0, 0, 0, 1, 2, jitter]) for t in range(1, n + 1)]


def stock_events(n: int, seed: int, *, jitter: int = 0, missing: float = 0.0) -> pa.Table:
    """Stock events (SIGMOD 2008, section 6) in file order = arrival order; with
    ``missing``, that share of the price and symbol cells is empty."""
    rng = random.Random(seed)
    table = generate(n, symbols=3, increase_prob=0.6, seed=seed, step=1)
    times = shuffled_times(n, seed, jitter=jitter) if jitter else table["timestamp"].to_pylist()

    def holes(values: list[Any]) -> list[Any]:
        return [None if rng.random() < missing else v for v in values]

    return table.set_column(2, "timestamp", pa.array(times, pa.int64())).set_column(
        4, "price", pa.array(holes(table["price"].to_pylist()), pa.int64())
    )


def with_datetimes(table: pa.Table, *, tz: str | None) -> pa.Table:
    base = dt.datetime(2024, 3, 1, 12, 0, 0)
    moments = [base + dt.timedelta(seconds=t) for t in table["timestamp"].to_pylist()]
    column = pa.array(moments, pa.timestamp("us", tz=tz))
    return table.set_column(2, "timestamp", column)


@dataclass(frozen=True)
class Case:
    name: str
    query: str  # query text, or the name of a file in examples/
    events: Callable[[], pa.Table]
    suffix: str = "parquet"
    lateness: float = 0.0
    late: bool = False  # some events must be rejected as late

    def query_file(self, folder: Path) -> Path:
        if self.query.endswith(".sase"):
            return EXAMPLES / self.query
        path = folder / "query.sase"
        path.write_text(self.query)
        return path


CASES = [
    Case(
        "example-rising",
        "stock_rising.sase",
        lambda: generate(4000, symbols=1, increase_prob=0.7, seed=1),
    ),
    Case("example-returns", "stock_rising_returns.sase", lambda: stock_events(3000, 2), "csv"),
    Case("late-no-lateness", NEXT, lambda: stock_events(600, 3, jitter=5), "csv", late=True),
    Case("late-lateness", NEXT, lambda: stock_events(600, 4, jitter=5), "csv", 2.0, late=True),
    Case(
        "missing-attributes",
        NEXT,
        lambda: stock_events(600, 5, jitter=3, missing=0.05),
        "csv",
        1.0,
        late=True,
    ),
    Case(
        "jsonl-input",
        NEXT,
        lambda: stock_events(600, 11, jitter=3, missing=0.05),
        "jsonl",
        1.0,
        late=True,
    ),
    Case(
        "datetime-utc",
        KLEENE,
        lambda: with_datetimes(stock_events(800, 6, jitter=4), tz="UTC"),
        lateness=2.0,
        late=True,
    ),
    Case(
        "datetime-naive",
        KLEENE,
        lambda: with_datetimes(stock_events(800, 7, jitter=4), tz=None),
        lateness=1.0,
        late=True,
    ),
    Case("collapsed", COLLAPSED, lambda: stock_events(1500, 8, jitter=3), lateness=1.0, late=True),
    Case(
        "no-id-column",
        NEXT,
        lambda: stock_events(600, 9, jitter=4).drop_columns(["id"]),
        late=True,
    ),
]


def sorted_lines(path: Path, key: Callable[[dict[str, Any]], Any]) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return sorted(lines, key=lambda line: key(json.loads(line)))


def run(query: Path, source: Path, output: Path, engine: str, lateness: float) -> int:
    args = ["run", str(query), "-i", str(source), "-o", str(output), "-q"]
    args += ["--engine", engine, "--allowed-lateness", str(lateness)]
    if engine == "spark":
        args += ["--master", "local[2]"]
    return main(args)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_engines_write_the_same_files(spark: SparkSession, case: Case, tmp_path: Path) -> None:
    source = tmp_path / f"events.{case.suffix}"
    write_table(case.events(), source)
    query = case.query_file(tmp_path)
    written = {}
    for engine in ("local", "spark"):
        output = tmp_path / f"{engine}.jsonl"
        assert run(query, source, output, engine, case.lateness) == EXIT_OK
        rejected = tmp_path / f"{engine}.jsonl.rejected.jsonl"
        written[engine] = (
            sorted_lines(output, match_order),
            sorted_lines(rejected, rejected_order),
        )
    matches, rejected = written["local"]
    assert matches  # the case exercises the pipeline
    assert any("late event" in line for line in rejected) == case.late
    assert written["spark"][0] == matches
    assert written["spark"][1] == rejected


def test_every_example_is_compared_or_refused(spark: SparkSession, tmp_path: Path) -> None:
    """The examples the file comparison does not cover are programs, which the Spark
    engine refuses with a usage error before writing anything."""
    compared = {c.query for c in CASES}
    source = tmp_path / "events.parquet"
    write_table(stock_events(50, 10), source)
    for example in sorted(EXAMPLES.glob("*.sase")):
        if example.name in compared:
            continue
        output = tmp_path / f"{example.stem}.jsonl"
        assert "DEFINE" in example.read_text() or "UNION" in example.read_text()
        assert run(example, source, output, "spark", 0.0) == EXIT_USAGE
        assert not output.exists()


def test_engines_stop_at_the_same_match_limit(spark: SparkSession, tmp_path: Path) -> None:
    """``--max-matches``: both engines exit 1 naming the limit and write that many of
    the query's matches (the workers have no limit; the driver keeps the first N in the
    documented order, the local engine the first N it hands out: the sets may differ)."""
    query = tmp_path / "any.sase"
    query.write_text("PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match { }")
    source = tmp_path / "events.jsonl"
    events = [{"type": "A", "timestamp": i, "id": i} for i in range(12)]
    events.append({"type": "B", "timestamp": 12, "id": 12})  # 4,095 matches end here
    source.write_text("".join(json.dumps(e) + "\n" for e in events))
    written = {}
    for engine in ("local", "spark"):
        output = tmp_path / f"{engine}.jsonl"
        args = ["run", str(query), "-i", str(source), "-o", str(output), "-q"]
        args += ["--engine", engine, "--max-matches", "100"]
        assert main(args) == 1
        written[engine] = output.read_text(encoding="utf-8").splitlines()
    every = tmp_path / "every.jsonl"
    assert (
        main(["run", str(query), "-i", str(source), "-o", str(every), "-q", "--max-matches", "0"])
        == 0
    )
    matches = set(every.read_text(encoding="utf-8").splitlines())
    assert len(matches) == 4095
    for lines in written.values():
        assert len(lines) == len(set(lines)) == 100 and set(lines) <= matches
