"""Result construction of the postponing core (SIGMOD 2014, section 5.1): grouped
results, their derived selections, and Match.of."""

from __future__ import annotations

import pickle
from typing import Any

import kleene
from kleene.match import Match
from kleene.runtime.postpone.construct import Built
from tests.helpers import stream

QUERY = (
    "PATTERN SEQ(A a, B+ b[], C c) WHERE skip_till_any_match "
    "{ b[i].v < max(b[..i-1].v) and c.v < 5 } WITHIN 10"
)
EVENTS = stream(
    "a1@1", "b1@2", "b2@3", "b3@4", "a2@5", "b4@6", "c1@7", "b5@8", "c2@9",
    v=[0, 9, 3, 7, 0, 2, 1, 5, 0],
)  # fmt: skip


def _completions(engine: str, text: str, events: list[dict[str, Any]]) -> list[Any]:
    """What the core reports, event by event, for one partition."""
    m = kleene.compile(text, engine=engine).matcher()
    core, st = m.engine, m.engine.new_state()
    out = []
    for position, ev in enumerate(events):
        e = (ev["type"], ev["timestamp"], ev["id"], *(ev[a] for a in m.plan.attributes))
        out += core.process(st, e, position, (), m.plan.window)
    return out


def test_results_are_grouped_per_variable() -> None:
    built = _completions("postpone", QUERY, EVENTS)
    assert built and all(isinstance(b, Built) for b in built)
    assert all(list(b.groups[0]) == list(b.groups[1]) == ["a", "b", "c"] for b in built)
    by_ids = {repr(b.groups[0]): b.groups[1:4] for b in built}
    one = repr({"a": ("a1",), "b": ("b1", "b3", "b4"), "c": ("c1",)})
    assert by_ids[one] == ({"a": (0,), "b": (1, 3, 5), "c": (6,)}, 1, 7)
    first = built[0].groups  # depth first: the longest choice of the first run's array
    assert first[0] == {"a": ("a1",), "b": ("b1", "b2", "b3", "b4"), "c": ("c1",)}


def test_derived_selections_are_the_basic_algorithms() -> None:
    """Built.selections (read by negation checks and non-overlap ordering) equals the
    (state, position, id, time) lists and vectors the NFA^b reports."""
    built = _completions("postpone", QUERY, EVENTS)
    basic = _completions("nfa", QUERY, EVENTS)
    assert len(built) == len(basic) > 10
    assert sorted((tuple(b.selections), b.vector) for b in built) == sorted(
        (tuple(c.selections), c.vector) for c in basic
    )


def test_matches_equal_the_basic_algorithms_in_every_field() -> None:
    text = QUERY + " RETURN a.v AS av, b.LEN AS n, max(b[].v) AS top"
    got = kleene.compile(text, engine="postpone").run(EVENTS)
    want = kleene.compile(text, engine="nfa").run(EVENTS)
    assert sorted(got, key=repr) == sorted(want, key=repr)
    assert {repr(m) for m in got} == {repr(m) for m in want}


def test_expanded_collapsed_results_are_the_matches() -> None:
    collapsed = kleene.compile(QUERY, output="collapsed").run_collapsed(EVENTS)
    expanded = [m for c in collapsed for m in c.expand()]
    assert sorted(map(repr, expanded)) == sorted(
        map(repr, kleene.compile(QUERY, engine="nfa").run(EVENTS))
    )


def test_match_of_is_the_constructors_match() -> None:
    args: dict[str, Any] = {
        "variables": {"a": ("a1",), "b": ("b1", "b2")},
        "positions": {"a": (0,), "b": (1, 2)},
        "start": 1,
        "end": 3,
        "partition": ("x",),
        "returned": {"n": 2},
    }
    fast, slow = Match.of(**args), Match(**args)
    assert fast == slow and repr(fast) == repr(slow)
    assert vars(fast) == vars(slow) and list(vars(fast)) == list(vars(slow))
    assert pickle.loads(pickle.dumps(fast)) == slow
    assert fast.first_position == 0 and fast.last_position == 2
