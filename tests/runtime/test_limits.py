"""Limits: every core stops an exploding query with RunLimitError or MatchLimitError,
in bounded time and memory, after handing out exactly the matches before the limit.

Skip till any match over n events of a Kleene array has 2**n - 1 subsets; without a
window nothing else bounds them, so each test below would run out of memory (or time)
if a core ignored its limit.
"""

from __future__ import annotations

from typing import Any

import pytest

import kleene
from kleene.lang import parse
from kleene.oracle import evaluate
from kleene.runtime.output import CHUNK
from tests.property.test_engine_vs_oracle import _key

ANY = "PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match { }"


def a_events(n: int, value: Any = None) -> list[dict[str, Any]]:
    return [
        {"type": "A", "timestamp": i, "id": i, "v": i if value is None else value(i)}
        for i in range(n)
    ]


def ab_events(n: int) -> list[dict[str, Any]]:
    return [*a_events(n), {"type": "B", "timestamp": n, "id": n, "v": 0}]


def names_the_run_limit(error: pytest.ExceptionInfo[Any], value: int) -> None:
    text = str(error.value)
    assert f"max_runs={value:,}" in text
    assert "--max-runs" in text


# one query per core whose live state grows without bound (2**n runs, n**2 candidates)
RUN_EXPLOSIONS = [
    ("nfa", ANY, a_events(40)),
    # sums of distinct powers of two differ for every subset: no two runs merge
    (
        "merge",
        "PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match { a[i].v > sum(a[..i-1].v) }",
        a_events(40, lambda i: 2**i),
    ),
    ("backtrack", ANY, a_events(40)),
    # one run per A event, each collecting every later A: candidates grow as n**2 / 2
    ("postpone", ANY, a_events(200)),
    ("postpone-late", ANY, a_events(200)),
    # n**3 / 6 partial matches under strict contiguity
    ("vector", "PATTERN SEQ(A+ a[], A+ b[], A+ c[]) WHERE strict_contiguity { }", a_events(400)),
]


@pytest.mark.parametrize(("engine", "text", "events"), RUN_EXPLOSIONS, ids=lambda x: str(x)[:9])
def test_every_core_honours_max_runs(engine: str, text: str, events: list[Any]) -> None:
    q = kleene.compile(text, engine=engine, max_runs=500, max_matches=None)
    assert q.config.engine == engine
    with pytest.raises(kleene.RunLimitError) as error:
        q.run(events)
    assert not isinstance(error.value, kleene.MatchLimitError)
    names_the_run_limit(error, 500)


MATCH_EXPLOSIONS = [
    ("nfa", ANY),
    ("merge", ANY),
    ("backtrack", ANY),
    ("postpone", ANY),
    ("postpone-late", ANY),
    ("vector", "PATTERN SEQ(A+ a[], A+ b[]) WHERE strict_contiguity { }"),
]


@pytest.mark.parametrize(("engine", "text"), MATCH_EXPLOSIONS)
def test_max_matches_hands_out_exactly_the_matches_before_the_limit(engine: str, text: str) -> None:
    # 12 A events: 4,095 subsets end at B (A+ A+ under strict contiguity: 286 matches
    # over 12 events, so that query gets 80 events); the limit cuts them at 300
    events = ab_events(12) if "B b" in text else a_events(80)
    free = kleene.compile(text, engine=engine, max_matches=None)
    everything: list[Any] = []
    m = free.matcher(on_matches=everything.extend)
    assert m.push(events) == [] and m.flush() == []
    assert len(everything) > 300

    limited = kleene.compile(text, engine=engine, max_matches=300)
    got: list[Any] = []
    m = limited.matcher(on_matches=got.extend)
    with pytest.raises(kleene.MatchLimitError) as error:
        m.push(events)
        m.flush()
    assert got == everything[:300]
    assert "max_matches=300" in str(error.value) and "--max-matches" in str(error.value)
    with pytest.raises(kleene.MatchLimitError):
        limited.run(events)


