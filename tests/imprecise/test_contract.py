"""The interval kind on the one contract (issue 25): IntervalQuery is a CompiledQuery,
its matcher a StreamMatcher (advance_to is the punctuation of VLDB 2010, Appendix C.3),
its results MatchLike with their partition, and ``max_matches`` / ``max_runs`` stop an
exploding query while it runs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import kleene
from kleene.errors import EventError, MatchLimitError, QueryError, RunLimitError
from kleene.imprecise import IntervalQuery, state
from kleene.match import MatchLike, RunResult
from kleene.runtime import snapshot
from kleene.runtime.contract import CompiledQuery, StreamMatcher

ANY = "skip_till_any_match"
KLEENE = "PATTERN SEQ(E+ a[], E b) WITHIN 1000"  # the issue's exploding Kleene query


def overlapping(n: int, etype: str = "E", start: int = 0, upper: int = 30) -> list[dict[str, Any]]:
    """Events ``start`` to ``n`` whose intervals [0, upper] all overlap: every order of
    them is possible."""
    return [
        {"type": etype, "id": f"{etype}{i}", "lower": 0, "upper": upper} for i in range(start, n)
    ]


def interval(text: str, **options: Any) -> IntervalQuery:
    return kleene.compile(text, time="interval", **options)


def ids(found: list[Any]) -> list[dict[str, tuple[Any, ...]]]:
    return [m.ids() for m in found]


def handed_out(q: IntervalQuery, events: list[dict[str, Any]]) -> tuple[list[Any], Any]:
    """What ``on_matches`` received from one push and flush, and the error, if any."""
    got: list[Any] = []
    m = q.matcher(on_matches=got.extend)
    try:
        m.push(events)
        m.flush()
    except (MatchLimitError, RunLimitError) as exc:
        return got, exc
    return got, None


# --- the contract ---------------------------------------------------------------------


def test_the_query_and_matcher_are_the_contracts_classes() -> None:
    q = kleene.compile("PATTERN SEQ(A a, B b)", time="interval")
    assert isinstance(q, CompiledQuery) and q.kind == "interval"
    m = q.matcher()
    assert isinstance(m, StreamMatcher)
    with pytest.raises(TypeError):
        q.matcher(None)  # type: ignore[call-arg]  # state, on_matches: keyword-only
    events = [
        {"type": "A", "id": 1, "lower": 0, "upper": 1},
        {"type": "B", "id": 2, "lower": 3, "upper": 2},  # lower > upper: rejected
        {"type": "B", "id": 3, "lower": 2, "upper": 2},
    ]
    result = q.run_detailed(events)
    assert type(result) is RunResult
    assert ids(result.matches) == [{"a": (1,), "b": (3,)}]
    assert [r.id for r in result.rejected] == [2]
    assert all(isinstance(r, MatchLike) for r in result.matches)


def test_the_limits_are_options_of_the_registry() -> None:
    """Refused with a TypeError before; now options, checked with a QueryError."""
    q = kleene.compile("PATTERN SEQ(A a, B b)", time="interval", max_matches=None, max_runs=5)
    assert (q.max_matches, q.max_runs) == (None, 5)
    for bad in ({"max_matches": -1}, {"max_runs": 0}, {"max_runs": None}, {"max_matches": True}):
        with pytest.raises(QueryError, match=next(iter(bad))):
            kleene.compile("PATTERN SEQ(A a, B b)", time="interval", **bad)


def test_the_partition_is_the_key_in_the_inputs_types_as_for_point_events() -> None:
    """Point intervals (lower = upper = timestamp): the interval results and their
    partitions are the point query's; () without an equivalence test."""
    events = [
        {"type": "A", "id": 1, "timestamp": 1, "lower": 1, "upper": 1, "k": "x", "n": 7},
        {"type": "A", "id": 2, "timestamp": 2, "lower": 2, "upper": 2, "k": "y", "n": 8},
        {"type": "B", "id": 3, "timestamp": 3, "lower": 3, "upper": 3, "k": "x", "n": 7},
        {"type": "B", "id": 4, "timestamp": 4, "lower": 4, "upper": 4, "k": "y", "n": 8},
    ]
    texts = (
        "PATTERN SEQ(A a, B b) WHERE [k] and [n]",
        "PATTERN SEQ(A a, B b) WHERE a.k = b.k",
        "PATTERN SEQ(A+ a[], B b) WHERE [n]",
    )
    for text, engine in [(t, e) for t in texts for e in ("points", "events")]:
        point = kleene.compile(text, strategy=ANY)
        assert isinstance(point, kleene.Query)
        q = interval(text, strategy=ANY, engine=engine)
        want = sorted((repr(m.ids()), m.partition) for m in point.run(events))
        for given in (events, pa.Table.from_pylist(events)):
            got = sorted((repr(m.ids()), m.partition) for m in q.run(given))
            assert got == want
        assert q.partition_attributes == point.partition_attributes
    ((_, keyed),) = {
        (repr(m.ids()), m.partition)
        for m in interval(texts[0]).run(events)
        if m.ids() == {"a": (1,), "b": (3,)}
    }
    assert keyed == ("x", 7) and [type(v) for v in keyed] == [str, int]


