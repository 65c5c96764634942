"""Snapshots: resuming after any prefix equals an uninterrupted run, for every engine,
strategy and output format, for programs, lateness and datetimes; and every kind of bad
snapshot is refused with a SnapshotError that names the cause."""

from __future__ import annotations

import datetime as dt
import pickle
import zlib
import zoneinfo
from typing import Any

import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

import kleene
from kleene.errors import QueryError, SnapshotError
from kleene.lang import ast
from kleene.runtime import snapshot
from tests.property.queries import cases
from tests.property.test_programs import definitions, outer_queries
from tests.property.vector_queries import vector_cases
from tests.runtime.snapshot_support import COMBINATIONS, comparable, reseal, run_in_pieces, tree_of

# --- resume equals an uninterrupted run ---------------------------------------------------


def _compile(text: str, **options: Any) -> kleene.Query:
    try:
        return kleene.compile(text, **options)
    except QueryError:  # a combination the engine does not take (e.g. negation)
        assume(False)
        raise


def _check_resume(q: kleene.Query, events: list[dict[str, Any]], step: int) -> None:
    cuts = list(range(0, len(events) + 1, step))
    whole = run_in_pieces(q, events, cuts, resume=False)
    assert run_in_pieces(q, events, cuts, resume=True) == whole


@pytest.mark.parametrize(
    ("engine", "strategy", "output"),
    COMBINATIONS,
    ids=[f"{e}-{s.value}-{o.value}" for e, s, o in COMBINATIONS],
)
@settings(max_examples=12, deadline=None)
@given(case=cases(), step=st.integers(1, 3))
def test_resume_after_every_prefix_equals_an_uninterrupted_run(
    case: tuple[str, list[dict[str, Any]]],
    step: int,
    engine: str,
    strategy: ast.Strategy,
    output: ast.OutputFormat,
) -> None:
    text, events = case
    note(text)
    q = _compile(text, engine=engine, strategy=strategy, output=output)
    _check_resume(q, events, step)


@pytest.mark.parametrize("engine", ["nfa", "merge"])
@settings(max_examples=12, deadline=None)
@given(case=cases(groups=True), step=st.integers(1, 3))
def test_resume_with_groups(case: tuple[str, list[dict[str, Any]]], step: int, engine: str) -> None:
    text, events = case
    note(text)
    _check_resume(_compile(text, engine=engine), events, step)


@pytest.mark.parametrize("output", [ast.OutputFormat.ALL, ast.OutputFormat.NON_OVERLAP])
@settings(max_examples=12, deadline=None)
@given(case=vector_cases(), step=st.integers(1, 8), small=st.sampled_from([0, 4]))
def test_vector_carried_rows_resume(
    case: tuple[str, list[dict[str, Any]]], step: int, small: int, output: ast.OutputFormat
) -> None:
    """Batch mode carries rows between batches, stream mode keeps NFA^b runs: both
    resume (``small``: batches below it go event by event)."""
    text, events = case
    note(text)
    q = _compile(text, engine="vector", output=output)
    cuts = list(range(0, len(events) + 1, step))
    results = []
    for resume in (False, True):
        m = q.matcher()
        m.engine.small = small
        found = []
        for k in range(len(cuts)):
            found += m.push(events[cuts[k] : cuts[k + 1] if k + 1 < len(cuts) else None])
            if resume:
                m = q.matcher(state=m.snapshot())
                m.engine.small = small
        results.append(comparable(found + m.flush()))
    assert results[0] == results[1]


@settings(max_examples=15, deadline=None)
@given(case=cases(), swaps=st.lists(st.integers(0, 11), max_size=4), step=st.integers(1, 3))
def test_resume_with_events_held_for_lateness(
    case: tuple[str, list[dict[str, Any]]], swaps: list[int], step: int
) -> None:
    """Out-of-order events wait in the reorder buffer, late ones are rejected: the same
    with and without snapshots between the pieces."""
    text, events = case
    for i in swaps:
        if i + 1 < len(events):
            events[i], events[i + 1] = events[i + 1], events[i]
    q = _compile(text, allowed_lateness=2)
    cuts = list(range(0, len(events) + 1, step))
    assert run_in_pieces(q, events, cuts, resume=True) == run_in_pieces(
        q, events, cuts, resume=False
    )


