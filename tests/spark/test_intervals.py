"""Interval events on Spark (kleene.spark._intervals): the same results and rejected
events as the local engine, through the command and through time slices."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyspark.sql import SparkSession

import kleene
import kleene.spark as ks
from kleene.cli import EXIT_OK, main
from kleene.io import write_table
from kleene.io.records import match_order, rejected_order

pytestmark = pytest.mark.spark

# arrival order = row order; the comments say what admission makes of each row
AWKWARD = [
    ("A", 1, 0.0, 2.0, 1, None),
    ("B", 2, 5.0, 3.0, 1, None),  # lower > upper
    ("B", 3, None, 4.0, 1, None),  # missing lower
    ("B", 4, 1.0, 3.0, 1, None),
    ("A", 5, 2.0, 2.0, 2, None),
    ("B", 6, 3.0, 5.0, 2, [0.5, 0.25, 0.25]),
    ("B", 4, 3.0, 4.0, 1, None),  # duplicate id
    ("B", 7, 2.0, 3.0, 1, [0.7, 0.7]),  # probabilities sum to 1.4
    ("A", 8, 9.0, 12.0, 1, None),
    ("B", 9, 1.0, 2.0, 1, None),  # ends before lower bound 9: arrival order broken
    ("B", 10, 10.0, 11.0, 1, None),
    ("B", 11, 10.0, 11.0, 1, None),  # a tie with 10
    ("A", 12, 10.0, 10.0, None, None),  # missing x, which the query reads
    ("C", 13, 11.0, 11.0, 3, None),  # a type the query does not use
    ("B", 14, 11.5, 12.0, 1, None),  # not a whole number
    ("A", 15, 12.0, 14.0, 2, None),
    ("B", 16, 13.0, 16.0, 2, [0.25, 0.25, 0.25, 0.25]),
]
QUERY = "PATTERN SEQ(A a, B b) WHERE {strategy} AND a.x = b.x WITHIN 3 RETURN b.x + 1 AS y"


def awkward_table() -> pa.Table:
    names = ("type", "id", "lower", "upper", "x", "pmf")
    columns = list(zip(*AWKWARD, strict=True))
    types = (
        pa.string(),
        pa.int64(),
        pa.float64(),
        pa.float64(),
        pa.int64(),
        pa.list_(pa.float64()),
    )
    return pa.table({n: pa.array(c, t) for n, c, t in zip(names, columns, types, strict=True)})


def sorted_lines(path: Path, key: Any) -> list[str]:
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    return sorted(lines, key=lambda line: key(json.loads(line)))


@pytest.mark.parametrize("strategy", ["skip_till_any_match", "skip_till_next_match"])
def test_the_command_writes_the_local_engines_files(
    spark: SparkSession, tmp_path: Path, strategy: str
) -> None:
    source = tmp_path / "events.parquet"
    write_table(awkward_table(), source)
    query = tmp_path / "q.sase"
    query.write_text(QUERY.format(strategy=strategy))
    written = {}
    for engine in ("local", "spark"):
        out = tmp_path / f"{engine}.jsonl"
        args = ["run", str(query), "-i", str(source), "-o", str(out), "-q"]
        args += ["--time", "interval", "--engine", engine]
        if engine == "spark":
            args += ["--master", "local[2]"]
        assert main(args) == EXIT_OK
        rejected = tmp_path / f"{engine}.jsonl.rejected.jsonl"
        written[engine] = (sorted_lines(out, match_order), sorted_lines(rejected, rejected_order))
    matches, rejected = written["local"]
    assert len(matches) >= 3  # (1, 4), (5, 6), (8, 10), (8, 11), (15, 16) ...
    reasons = "".join(rejected)
    for why in ("after upper bound", "missing 'lower'", "duplicate event id 4", "sum to 1.4"):
        assert why in reasons
    assert "out of order" in reasons and "not a whole number" in reasons
    assert "missing" in reasons and '"id":12' in reasons
    assert written["spark"] == written["local"]


def stream(n: int, seed: int) -> list[dict[str, Any]]:
    """Events every 2 instants with intervals of 1-9 points (U_max 8, well above the
    window), in an arrival order that keeps section 2.2's assumption (sorted by an
    instant drawn inside each interval)."""
    rng = random.Random(seed)
    events = []
    for i in range(n):
        lower = 2 * i + rng.randint(0, 2)
        upper = lower + rng.randint(0, 8)
        key = rng.randint(lower, upper)
        events.append({"type": rng.choice("AB"), "id": i, "lower": lower, "upper": upper, "k": key})
    events.sort(key=lambda e: e.pop("k"))
    return events


def rows(found: list[Any]) -> list[tuple[Any, ...]]:
    return sorted((str(m.ids()), m.start, m.end, m.confidence) for m in found)


def sliced_locally(
    q: Any, events: list[dict[str, Any]], cuts: tuple[float, ...], margin: float
) -> list[tuple[Any, ...]]:
    """What slices overlapping by ``margin`` find, simulated locally: each slice is fed
    the events whose lower bound lies within ``margin`` of its range and keeps the
    results whose start it holds."""
    edges = [-math.inf, *cuts, math.inf]
    found = []
    for k in range(len(cuts) + 1):
        lo, hi = edges[k] - margin, edges[k + 1] + margin
        part = [e for e in events if lo <= e["lower"] <= hi]
        found += [m for m in q.run(part) if edges[k] <= m.start < edges[k + 1]]
    return rows(found)


def test_time_slices_overlapping_by_w_plus_u_max_lose_and_repeat_nothing(
    spark: SparkSession,
) -> None:
    """Without a key, slices cut the time line; each result comes out once, as the local
    engine computes it. The cuts are such that slices overlapping by W alone (the point
    events' margin) would lose or change results, under both strategies."""
    events = stream(60, 2)
    text = "PATTERN SEQ(A a, B b) WITHIN 2"
    df = spark.createDataFrame(pa.Table.from_pylist(events))
    for strategy in ("skip_till_any_match", "skip_till_next_match"):
        q = kleene.compile(text, time="interval", strategy=strategy)
        want = rows(q.run(events))
        result = ks.match(df, q, slice=3).persist()  # one run for both outputs
        assert result.layout.slices == 3 and result.layout.facts == {"u_max": 8}
        assert result.matches.columns[:6] == ["match_id", "partition", "a", "b", "start", "end"]
        assert result.matches.columns[6] == "confidence"
        got, rejected = result.collect()
        assert not rejected
        assert rows(got) == want
        assert sliced_locally(q, events, result.layout.cuts, 2) != want
        assert sliced_locally(q, events, result.layout.cuts, 2 + 8) == want
        result.unpersist()


def test_a_stream_of_interval_events_gives_the_local_results(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Two files, one micro-batch each, split by the key x; each key's matcher lives on
    as a snapshot between them. A file's rows come in any order through the shuffle and
    are pushed sorted by lower bound; an event whose interval ends before a lower bound
    of the first file is rejected as out of order, one with lower > upper as such. The
    far events at the end make every result final (t_emit = 1000 - U_max)."""
    files = [
        [
            ("A", 1, 0, 2, 1),
            ("A", 2, 1, 1, 2),
            ("B", 3, 1, 3, 1),
            ("B", 4, 2, 4, 2),
            ("A", 5, 4, 6, 1),
            ("B", 6, 5, 5, 1),
        ],
        [
            ("B", 7, 2, 3, 1),  # ends before lower bound 4 of event 5: out of order
            ("B", 8, 6, 8, 1),
            ("B", 9, 7, 5, 2),  # lower > upper
            ("B", 10, 6, 7, 2),
            ("C", 11, 1000, 1000, 1),
            ("C", 12, 1000, 1000, 2),
        ],
    ]
    names = ("type", "id", "lower", "upper", "x")
    tables = [pa.Table.from_pylist([dict(zip(names, r, strict=True)) for r in f]) for f in files]
    text = "PATTERN SEQ(A a, B b) WHERE skip_till_next_match AND a.x = b.x WITHIN 4"
    q = kleene.compile(text, time="interval", u_max=2)
    local = q.run_detailed(pa.concat_tables(tables))
    assert len(local.matches) >= 3
    inbox, out = tmp_path / "in", tmp_path / "out"
    inbox.mkdir()
    for i, table in enumerate(tables):
        write_table(table, inbox / f"events-{i}.parquet")
    ks.run_stream_to_parquet(
        inbox, q, out, tmp_path / "ckpt", source_options={"maxFilesPerTrigger": 1}
    )
    found = spark.read.parquet(str(out / "matches")).collect()
    got = sorted((r["a"][0], r["b"][0], r["start"], r["end"], r["confidence"]) for r in found)
    want = sorted(
        (m.ids()["a"][0], m.ids()["b"][0], m.start, m.end, float(m.confidence))
        for m in local.matches
    )
    assert got == want
    rejected = spark.read.parquet(str(out / "rejected")).collect()
    assert sorted((r["id"], r["reason"]) for r in rejected) == sorted(
        (r.id, r.reason) for r in local.rejected
    )
    assert {r.id for r in local.rejected} == {7, 9}
