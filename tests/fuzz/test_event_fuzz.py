"""Event fuzzing: random batches mixing every input encoding with bad values.

Each generated event is good or bad by construction. Whatever the encoding of its
batch (dicts with numpy or Decimal values, pandas frames with object or category
columns, pyarrow tables with dictionary, string_view or large_string columns), the
matcher must reject exactly the bad events, with a reason, process every good one
(events in = processed + rejected), raise nothing, and find the oracle's matches over
the good events alone.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import warnings
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import kleene
from kleene import oracle
from kleene.lang import parse
from tests.helpers import id_sets

# Every query demands numbers for v (arithmetic), so a value of another kind is bad
# whatever came first.
CASES = [
    ("PATTERN SEQ(A a, B b) WHERE skip_till_any_match { [k] and b.v > a.v + 0 } WITHIN 6", "nfa"),
    (
        "PATTERN SEQ(A a, B b) WHERE skip_till_any_match { [k] and b.v > a.v + 0 } WITHIN 6",
        "postpone",
    ),
    (
        "PATTERN SEQ(A a, B+ b[], C c) WHERE skip_till_next_match "
        "{ [k] and b[i].v >= a.v + 0 and c.v < a.v + 3 } WITHIN 8",
        "nfa",
    ),
    (
        "PATTERN SEQ(A a, ~(C c), B b) WHERE skip_till_next_match { [k] and c.v > a.v + 0 } "
        "WITHIN 5",
        "nfa",
    ),
    ("PATTERN SEQ(A a, B b) WHERE partition_contiguity { [k] and b.v = a.v + 1 }", "vector"),
    ("PATTERN SEQ(A a, B b) WHERE partition_contiguity { [k] and b.v = a.v + 1 }", "nfa"),
    ("PATTERN SEQ(A a, B b) WHERE strict_contiguity { b.v > a.v + 0 }", "vector"),
]

# Bad values per field: each makes an event unusable.
BAD_TYPES: list[Any] = [None, float("nan"), 7, ["B"], {"t": "A"}]
BAD_TIMES: list[Any] = [None, float("nan"), float("inf"), -float("inf"), 2**70, "soon", True]
BAD_VALUES: list[Any] = ["high", None, float("nan"), [1], {"v": 1}, True, b"1"]


def good_value(draw: st.DrawFn, v: int) -> Any:
    """``v`` in one of the number encodings the engine accepts."""
    kind = draw(st.sampled_from(["int", "float", "numpy", "npfloat", "decimal"]))
    if kind == "float":
        return float(v)
    if kind == "numpy":
        return np.int64(v)
    if kind == "npfloat":
        return np.float64(v)
    if kind == "decimal":
        return Decimal(v)
    return v


@st.composite
def streams(
    draw: st.DrawFn, read: str
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[str]]:
    """(events as fed, the good events as plain dicts for the oracle, the bad ids);
    ``read`` are the event types whose ``v`` the query reads."""
    n = draw(st.integers(1, 24))
    big = draw(st.booleans())  # one shift for the whole stream keeps comparisons intact
    fed, good, bad = [], [], set()
    t = 0
    for i in range(n):
        t += draw(st.integers(0, 2))
        etype = draw(st.sampled_from("AABBCD"))
        k = draw(st.sampled_from("xy"))
        v = draw(st.integers(0, 5))
        event_id = f"e{i}"
        clean: dict[str, Any] = {"id": event_id, "type": etype, "timestamp": t, "k": k, "v": v}
        event = dict(clean)
        if big:  # beyond int64, still a number
            event["v"] = clean["v"] = v + 2**70
        else:
            event["v"] = good_value(draw, v)
        flaw = draw(st.sampled_from(["none"] * 6 + ["type", "time", "value", "missing"]))
        if flaw == "type":
            event["type"] = draw(st.sampled_from(BAD_TYPES))
        elif flaw == "time":
            event["timestamp"] = draw(st.sampled_from(BAD_TIMES))
        elif flaw == "value" and etype in read:
            event["v"] = draw(st.sampled_from(BAD_VALUES))
        elif flaw == "missing" and etype in read:
            del event["v"]
        else:
            flaw = "none"
        fed.append(event)
        if flaw == "none":
            good.append(clean)
        else:
            bad.add(event_id)
    return fed, good, bad


def encode(events: list[dict[str, Any]], how: str) -> Any:
    """One batch in one encoding (dicts when the values cannot take that encoding)."""
    if how == "dicts":
        return events
    if how.startswith("pandas"):
        # pandas itself turns integers beyond 2**53 into inexact floats unless the
        # frame holds Python objects
        huge = any(isinstance(v, int) and abs(v) > 2**53 for e in events for v in e.values())
        frame = pd.DataFrame(events, dtype=object) if huge else pd.DataFrame(events)
        if how == "pandas-category":
            for name in ("type", "k"):
                with contextlib.suppress(TypeError, ValueError):  # unhashable values
                    frame[name] = frame[name].astype("category")
        return frame
    names = list(dict.fromkeys(name for e in events for name in e))
    columns = {name: [e.get(name) for e in events] for name in names}
    try:  # every field, also those the first event lacks
        table = pa.table(columns)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return events  # mixed kinds: no arrow column can hold them
    if not all(_same(columns[n], table.column(n).to_pylist()) for n in names):
        return events  # arrow would change a value (True as 1.0): not an encoding of it
    recode = {
        "arrow-dictionary": lambda c: c.dictionary_encode(),
        "arrow-view": lambda c: c.cast(pa.string_view()),
        "arrow-large": lambda c: c.cast(pa.large_string()),
    }.get(how)
    for name in ("type", "k", "id"):
        i = table.schema.get_field_index(name)
        if recode is not None and i >= 0 and pa.types.is_string(table.schema.field(i).type):
            table = table.set_column(i, name, recode(table.column(name)))
    return table


def _same(given: list[Any], read: list[Any]) -> bool:
    def one(a: Any, b: Any) -> bool:
        if isinstance(a, float) and math.isnan(a):
            return b is None or (isinstance(b, float) and math.isnan(b))
        return isinstance(a, bool) == isinstance(b, bool) and bool(a == b)

    return all(one(a, b) for a, b in zip(given, read, strict=True))


ENCODINGS = ["dicts", "pandas", "pandas-category", "arrow", "arrow-dictionary", "arrow-view"]
ENCODINGS.append("arrow-large")


@pytest.mark.parametrize(
    ("text", "engine"), CASES, ids=[f"{e}-{i}" for i, (_, e) in enumerate(CASES)]
)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_bad_events_are_rejected_and_good_ones_match_as_alone(
    text: str, engine: str, data: st.DataObject
) -> None:
    q = kleene.compile(text, engine=engine)
    read = "".join(t for t, attrs in q.plan.required.items() if "v" in attrs)
    fed, good, bad = data.draw(streams(read))
    cuts = data.draw(st.lists(st.integers(0, 24), max_size=3))
    encodings = data.draw(st.lists(st.sampled_from(ENCODINGS), min_size=4, max_size=4))
    note(repr(fed))
    bounds = [0, *sorted(c for c in cuts if c < len(fed)), len(fed)]
    pieces = [fed[lo:hi] for lo, hi in itertools.pairwise(bounds) if hi > lo]
    m = q.matcher()
    found = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas' own warnings on odd object columns
        for piece, how in zip(pieces, encodings * len(pieces), strict=False):
            note(how)
            found += m.push(encode(piece, how))
        found += m.flush()
    rejected = m.take_rejected()
    assert {r.id for r in rejected} == bad
    assert all(r.reason for r in rejected)
    assert m.st.time.position + m.rejected_count == len(fed)  # events in = processed + rejected
    expected = oracle.evaluate(parse(text), good)
    assert id_sets(found) == id_sets(expected)
    assert len(found) == len(expected)


def test_the_fuzz_values_are_what_they_claim() -> None:
    """The generator's bad values are unusable and its good encodings are numbers."""
    assert all(isinstance(x, float) and math.isnan(x) for x in [BAD_TYPES[1], BAD_TIMES[1]])
    q = kleene.compile(CASES[0][0])
    for v in (np.int64(2), np.float64(2), Decimal(2), 2 + 2**70):
        events = [
            {"type": "A", "timestamp": 1, "k": "x", "v": 1},
            {"type": "B", "timestamp": 2, "k": "x", "v": v},
        ]
        assert len(q.run_detailed(events).matches) == 1