@pytest.mark.parametrize("engine", ["merge", "backtrack", "postpone", "postpone-late"])
def test_an_exponential_result_stops_at_the_limit_at_once(engine: str) -> None:
    # 2**60 matches end at the last event: only a lazy core stops after 100 of them
    # (the basic NFA^b would hold 2**60 runs first, which max_runs stops)
    q = kleene.compile(ANY, engine=engine, max_runs=10**9, max_matches=100)
    events = ab_events(60)
    got: list[Any] = []
    with pytest.raises(kleene.MatchLimitError):
        m = q.matcher(on_matches=got.extend)
        m.push(events)
        m.flush()
    assert len(got) == 100


def test_on_matches_gets_every_match_in_bounded_chunks() -> None:
    q = kleene.compile(ANY, engine="postpone")
    events = ab_events(12)
    chunks: list[list[Any]] = []
    m = q.matcher(on_matches=chunks.append)
    assert m.push(events) == [] and m.flush() == []
    assert all(0 < len(c) <= CHUNK for c in chunks)
    found = [x for c in chunks for x in c]
    assert len(found) == 2**12 - 1
    assert sorted(x.key() for x in found) == sorted(x.key() for x in q.run(events))


def test_a_limit_counts_over_the_matchers_calls() -> None:
    q = kleene.compile("PATTERN SEQ(A a, B b) WHERE skip_till_any_match { }", max_matches=5)
    m = q.matcher()
    assert len(m.push(ab_events(3))) == 3  # 3 matches at the B
    with pytest.raises(kleene.MatchLimitError):
        m.push([{"type": "B", "timestamp": 5, "id": 9, "v": 0}])  # 3 more: 6 > 5


def test_matches_waiting_for_a_trailing_negation_count_as_live_state() -> None:
    text = "PATTERN SEQ(A+ a[], B b, !(C c)) WHERE skip_till_any_match { } WITHIN 100"
    q = kleene.compile(text, engine="postpone", max_runs=1000, max_matches=None)
    with pytest.raises(kleene.RunLimitError, match="trailing negation"):
        q.run(ab_events(12))


def test_the_vector_fallback_keeps_the_matches() -> None:
    # more than max_runs partial matches in a batch, never more than 100 runs at once:
    # the batch goes event by event and the matches stay the oracle's
    text = "PATTERN SEQ(A+ a[], A+ b[]) WHERE strict_contiguity { } WITHIN 6"
    events = a_events(150)
    q = kleene.compile(text, engine="vector", max_runs=100)
    m = q.matcher()
    got = m.push(events) + m.flush()
    assert m.st.core.nfa is not None  # the batch went event by event
    assert len(got) > 100
    expected = evaluate(parse(text), events)
    assert sorted(_key(x.ids()) for x in got) == sorted(_key(x.ids) for x in expected)


def test_program_limits() -> None:
    program = (
        "DEFINE X AS PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match { } RETURN b.v AS v; "
        "PATTERN SEQ(X x) WHERE skip_till_any_match { }"
    )
    events = ab_events(40)
    got: list[Any] = []
    p = kleene.compile_program(program, max_matches=200)
    with pytest.raises(kleene.MatchLimitError, match="max_matches=200"):
        m = p.matcher(on_matches=got.extend)
        m.push(events)
        m.flush()
    assert len(got) <= 200
    p = kleene.compile_program(program, engine="nfa", max_runs=300, max_matches=None)
    with pytest.raises(kleene.RunLimitError, match="max_runs=300"):
        p.run(events)
    union = kleene.compile_program(f"{ANY} UNION {ANY}", max_matches=50)
    with pytest.raises(kleene.MatchLimitError):
        union.run(ab_events(10))


def test_limit_options_are_checked() -> None:
    with pytest.raises(ValueError, match="max_matches"):
        kleene.compile(ANY, max_matches=-1)
    assert kleene.compile(ANY).config.max_matches == 1_000_000
    assert kleene.compile(ANY, max_matches=None).config.max_matches is None
