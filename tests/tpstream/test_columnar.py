"""The column-wise path of the TPStream runtime (a clean arrow batch: predicate masks,
runs from their differences, matcher updates only where a situation starts or ends)
against the event-by-event path, on the same batches: the same matches (situations,
detection times, RETURN values), the same rejected events, the same state."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.runtime.output import Output
from kleene.runtime.snapshot import TPSTREAM, unseal
from kleene.tpstream.admission import AdmittedColumns
from kleene.tpstream.model import TemporalMatch
from kleene.tpstream.query import TemporalQuery
from kleene.tpstream.runtime import TemporalMatcher
from tests.tpstream.streams import events, queries

TIMES = {"int": pa.int64(), "float": pa.float64(), "datetime": pa.timestamp("s")}


@st.composite
def late_events(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Events with some of them moved back in time (late or duplicate times in their
    partition) or without ``y``: admission rejects both (a batch with an event
    without ``y`` is admitted event by event on both paths)."""
    stream = draw(events(max_size=30))
    for e in stream:
        if draw(st.integers(0, 9)) == 0:
            e["timestamp"] = max(0, e["timestamp"] - draw(st.integers(1, 6)))
        if draw(st.integers(0, 24)) == 0:
            e["y"] = None
    return stream


def table(chunk: list[dict[str, Any]], times: str) -> pa.Table:
    columns = {a: pa.array([e[a] for e in chunk], pa.int64()) for a in ("k", "x", "y")}
    stamps = pa.array([e["timestamp"] for e in chunk], pa.int64()).cast(TIMES[times])
    return pa.table({"timestamp": stamps, **columns})


def pushed(
    query: TemporalQuery, chunks: list[list[dict[str, Any]]], columnar: bool, times: str = "int"
) -> Any:
    m = query.matcher()
    m.columnar = columnar
    m.admission.min_rows = 1  # every clean batch column-wise, however short
    columnwise: list[int] = []
    push_columns = m._push_columns

    def counted(admitted: AdmittedColumns, out: Output[TemporalMatch]) -> None:
        columnwise.append(len(admitted.batch))
        push_columns(admitted, out)

    m._push_columns = counted  # type: ignore[method-assign]
    found, states = [], []
    for chunk in chunks:
        found.append(m.push(table(chunk, times)))
        states.append(unseal(m.snapshot(), TPSTREAM, query.fingerprint()))
    # the columnar side takes the column-wise path exactly for the clean batches
    reads_y = "y" in query.plan.attributes
    clean = [len(c) for c in chunks if c and not (reads_y and any(e["y"] is None for e in c))]
    assert columnwise == (clean if columnar else [])
    found.append(m.flush())
    rejected = [(r.id, r.position, r.reason, r.record) for r in m.take_rejected()]
    return found, states, rejected, _explained(query, m)


def _explained(query: TemporalQuery, m: TemporalMatcher) -> str:
    return query.plan_explanation(m)


@settings(max_examples=40, deadline=None)
@given(
    queries(),
    late_events(),
    st.lists(st.integers(0, 30), max_size=3),
    st.booleans(),
    st.sampled_from(sorted(TIMES)),
)
def test_columnar_path_equals_the_event_path(
    text: str, stream: list[dict[str, Any]], cuts: list[int], low_latency: bool, times: str
) -> None:
    """Random queries (durations, RETURN aggregates) over random batches of one stream
    with late events and events without an attribute; numbers, floats or datetimes
    as times; with low latency and without."""
    query = TemporalQuery(text, low_latency=low_latency)
    bounds = sorted({0, len(stream), *(min(c, len(stream)) for c in cuts)})
    chunks = [stream[a:b] for a, b in pairwise(bounds)] or [[]]
    columnar = pushed(query, chunks, columnar=True, times=times)
    assert columnar == pushed(query, chunks, columnar=False, times=times)


def test_a_situation_going_on_across_batches_keeps_its_aggregates() -> None:
    """Aggregates of a situation still going on at the detection, and of one that
    spans two batches, are over its events so far, as event by event."""
    text = (
        "FROM S DEFINE A AS S.x > 0, B AS S.y > 0 "
        "PATTERN A overlaps B; A finished-by B; A contains B WITHIN 100 "
        "RETURN sum(A.x) AS ax, count(A) AS an, max(B.y) AS by, duration(A) AS ad"
    )
    xs = [0, 1, 2, 3, 4, 5, 0, 0]
    ys = [0, 0, 0, 7, 8, 9, 9, 0]
    rows = [
        {"timestamp": t, "k": 0, "x": x, "y": y}
        for t, (x, y) in enumerate(zip(xs, ys, strict=True))
    ]
    query = TemporalQuery(text)
    for cut in range(len(rows) + 1):
        chunks = [rows[:cut], rows[cut:]]
        columnar, events_path = pushed(query, chunks, True), pushed(query, chunks, False)
        assert columnar == events_path
    (m,) = [m for part in columnar[0] for m in part]
    # decided at 3, when B starts while A goes on (the whole prefix group is in the
    # constraint): A's events so far are x = 1, 2, 3, B's one is y = 7
    assert (m.detected, m.returned) == (3, {"ax": 6, "an": 3, "by": 7, "ad": None})