@settings(max_examples=10, deadline=None)
@given(
    inner=definitions(),
    outer=outer_queries(),
    union=st.booleans(),
    case=cases(),
    step=st.integers(1, 3),
)
def test_program_resume_equals_an_uninterrupted_run(
    inner: str, outer: str, union: bool, case: tuple[str, list[dict[str, Any]]], step: int
) -> None:
    """Composition (held events of each statement) and union (matches seen, and those
    waiting for an earlier branch that reports late)."""
    other, events = case
    text = f"{inner}\nUNION\n{other}" if union else f"DEFINE Z AS\n{inner};\n{outer}"
    note(text)
    try:
        program = kleene.compile_program(text)
    except QueryError:
        assume(False)
        raise
    results = []
    for resume in (False, True):
        m = program.matcher()
        found = []
        for k in range(0, len(events), step):
            found += m.push(events[k : k + step])
            if resume:
                m = program.matcher(state=m.snapshot())
        results.append(comparable(found + m.flush()))
    assert results[0] == results[1]


PARIS = zoneinfo.ZoneInfo("Europe/Paris")


def test_datetimes_time_zones_and_pending_negations_resume() -> None:
    """Datetime times in a named zone, a trailing negation waiting for its window and
    non-overlap candidates sharing those pending matches all come back."""
    start = dt.datetime(2024, 3, 31, 1, 0, tzinfo=PARIS)
    kinds = "ABCABBACBCAB"
    events = [
        {"type": t, "timestamp": start + dt.timedelta(seconds=i), "id": i, "x": i % 3}
        for i, t in enumerate(kinds)
    ]
    q = kleene.compile(
        "PATTERN SEQ(A a, B b, ~(C c)) WHERE skip_till_any_match(a, b) { a.x <= b.x } "
        "WITHIN 4 seconds OUTPUT NON_OVERLAP"
    )
    whole = run_in_pieces(q, events, list(range(len(events) + 1)), resume=False)
    assert whole[0]  # the stream has matches
    assert run_in_pieces(q, events, list(range(len(events) + 1)), resume=True) == whole
    m = q.matcher()
    m.push(events[:5])
    resumed = q.matcher(state=m.snapshot())
    assert resumed.st.time.tz == PARIS
    assert (
        resumed.st.pending
        and resumed.st.pending[0].found
        is next(iter(resumed.st.non_overlap.candidates.values()))[0].payload
    )


def test_values_of_every_supported_kind_survive_the_codec() -> None:
    values = [
        None,
        True,
        0,
        -(2**70),
        2**63,
        1.5,
        float("inf"),
        -0.0,
        "é\ud800",
        b"\x00\xff",
        (1, (2,)),
        [1, [2]],
        {(1, "a"): {"k": ()}},
        {1, "a"},
        frozenset({2}),
        dt.datetime(2024, 1, 1, 12, tzinfo=PARIS),
        dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-3), "X")),
        dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        dt.date(2024, 2, 29),
        dt.time(1, 2, 3, 4),
        dt.timedelta(days=-1, microseconds=5),
    ]
    back = snapshot.loads(snapshot.dumps(values))
    assert back == values
    assert [type(v) for v in back] == [type(v) for v in values]
    assert back[15].tzinfo == PARIS and back[17].tzinfo is dt.UTC


def test_a_value_that_cannot_be_saved_is_named() -> None:
    with pytest.raises(SnapshotError, match="type object"):
        snapshot.dumps([object()])


# --- refusals ---------------------------------------------------------------------------

QUERY = "PATTERN SEQ(A a, B+ b[], C c) WHERE skip_till_next_match(a, b[], c) { [x] } WITHIN 5"
EVENTS = [{"type": t, "timestamp": i, "id": i, "x": 1} for i, t in enumerate("ABBCAB")]


