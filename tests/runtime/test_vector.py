"""The vectorized engine's pieces: which queries it takes, exact arithmetic, runs
across batches, snapshots, datetimes, and the window narrowing of the prefilter."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import kleene
from kleene.events import EventFields, read_batch
from kleene.runtime.prefilter import Prefilter
from kleene.runtime.vector import support

PEERS = """PATTERN SEQ(Stock a, Stock+ b[], Stock c)
WHERE partition_contiguity AND [symbol]
  AND b[1].price < a.price AND b[i].price < b[i-1].price AND c.price > b[b.LEN].price"""


def ids(matches: list[Any]) -> list[Any]:
    return sorted((m.key(), tuple(sorted(m.values().items()))) for m in matches)


def stock(n: int, symbols: int = 3, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [
        {
            "type": "Stock",
            "timestamp": i,
            "id": i,
            "symbol": "ABC"[i % symbols],
            "price": int(rng.integers(0, 6)),
            "volume": int(rng.integers(0, 3)),
        }
        for i in range(n)
    ]


def test_auto_picks_the_vector_engine_where_it_applies_and_says_why() -> None:
    q = kleene.compile(PEERS)
    assert q.config.engine == "vector"
    assert "columns over whole batches" in q.explain().splitlines()[0]
    assert kleene.compile(PEERS.replace("partition_contiguity", "skip_till_next_match"))
    assert kleene.compile(PEERS, strategy="skip_till_next_match").config.engine == "nfa"


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        ("b[i].price > avg(b[..i-1].price)", "aggregate"),
        ("c.price > a.price", "not adjacent"),
        ("b[i].price > b[1].price", "out of reach"),
        ("b[b.LEN].price > a.price", "not adjacent"),
    ],
)
def test_declined_shapes(where: str, reason: str) -> None:
    text = f"PATTERN SEQ(Stock a, Stock+ b[], Stock c) WHERE partition_contiguity AND {where}"
    q = kleene.compile(text)
    assert q.config.engine == "nfa"
    assert reason in (support(q.plan) or "")
    with pytest.raises(kleene.QueryError, match="vector engine"):
        kleene.compile(text, engine="vector")


@pytest.mark.parametrize("output", ["all", "non_overlap"])
@pytest.mark.parametrize("strategy", ["strict_contiguity", "partition_contiguity"])
def test_same_matches_as_the_nfa_in_batches_and_after_snapshots(output: str, strategy: str) -> None:
    events = stock(600, symbols=1 if strategy == "strict_contiguity" else 3)
    text = PEERS + "\nWITHIN 40\nRETURN a.price AS p, b.LEN AS n, max(b[].price) AS top"
    want = kleene.compile(text, engine="nfa", output=output, strategy=strategy).run(events)
    q = kleene.compile(text, engine="vector", output=output, strategy=strategy)
    m = q.matcher()
    got = []
    for k, lo in enumerate(range(0, 600, 37)):
        m.engine.small = 64 if k % 3 == 2 else 0  # every third batch in stream mode
        got += m.push(pa.Table.from_pylist(events[lo : lo + 37]))
        m = q.matcher(state=m.snapshot())
    got += m.flush()
    assert want and ids(got) == ids(want)


def test_integers_beyond_float_precision_are_compared_exactly() -> None:
    big = 2**60
    events = [
        {"type": "A", "timestamp": i, "x": big + (i % 3)} for i in range(12)
    ]  # float64 cannot tell these apart: the rows are compared one by one
    text = (
        "PATTERN SEQ(A+ a[], A b) "
        f"WHERE strict_contiguity {{ a[i].x > a[i-1].x and b.x < {big + 1} }}"
    )
    want = kleene.compile(text, engine="nfa").run(events)
    got = kleene.compile(text, engine="vector").run(pa.Table.from_pylist(events))
    assert want and ids(got) == ids(want)


def test_datetime_windows() -> None:
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    events = [{**e, "timestamp": start + dt.timedelta(seconds=e["timestamp"])} for e in stock(300)]
    text = PEERS + "\nWITHIN 20 seconds"
    want = kleene.compile(text, engine="nfa").run(events)
    got = kleene.compile(text, engine="vector").run(pa.Table.from_pylist(events))
    assert want and ids(got) == ids(want)
    assert [m.start for m in got] == [m.start for m in want]


def test_a_run_spanning_many_batches_is_carried_and_live_runs_stay_bounded() -> None:
    text = "PATTERN SEQ(A+ a[], B b) WHERE partition_contiguity { [k] and a[i].v >= a[i-1].v }"
    events = [{"type": "A", "timestamp": i, "k": 1, "v": i} for i in range(50)]
    events.append({"type": "B", "timestamp": 50, "k": 1, "v": 0})
    q = kleene.compile(text)
    m = q.matcher()
    m.engine.small = 0  # every event a batch of its own, carried to the next
    got = []
    for e in events:
        got += m.push([e])
        assert m.live_runs <= 50
    assert len(got) == 50  # one per start, all ending at the B
    assert ids(got) == ids(kleene.compile(text, engine="nfa").run(events))


def test_prefilter_keeps_only_events_near_a_start_and_an_end() -> None:
    text = "PATTERN SEQ(A a, B b) WHERE skip_till_next_match { [k] and a.v = 1 } WITHIN 5"
    q = kleene.compile(text)
    events = [
        {"type": "AB"[i % 2], "timestamp": i, "k": i // 2 % 4, "v": int(i == 40)}
        for i in range(100)
    ]
    batch = read_batch(events, EventFields(), 0)
    mask = Prefilter(q.plan).relevant(batch, {"A", "B"}, window=5)
    kept = set(np.flatnonzero(mask).tolist())
    # As other than the one at 40 fail a.v = 1; Bs are kept in the first 5 time units
    # (their start may be in an earlier batch) and within 5 after the start at 40 in
    # its partition; the last 5 time units have no start before them
    assert kept == {1, 3, 5, 40, 41}
    assert ids(q.run(events)) == ids(kleene.compile(text, engine="merge").run(events))


def test_small_pushes_go_event_by_event_through_the_nfa_engine() -> None:
    events = stock(300)
    q = kleene.compile(PEERS)
    m = q.matcher()
    got = []
    for lo in range(0, 150, 10):
        got += m.push(events[lo : lo + 10])
        assert m.st.core.nfa is not None
    got += m.push(pa.Table.from_pylist(events[150:300]))  # large: a whole batch
    assert m.st.core.nfa is None
    got += m.flush()
    assert ids(got) == ids(kleene.compile(PEERS, engine="nfa").run(events))


def test_a_carried_partition_absent_from_the_start_of_the_next_batch() -> None:
    # the carried run (k = 1) sorts after the batch's own partition (k = 0): times,
    # positions and values must follow the sorted rows
    text = "PATTERN SEQ(A+ a[], A+ b[]) WHERE partition_contiguity { [k] } WITHIN 1"
    times = [0, 0, 0, 0, 2, 2, 3]
    events = [{"type": "A", "timestamp": t, "k": int(i == 0)} for i, t in enumerate(times)]
    events[-1]["k"] = 1
    q = kleene.compile(text)
    m = q.matcher()
    m.engine.small = 0
    got = m.push(pa.Table.from_pylist(events[:1]))
    got += m.push(pa.Table.from_pylist(events[1:])) + m.flush()
    assert ids(got) == ids(kleene.compile(text, engine="nfa").run(events))
