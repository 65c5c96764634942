"""One case per registered kind of query for the contract suite: a query, random small
streams for it, an input on which it explodes, and events it must reject.

A new kind adds its case here; the suite (tests/contract/test_contract.py and
tests/spark/test_contract_spark.py) then holds it to the one contract."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from kleene.datagen import exploding as adversarial

Events = list[dict[str, Any]]


@dataclass(frozen=True)
class KindCase:
    """A kind of query under the contract: ``text`` compiled with ``options``;
    ``streams`` draws inputs; ``exploding`` gives (text, events, options) whose
    matches grow exponentially with the input (:mod:`kleene.datagen.exploding`);
    ``bad`` are events to reject (inserted into a stream; their ids start with
    "bad")."""

    kind: str
    text: str
    streams: st.SearchStrategy[Events]
    exploding: Callable[[], adversarial.Case]
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


CASES = (
    KindCase(
        "sase",
        "PATTERN SEQ(A a, B b, C c) WHERE skip_till_any_match(a, b, c) "
        "{ a.x <= b.x AND [x] } WITHIN 6 RETURN a.x + c.x AS total",
        point_stream(),
        adversarial.sase,
        bad=({"type": "A", "id": "bad-x", "timestamp": 0},),
    ),
    KindCase(
        "program",
        "DEFINE R AS PATTERN SEQ(A a, B b) WHERE skip_till_any_match(a, b) "
        "{ a.x <= b.x } WITHIN 4 RETURN b.x AS x;\n"
        "PATTERN SEQ(R r, C c) WHERE skip_till_next_match(r, c) { r.x = c.x } WITHIN 6",
        point_stream(),
        adversarial.program,
        bad=({"type": "C", "id": "bad-x", "timestamp": 0},),
    ),
    KindCase(
        "interval",
        "PATTERN SEQ(A a, B b) WHERE skip_till_any_match(a, b) { a.x <= b.x } WITHIN 5",
        interval_stream(),
        adversarial.interval,
        bad=({"type": "A", "id": "bad-bounds", "lower": 3, "upper": 1, "x": 1},),
        options={"time": "interval"},
        time_field="lower",
    ),
    KindCase(
        "tpstream",
        "FROM S PARTITION BY S.k DEFINE A AS S.x = 0, B AS S.y = 1 "
        "PATTERN A overlaps B; A before B WITHIN 8",
        situation_stream(),
        adversarial.tpstream,
        bad=({"id": "bad-x", "timestamp": 0, "k": 0, "y": 1},),
    ),
    KindCase(
        "eventset",
        "PATTERN SEQ({A a, B+ b}, C c) WHERE a.x <= c.x WITHIN 6",
        point_stream(),
        adversarial.eventset,
        bad=({"type": "A", "id": "bad-x", "timestamp": 0},),
    ),
)


def case_ids() -> list[str]:
    return [c.kind for c in CASES]