def _small() -> tuple[kleene.Query, bytes]:
    q = kleene.compile(QUERY, engine="nfa")
    m = q.matcher()
    m.push(EVENTS[:5])
    return q, m.snapshot()


def test_truncated_at_every_length_is_refused() -> None:
    q, data = _small()
    for n in range(len(data)):
        with pytest.raises(SnapshotError, match=r"truncated|not a kleene snapshot"):
            q.matcher(state=data[:n])


def test_corrupt_bytes_are_refused() -> None:
    q, data = _small()
    bad = bytearray(data)
    bad[-3] ^= 0x40
    with pytest.raises(SnapshotError, match="corrupt"):
        q.matcher(state=bytes(bad))
    with pytest.raises(SnapshotError, match="corrupt"):
        q.matcher(state=data + b"\x00")


def test_another_query_or_other_options_are_refused() -> None:
    _, data = _small()
    for other in (
        kleene.compile(QUERY.replace("WITHIN 5", "WITHIN 6"), engine="nfa"),
        kleene.compile(QUERY, engine="merge"),
        kleene.compile(QUERY, engine="nfa", strategy="skip_till_any_match"),
        kleene.compile(QUERY, engine="nfa", allowed_lateness=1),
        kleene.compile(QUERY, engine="nfa", time_field="t"),
        kleene.compile(QUERY.replace("[x]", "[y]"), engine="nfa"),
    ):
        with pytest.raises(SnapshotError, match="another query"):
            other.matcher(state=data)


def test_the_same_query_resumes_however_it_is_written_and_with_other_limits() -> None:
    """The fingerprint is of the canonical text: layout and max_runs do not matter."""
    _, data = _small()
    spaced = kleene.compile(QUERY.replace(" WITHIN", "\n   WITHIN"), engine="nfa", max_runs=7)
    found = spaced.matcher(state=data).push(EVENTS[5:])
    assert found == kleene.compile(QUERY, engine="nfa").matcher(state=data).push(EVENTS[5:])


def test_an_unknown_format_version_is_refused() -> None:
    q, data = _small()
    newer = data[:8] + (snapshot.VERSION + 1).to_bytes(2, "big") + data[10:]
    with pytest.raises(SnapshotError, match=r"format version 3, this kleene reads version 2"):
        q.matcher(state=newer)


def test_a_version_1_snapshot_with_dewey_labelled_pointers_is_refused() -> None:
    """Format 1 labelled buffer pointers with Dewey versions; format 2 names slots.
    An old snapshot is refused with a message that says what to do, not misread."""
    q, data = _small()
    older = data[:8] + (1).to_bytes(2, "big") + data[10:]
    with pytest.raises(SnapshotError, match=r"format version 1, .*start without state"):
        q.matcher(state=older)


def test_a_program_snapshot_is_not_a_query_snapshot() -> None:
    program = kleene.compile_program(f"{QUERY}\nUNION\n{QUERY.replace('[x]', '[y]')}")
    q, data = _small()
    with pytest.raises(SnapshotError, match=r"from a SASE\+ program, not from a SASE\+ query"):
        q.matcher(state=program.matcher().snapshot())
    with pytest.raises(SnapshotError, match=r"from a SASE\+ query, not from a SASE\+ program"):
        program.matcher(state=data)


def test_not_bytes_is_refused() -> None:
    q, _ = _small()
    with pytest.raises(SnapshotError, match="bytes"):
        q.matcher(state="state")  # type: ignore[arg-type]


class _Exploit:
    """Pickled, this would call ``_ran.append`` on load."""

    def __reduce__(self) -> tuple[Any, ...]:
        return (_mark, ("code ran",))


_ran: list[str] = []


def _mark(text: str) -> None:
    _ran.append(text)


