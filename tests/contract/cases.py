"""One case per registered kind of query for the contract suite: a query, random small
streams for it, an input on which it explodes, and events it must reject.

A new kind adds its case here; the suite (tests/contract/test_contract.py and
tests/spark/test_contract_spark.py) then holds it to the one contract."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

Events = list[dict[str, Any]]


@dataclass(frozen=True)
class KindCase:
    """A kind of query under the contract: ``text`` compiled with ``options``;
    ``streams`` draws inputs; ``exploding`` is (text, events) whose matches grow
    exponentially with the input; ``bad`` are events to reject (inserted into a
    stream; their ids start with "bad")."""

    kind: str
    text: str
    streams: st.SearchStrategy[Events]
    exploding: Callable[[], tuple[str, Events]]
    bad: tuple[dict[str, Any], ...]
    options: dict[str, Any] = field(default_factory=dict)
    #: the events' time field (bad events are placed by it)
    time_field: str = "timestamp"


@st.composite
def point_stream(draw: st.DrawFn, types: str = "ABC", max_events: int = 10) -> Events:
    """Events in time order (ties allowed) with a small integer attribute ``x``."""
    n = draw(st.integers(1, max_events))
    t, events = 0, []
    for i in range(n):
        t += draw(st.integers(0, 2))
        events.append(
            {
                "type": draw(st.sampled_from(types)),
                "id": i,
                "timestamp": t,
                "x": draw(st.integers(0, 2)),
            }
        )
    return events


@st.composite
def interval_stream(draw: st.DrawFn, max_events: int = 6) -> Events:
    """Events whose intervals [lower, upper] arrive ordered by a point inside each."""
    n = draw(st.integers(1, max_events))
    events = []
    for i in range(n):
        lower = draw(st.integers(0, 8))
        upper = lower + draw(st.integers(0, 2))
        key = draw(st.integers(lower, upper))
        events.append(
            (
                {
                    "type": draw(st.sampled_from("AB")),
                    "id": i,
                    "lower": lower,
                    "upper": upper,
                    "x": draw(st.integers(0, 2)),
                },
                key,
            )
        )
    events.sort(key=lambda e: e[1])
    return [e for e, _ in events]


@st.composite
def situation_stream(draw: st.DrawFn, max_events: int = 14) -> Events:
    """One event a time unit per partition ``k`` with attributes x, y in 0..2; a last
    event per partition with x = y = -1 ends every situation."""
    n = draw(st.integers(1, max_events))
    events = []
    for i in range(n):
        events.append(
            {
                "id": i,
                "timestamp": i + 1,
                "k": draw(st.integers(0, 1)),
                "x": draw(st.integers(0, 2)),
                "y": draw(st.integers(0, 2)),
            }
        )
    for j, k in enumerate((0, 1)):
        events.append({"id": n + j, "timestamp": n + 1 + j, "k": k, "x": -1, "y": -1})
    return events


def _alternating(n: int, last: str, types: str = "AB", field: str = "timestamp") -> Events:
    events = [{"type": types[i % len(types)], "id": i, field: i + 1, "x": 1} for i in range(n)]
    return [*events, {"type": last, "id": n, field: n + 1, "x": 1}]


def _sase_exploding() -> tuple[str, Events]:
    text = (
        "PATTERN SEQ(A+ a[], C c) WHERE skip_till_any_match(a[], c) { a[i].x = a[i-1].x } "
        "WITHIN 100000"
    )
    return text, _alternating(40, "C", types="A")


def _program_exploding() -> tuple[str, Events]:
    """Each A is an R (fewer than max_matches: a definition's matches count against the
    limit too); the returned statement's Kleene closure over them explodes."""
    text = (
        "DEFINE R AS PATTERN A a RETURN a.x AS x;\n"
        "PATTERN SEQ(R+ r[], C c) WHERE skip_till_any_match(r[], c) { r[i].x = r[i-1].x } "
        "WITHIN 100000"
    )
    return text, _alternating(8, "C", types="A")


def _interval_exploding() -> tuple[str, Events]:
    text = (
        "PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match(a[], b) { a[i].x = a[i-1].x } "
        "WITHIN 1000"
    )
    events = [{"type": "A", "id": i, "lower": i, "upper": i + 30, "x": 1} for i in range(24)]
    return text, [*events, {"type": "B", "id": 24, "lower": 40, "upper": 40, "x": 1}]


def _tpstream_exploding() -> tuple[str, Events]:
    text = (
        "FROM S DEFINE A AS S.x = 0, B AS S.x = 1, C AS S.y = 0 "
        "PATTERN A before B AND B before C WITHIN 100000"
    )
    events = [{"id": i, "timestamp": i + 1, "x": i % 2, "y": (i // 3) % 2} for i in range(2000)]
    return text, events


def _eventset_exploding() -> tuple[str, Events]:
    text = "PATTERN SEQ({A+ a, B+ b}, C c) WITHIN 1000"
    return text, _alternating(24, "C")


CASES = (
    KindCase(
        "sase",
        "PATTERN SEQ(A a, B b, C c) WHERE skip_till_any_match(a, b, c) "
        "{ a.x <= b.x AND [x] } WITHIN 6 RETURN a.x + c.x AS total",
        point_stream(),
        _sase_exploding,
        bad=({"type": "A", "id": "bad-x", "timestamp": 0},),
    ),
    KindCase(
        "program",
        "DEFINE R AS PATTERN SEQ(A a, B b) WHERE skip_till_any_match(a, b) "
        "{ a.x <= b.x } WITHIN 4 RETURN b.x AS x;\n"
        "PATTERN SEQ(R r, C c) WHERE skip_till_next_match(r, c) { r.x = c.x } WITHIN 6",
        point_stream(),
        _program_exploding,
        bad=({"type": "C", "id": "bad-x", "timestamp": 0},),
    ),
    KindCase(
        "interval",
        "PATTERN SEQ(A a, B b) WHERE skip_till_any_match(a, b) { a.x <= b.x } WITHIN 5",
        interval_stream(),
        _interval_exploding,
        bad=({"type": "A", "id": "bad-bounds", "lower": 3, "upper": 1, "x": 1},),
        options={"time": "interval"},
        time_field="lower",
    ),
    KindCase(
        "tpstream",
        "FROM S PARTITION BY S.k DEFINE A AS S.x = 0, B AS S.y = 1 "
        "PATTERN A overlaps B; A before B WITHIN 8",
        situation_stream(),
        _tpstream_exploding,
        bad=({"id": "bad-x", "timestamp": 0, "k": 0, "y": 1},),
    ),
    KindCase(
        "eventset",
        "PATTERN SEQ({A a, B+ b}, C c) WHERE a.x <= c.x WITHIN 6",
        point_stream(),
        _eventset_exploding,
        bad=({"type": "A", "id": "bad-x", "timestamp": 0},),
    ),
)


def case_ids() -> list[str]:
    return [c.kind for c in CASES]
