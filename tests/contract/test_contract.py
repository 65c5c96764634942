"""The one contract, held over every registered kind of query (tests/contract/cases.py):
a matcher fed in random chunks finds what one run finds; a matcher resumed from a
snapshot taken at a random point finds what an uninterrupted one finds; ``advance_to``
changes no result; bad events are rejected and counted, and change no match;
``max_matches`` stops an exploding query in bounded memory; every match speaks
:class:`kleene.MatchLike`."""

from __future__ import annotations

import inspect
import tracemalloc
from itertools import pairwise
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene import kinds
from kleene.errors import MatchLimitError, SnapshotError
from kleene.match import MatchLike
from kleene.runtime.contract import CompiledQuery, StreamMatcher
from tests.contract.cases import CASES, Events, KindCase, case_ids

EXAMPLES = 25  # per kind and property: the suite runs every kind
MEMORY_BOUND = 64 * 2**20  # bytes traced while an exploding query meets max_matches


def compiled(case: KindCase, text: str | None = None, **options: Any) -> Any:
    return kleene.compile(case.text if text is None else text, **case.options, **options)


def identity(m: Any) -> tuple[Any, ...]:
    """A match as the result protocol gives it."""
    ids = tuple(sorted((v, tuple(map(repr, e))) for v, e in m.ids().items()))
    values = tuple(sorted((k, repr(v)) for k, v in m.values().items()))
    return (ids, repr(m.start), repr(m.end), tuple(map(repr, m.partition)), values)


def identities(found: list[Any]) -> list[tuple[Any, ...]]:
    return sorted(map(identity, found))


def cuts(draw: st.DrawFn, n: int) -> list[int]:
    """Sorted cut points splitting ``n`` events into non-empty chunks."""
    inner = draw(st.lists(st.integers(1, max(n - 1, 1)), max_size=3, unique=True))
    return sorted(c for c in inner if 0 < c < n)


def chunks(events: Events, at: list[int]) -> list[Events]:
    bounds = [0, *at, len(events)]
    return [events[a:b] for a, b in pairwise(bounds) if a < b]


every_kind = pytest.mark.parametrize("case", CASES, ids=case_ids())


def test_every_registered_kind_has_a_case() -> None:
    assert sorted(k.name for k in kinds.kinds()) == sorted(case_ids())


@every_kind
def test_the_kind_speaks_the_contract(case: KindCase) -> None:
    q = compiled(case)
    kind = kinds.kind_of(q)
    assert kind is not None and kind.name == case.kind == q.kind
    assert isinstance(q, CompiledQuery)
    params = inspect.signature(q.matcher).parameters
    assert [(p.name, p.kind) for p in params.values()] == [
        ("state", inspect.Parameter.KEYWORD_ONLY),
        ("on_matches", inspect.Parameter.KEYWORD_ONLY),
    ]
    m = q.matcher()
    assert isinstance(m, StreamMatcher)
    assert (m.reported, m.rejected_count) == (0, 0)


@every_kind
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_chunks_find_what_one_run_finds(case: KindCase, data: st.DataObject) -> None:
    events = data.draw(case.streams)
    q = compiled(case)
    expected = q.run_detailed(events).matches
    assert all(isinstance(m, MatchLike) and isinstance(m.partition, tuple) for m in expected)
    m = q.matcher()
    found: list[Any] = []
    for chunk in chunks(events, data.draw(st.composite(lambda d: cuts(d, len(events)))())):
        found += m.push(chunk)
    found += m.flush()
    assert identities(found) == identities(expected)
    assert m.reported == len(found)


@every_kind
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_a_resumed_matcher_finds_what_an_uninterrupted_one_finds(
    case: KindCase, data: st.DataObject
) -> None:
    events = data.draw(case.streams)
    cut = data.draw(st.integers(0, len(events)))
    q = compiled(case)
    expected = q.run_detailed(events).matches
    first = q.matcher()
    found = first.push(events[:cut]) if cut else []
    resumed = q.matcher(state=first.snapshot())
    if cut < len(events):
        found += resumed.push(events[cut:])
    found += resumed.flush()
    assert identities(found) == identities(expected)


@every_kind
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_advance_to_changes_no_result(case: KindCase, data: st.DataObject) -> None:
    events = data.draw(case.streams)
    cut = data.draw(st.integers(1, len(events)))
    q = compiled(case)
    expected = q.run_detailed(events).matches
    m = q.matcher()
    found = m.push(events[:cut])
    rest = events[cut:]
    if rest:
        found += m.advance_to(min(e[case.time_field] for e in rest))
        found += m.push(rest)
    found += m.flush()
    assert identities(found) == identities(expected)
    assert m.take_rejected() == []


@every_kind
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_bad_events_are_rejected_counted_and_change_no_match(
    case: KindCase, data: st.DataObject
) -> None:
    events = data.draw(case.streams)
    q = compiled(case)
    clean = q.run_detailed(events)
    mixed = list(events)
    for bad in case.bad:
        mixed.insert(data.draw(st.integers(0, len(mixed))), bad)
    m = q.matcher()
    found = [*m.push(mixed), *m.flush()]
    rejected = m.take_rejected()
    assert sorted(repr(r.id) for r in rejected) == sorted(
        [repr(r.id) for r in clean.rejected] + [repr(b["id"]) for b in case.bad]
    )
    assert m.rejected_count == len(rejected)
    assert all(r.reason for r in rejected)
    assert identities(found) == identities(clean.matches)


@every_kind
def test_max_matches_stops_an_exploding_query_in_bounded_memory(case: KindCase) -> None:
    text, events, options = case.exploding()
    q = kleene.compile(text, **options, max_matches=10)
    handed: list[Any] = []
    tracemalloc.start()
    try:
        m = q.matcher(on_matches=handed.extend)
        with pytest.raises(MatchLimitError, match="max_matches=10"):
            m.push(events)
            m.flush()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(handed) == 10
    assert m.reported == 10
    assert peak < MEMORY_BOUND


@every_kind
def test_a_snapshot_of_another_kind_is_refused(case: KindCase) -> None:
    mine = compiled(case).matcher().snapshot()
    for other in CASES:
        if other.kind != case.kind:
            with pytest.raises(SnapshotError, match="resume it with"):
                compiled(other).matcher(state=mine)
