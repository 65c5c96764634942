"""The shared match buffer: each run retrieves exactly its own match.

Why slots suffice (kleene/runtime/nfa/buffer.py): a selection writes a new slot that is
never changed, and the run keeps (entry, slot) of its latest selection. So a run's
chain is the sequence of its own selections, however many other runs selected the same
events; runs that share a prefix share only the slots written before they split.
"""

from __future__ import annotations

from typing import Any

import pytest

import kleene
from kleene import oracle
from kleene.lang import parse
from kleene.runtime.nfa.buffer import Origins, SharedMatchBuffer
from tests.helpers import id_sets, match, stream


def _select(buf: SharedMatchBuffer, state: int, position: int, previous: Origins) -> Origins:
    key, slot = buf.add(state, position, f"e{position}", position, previous)
    return ((key, slot, 0),)


def _ids(buf: SharedMatchBuffer, origins: Origins) -> list[list[str]]:
    return [[ident for _s, _p, ident, _t in m] for m in buf.retrieve(origins)]


def test_runs_that_split_after_a_shared_prefix_meet_again_in_one_entry() -> None:
    """Run 1 takes e0, e1 at state 0 (shared with run 2, which splits off after e1 by
    ignoring e2); run 1 takes e2, run 2 takes e3, both at state 0, and then both
    select e4 at state 1. The entry of e4 is stored once, with two slots, and each
    run's pointer leads back through its own selections only."""
    buf = SharedMatchBuffer(2)
    prefix = _select(buf, 0, 1, _select(buf, 0, 0, ()))
    run1 = _select(buf, 1, 4, _select(buf, 0, 2, prefix))
    run2 = _select(buf, 1, 4, _select(buf, 0, 3, prefix))
    assert len(buf) == 5  # e0, e1, e2, e3 at state 0 and e4 at state 1, once each
    _id, _time, slots = buf.entries[(1, 4)]
    assert len(slots) == 2  # two runs selected e4: two slots
    assert run1[0][1] != run2[0][1]
    assert _ids(buf, run1) == [["e0", "e1", "e2", "e4"]]
    assert _ids(buf, run2) == [["e0", "e1", "e3", "e4"]]
    assert _ids(buf, prefix) == [["e0", "e1"]]  # what was written before is unchanged


def test_a_merged_run_retrieves_one_match_per_member() -> None:
    """Section 5.2.2: a merged run keeps every member's latest (entry, slot); its next
    selection points to all of them, and retrieval yields each member's match."""
    buf = SharedMatchBuffer(2)
    a = _select(buf, 0, 0, ())
    b = _select(buf, 0, 1, ())
    c = _select(buf, 0, 2, a)  # member 1: e0, e2 ; member 2: e1
    merged = _select(buf, 1, 3, c + b)
    assert sorted(_ids(buf, merged)) == [["e0", "e2", "e3"], ["e1", "e3"]]
    other = _select(buf, 1, 3, b)  # a plain run selecting the same event after e1
    assert _ids(buf, other) == [["e1", "e3"]]
    assert sorted(_ids(buf, merged)) == [["e0", "e2", "e3"], ["e1", "e3"]]


@pytest.mark.parametrize("engine", ["nfa", "merge"])
def test_six_runs_through_one_entry_each_report_their_own_match(engine: str) -> None:
    """SIGMOD 2014 Figure 3 under skip till any match: six runs select c1 at the last
    state, so its entry has a slot per run, and the six matches are the oracle's,
    each reported once."""
    text = "PATTERN SEQ(A a, B+ b[], C c) WHERE skip_till_any_match WITHIN 10"
    events = stream("a1@1", "a2@2", "b1@5", "b2@6", "c1@7")
    found = kleene.compile(text, engine=engine).run(events)
    expected = {
        match(a=a, b=b, c="c1") for a in ("a1", "a2") for b in (("b1",), ("b2",), ("b1", "b2"))
    }
    assert len(found) == 6
    assert id_sets(found) == expected
    assert id_sets(oracle.evaluate(parse(text), events)) == expected


def test_an_event_selected_by_several_runs_is_stored_once_per_state_with_a_slot_per_run() -> None:
    """Figure 3's prefix under skip till any match: b1 is taken as the first b after a1
    and after a2; b2 as the first b after a1 and after a2 (the begin state of b[]) and
    as a further b after (a1, b1) and (a2, b1) (its loop state)."""
    text = "PATTERN SEQ(A a, B+ b[], C c) WHERE skip_till_any_match WITHIN 10"
    m = kleene.compile(text, engine="nfa").matcher()
    m.push(stream("a1@1", "a2@2", "b1@5", "b2@6"))
    buffer: Any = m.st.core.buffer
    slots: dict[str, list[int]] = {}
    for event_id, _time, pointers in buffer.entries.values():
        slots.setdefault(event_id, []).append(len(pointers))
    assert {k: sorted(v) for k, v in slots.items()} == {
        "a1": [1],
        "a2": [1],
        "b1": [2],
        "b2": [2, 2],
    }
