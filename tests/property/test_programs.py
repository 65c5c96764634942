"""Union and composition (SIGMOD 2014, section 2.1) against the brute-force oracle."""

from __future__ import annotations

from typing import Any

from hypothesis import given, note
from hypothesis import strategies as st

import kleene
from kleene import oracle
from kleene.lang import parse_program
from tests.helpers import push_arrow_pieces
from tests.property.queries import ATTRS, OPS, TYPES, queries, streams

STRATEGY_NAMES = (
    "strict_contiguity",
    "partition_contiguity",
    "skip_till_next_match",
    "skip_till_any_match",
)


def _key(ids: dict[str, tuple[Any, ...]]) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    return tuple(sorted((k, tuple(v)) for k, v in ids.items()))


def check(text: str, events: list[dict[str, Any]], cuts: list[int]) -> None:
    note(text)
    note(repr(events))
    program = kleene.compile_program(text)
    expected = oracle.evaluate_program(parse_program(text), events)
    want = {_key(m.ids): m.values for m in expected}
    found = program.run(events)
    assert len(found) == len({_key(m.ids()) for m in found}), "a match was returned twice"
    assert {_key(m.ids()): m.values() for m in found} == want
    # the same stream pushed in pieces (arrow batches) gives the same matches, with the
    # same values (a union waits for its earlier branches, however the stream is cut)
    pushed = push_arrow_pieces(program.matcher(), events, cuts)
    assert len(pushed) == len({_key(x.ids()) for x in pushed}), "a match was pushed twice"
    assert {_key(x.ids()): x.values() for x in pushed} == want


@st.composite
def outer_queries(draw: Any) -> str:
    """A query over the derived type Z (attributes r0, timestamp) and raw types."""
    n = draw(st.integers(1, 3))
    comps, preds = [], []
    for i in range(n):
        derived = i == 0 or draw(st.booleans())
        etype = "Z" if derived else draw(st.sampled_from(TYPES[:3]))
        kleene_ = derived and draw(st.integers(0, 2)) == 0
        comps.append(f"{etype}+ w{i}[]" if kleene_ else f"{etype} w{i}")
        op = draw(st.sampled_from(OPS))
        if kleene_:
            preds.append(f"w{i}[i].r0 {op} w{i}[i-1].r0")
        elif derived and i > 0 and not comps[0].endswith("[]"):
            preds.append(f"w{i}.r0 {op} w0.r0")
        elif not derived and draw(st.booleans()):
            attr = draw(st.sampled_from(ATTRS))
            preds.append(f"w{i}.{attr} {op} {draw(st.integers(0, 3))}")
    strategy = draw(st.sampled_from(STRATEGY_NAMES))
    text = f"PATTERN SEQ({', '.join(comps)})\nWHERE {strategy}"
    text += "".join(f" AND {p}" for p in draw(st.permutations(preds)))
    window = draw(st.one_of(st.none(), st.integers(1, 12)))
    return text + (f"\nWITHIN {window}" if window is not None else "")


@st.composite
def small_definitions(draw: Any) -> str:
    """One or two components, perhaps a trailing negation (reported late)."""
    a, b, n = (draw(st.sampled_from(TYPES[:3])) for _ in range(3))
    pattern = draw(
        st.sampled_from(
            [
                f"{a} a",
                f"{a}+ a[]",
                f"{a} a, {b} b",
                f"{a} a, ~({n} n)",
                f"{a} a, {b} b, ~SEQ({n} n, {a} m)",
            ]
        )
    )
    ref = "a[1].x" if "+" in pattern else "a.x"
    strategy = draw(st.sampled_from(STRATEGY_NAMES))
    text = f"PATTERN SEQ({pattern})\nWHERE {strategy}"
    if ", ~" in pattern and draw(st.booleans()):
        text += " AND n.x > a.x"
    window = draw(st.one_of(st.none(), st.integers(1, 8)))
    text += f"\nWITHIN {window}" if window is not None else ""
    return f"{text}\nRETURN {ref} AS r0"


@st.composite
def definitions(draw: Any) -> str:
    """A query whose first positive variable's value is returned as r0."""
    if draw(st.booleans()):
        return draw(small_definitions())
    text = draw(queries()).split("\nRETURN")[0]
    first = text.split("SEQ(", 1)[1].split(",")[0]
    var = first.split()[-1]
    ref = f"{var[:-2]}[1].x" if var.endswith("[]") else f"{var}.x"
    if first.startswith("~"):  # a negated first component: return a constant
        ref = "1"
    return f"{text}\nRETURN {ref} AS r0"


@given(
    first=queries(),
    second=queries(),
    events=streams(types=("A", "B", "C", "D")),
    cuts=st.lists(st.integers(0, 12), max_size=3),
)
def test_union_equals_oracle(first: str, second: str, events: list[Any], cuts: list[int]) -> None:
    check(f"{first}\nUNION\n{second}", events, cuts)


@given(
    inner=definitions(),
    outer=outer_queries(),
    events=streams(types=("A", "B", "C", "D")),
    cuts=st.lists(st.integers(0, 12), max_size=3),
)
def test_composition_equals_oracle(
    inner: str, outer: str, events: list[Any], cuts: list[int]
) -> None:
    check(f"DEFINE Z AS\n{inner};\n{outer}", events, cuts)