def test_a_pickle_that_would_run_code_is_refused_without_running_it() -> None:
    q, _ = _small()
    crafted = pickle.dumps(_Exploit())
    pickle.loads(crafted)  # the payload does run code when unpickled ...
    assert _ran == ["code ran"]
    _ran.clear()
    with pytest.raises(SnapshotError, match="not a kleene snapshot"):
        q.matcher(state=crafted)
    assert _ran == []  # ... but not when given as a snapshot
    # nor behind a valid header: the body is JSON, and a pickle is not
    m = q.matcher()
    body = b"Q" + m.fingerprint + zlib.compress(crafted)
    framed = (
        snapshot._HEAD.pack(snapshot.MAGIC, snapshot.VERSION, len(body), zlib.crc32(body)) + body
    )
    with pytest.raises(SnapshotError, match="malformed"):
        q.matcher(state=framed)
    assert _ran == []


def _crafted(q: kleene.Query, change: Any) -> bytes:
    m = q.matcher()
    m.push(EVENTS[:5])
    tree = tree_of(m)
    change(tree)
    return reseal(m, tree)


def _empty_buffer(tree: Any) -> Any:
    return ([[] for _ in tree["core"]["buffer"][0]], snapshot.Flat([]))


def _unknown_slot(run: tuple[Any, ...]) -> tuple[Any, ...]:
    """The run, pointing at a slot its latest entry does not have."""
    (key, _slot, start), *rest = run[4]
    return (*run[:4], ((key, 99, start), *rest))


def _first_run(tree: Any) -> list[Any]:
    runs = tree["core"]["partitions"]
    return runs[next(iter(runs))]


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda t: t.pop("stream"), "record"),
        (lambda t: t.update(counters=(1, 2, 3)), "matcher counters"),
        (lambda t: t.update(stream=(*t["stream"][:2], (1, 2), t["stream"][3])), "stream counters"),
        (lambda t: t.update(stream=(*t["stream"][:2], (1, 2, -1), t["stream"][3])), "counter"),
        (lambda t: t.update(stream=(*t["stream"][:2], (1, 2, 0), t["stream"][3])), "positions"),
        (lambda t: _first_run(t).__setitem__(0, (99, *_first_run(t)[0][1:])), "state"),
        (lambda t: _first_run(t).__setitem__(0, _first_run(t)[0][:4]), "a run"),
        (
            lambda t: _first_run(t).__setitem__(
                0, (_first_run(t)[0][0], (*_first_run(t)[0][1], 1), *_first_run(t)[0][2:])
            ),
            "vector",
        ),
        (lambda t: t["core"].update(buffer=_empty_buffer(t)), "does not exist"),
        (lambda t: t["core"]["buffer"][1].items.append(1), "go on after"),
        (lambda t: t["core"]["buffer"][1].items.pop(), "cut short"),
        (lambda t: t["core"]["buffer"][1].items.__setitem__(0, "x"), "not a list of numbers"),
        (lambda t: t["core"].update(counters=(9, 0, 9)), "live run count"),
        (lambda t: _first_run(t).__setitem__(0, _unknown_slot(_first_run(t)[0])), "not exist"),
        (lambda t: t.update(stream=(t["stream"][0], "late", *t["stream"][2:])), "clock"),
        (lambda t: t.update(learned_kinds={"a": 1}), "kind group"),
        (lambda t: t.update(pending=[(0, 0, 5)]), "found match"),
    ],
)
def test_a_crafted_payload_with_wrong_shapes_is_refused_on_load(change: Any, why: str) -> None:
    q = kleene.compile(QUERY, engine="nfa")
    with pytest.raises(SnapshotError, match=why):
        q.matcher(state=_crafted(q, change))


def test_a_shared_tuple_is_written_once_and_references_point_backwards() -> None:
    shared = tuple(range(50))
    text = snapshot.dumps([shared, shared, (shared,)])
    assert text.count(b"49") == 1
    back = snapshot.loads(text)
    assert back == [shared, shared, (shared,)] and back[0] is back[1] is back[2][0]
    with pytest.raises(SnapshotError, match="reference"):
        snapshot.loads(b"[0,[14,0],[1,5]]")  # refers to a tuple not yet read