def test_advance_to_is_the_heartbeat_and_takes_what_push_takes() -> None:
    """advance_to(t) promises no event starts before t (Appendix C.3): sorted buffers
    release at once (b waits for t_emit to pass 6, which with U_max = 10 takes an
    event starting after 16). It takes whole numbers as the events' bounds are, also
    as a float or numpy integer, and refuses a fraction with an EventError."""
    text = "PATTERN SEQ(A a, B b) WITHIN 8"
    events = [
        {"type": "A", "id": "a", "lower": 0, "upper": 5},
        {"type": "B", "id": "b", "lower": 1, "upper": 6},
    ]
    q = kleene.compile(text, time="interval", exact=True, u_max=10, method="query")
    (want,) = q.run(events)
    for t in (10, 10.0, np.int64(10)):
        m = q.matcher()
        assert m.push(events) == []
        (got,) = m.advance_to(t)
        assert (got.ids(), got.confidence) == (want.ids(), want.confidence)
        m.push([{"type": "B", "id": "late", "lower": 9, "upper": 12}])
        (late,) = m.take_rejected()
        assert "before the heartbeat 10" in late.reason
    beat = q.matcher()
    beat.push(events)
    assert ids(beat.heartbeat(10)) == ids([want])
    with pytest.raises(EventError, match="whole number"):
        q.matcher().advance_to(2.5)


def test_counts_of_rejected_and_reported_survive_what_they_should() -> None:
    """rejected_count counts from the stream's start (across a snapshot, and whether
    taken or not); reported counts from the matcher's creation or resumption."""
    q = kleene.compile("PATTERN SEQ(A a, B b)", time="interval", u_max=2)
    m = q.matcher()
    m.push([{"type": "A", "id": 1, "lower": 0, "upper": 1}, {"type": "A", "id": 1}])
    assert m.rejected_count == 1 and len(m.take_rejected()) == 1 and m.rejected_count == 1
    m.push([{"type": "B", "id": 2, "lower": 2, "upper": 3}, {"type": "B", "id": 3}])
    m.push([{"type": "C", "id": 4, "lower": 9, "upper": 9}])  # (1, 2) becomes final
    assert (m.rejected_count, m.reported) == (2, 1)
    r = q.matcher(state=m.snapshot())
    assert (r.rejected_count, r.reported) == (2, 0)
    r.push([{"type": "B", "id": 5}])
    assert r.rejected_count == 3 and len(r.take_rejected()) == 2


def test_the_fingerprint_is_the_kinds_one_recipe() -> None:
    facts = ["PATTERN SEQ(A a, B b)", "skip_till_any_match"]
    assert state.fingerprint(facts) == snapshot.kind_fingerprint(
        snapshot.INTERVAL, [state.LAYOUT, *facts]
    )


# --- max_matches, counted as results are produced --------------------------------------

#: (query, options, input) per framework, each with more than 10 results
FRAMEWORKS: dict[str, tuple[str, dict[str, Any], list[dict[str, Any]]]] = {
    "kleene": (KLEENE, {}, overlapping(7)),
    "points": (
        "PATTERN SEQ(E a, E b, E c) WITHIN 1000",
        {"engine": "points"},
        overlapping(6, upper=4),
    ),
    "events/any": ("PATTERN SEQ(E a, E b, E c) WITHIN 1000", {"method": "any"}, overlapping(6)),
    "events/query": (
        "PATTERN SEQ(A a, B b) WITHIN 1000",
        {"method": "query", "u_max": 30},
        overlapping(6, "A") + overlapping(12, "B", 6),
    ),
}


@pytest.mark.parametrize("name", sorted(FRAMEWORKS))
def test_the_results_before_the_match_limit_are_the_first_ones(name: str) -> None:
    """Past max_matches=10 MatchLimitError is raised after on_matches got exactly the
    first 10 results of the matcher without a limit, in the order they came."""
    text, options, events = FRAMEWORKS[name]
    compile_options = {"strategy": ANY, **options}
    everything, error = handed_out(interval(text, max_matches=None, **compile_options), events)
    assert error is None and len(everything) > 10
    got, error = handed_out(interval(text, max_matches=10, **compile_options), events)
    assert isinstance(error, MatchLimitError) and "max_matches=10" in str(error)
    assert ids(got) == ids(everything[:10])
    with pytest.raises(MatchLimitError):  # without a callback: raised all the same
        interval(text, max_matches=10, **compile_options).run(events)


def test_the_issues_24_overlapping_intervals_stop_at_the_match_limit() -> None:
    """24 overlapping events under E+ a[] have about 2^24 signatures (the Kleene
    lattice ran past 20 s before any came out); with max_matches=10 the evaluation
    stops at the 11th, after handing out the first 10: a prefix of what a larger limit
    hands out."""
    events = overlapping(24)
    ten, error = handed_out(interval(KLEENE, strategy=ANY, max_matches=10), events)
    assert isinstance(error, MatchLimitError) and len(ten) == 10
    twenty, error = handed_out(interval(KLEENE, strategy=ANY, max_matches=20), events)
    assert isinstance(error, MatchLimitError) and ids(twenty[:10]) == ids(ten)


# --- max_runs, over each framework's partial state -------------------------------------


@pytest.mark.parametrize("name", sorted(FRAMEWORKS))
def test_partial_state_beyond_max_runs_raises(name: str) -> None:
    """The same inputs grow more partial state than max_runs=8 (runs, point matches,
    pending confidences or Kleene partial signatures): RunLimitError; a limit above
    what they need gives every result."""
    text, options, events = FRAMEWORKS[name]
    compile_options = {"strategy": ANY, **options}
    with pytest.raises(RunLimitError, match=r"max_runs=8 .* over interval events"):
        interval(text, max_runs=8, **compile_options).run(events)
    want = interval(text, **compile_options).run(events)
    got = interval(text, max_runs=10_000, **compile_options).run(events)
    assert [(m.ids(), m.confidence) for m in got] == [(m.ids(), m.confidence) for m in want]


def test_the_issues_24_overlapping_intervals_stop_at_the_run_limit() -> None:
    events = overlapping(24)
    with pytest.raises(RunLimitError, match="partial signatures of Kleene closure"):
        interval(KLEENE, strategy=ANY, max_runs=1000, max_matches=None).run(events)
