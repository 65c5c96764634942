"""Programs: union and composition of queries (SIGMOD 2014, section 2.1)."""

import re

import pytest

import kleene
from kleene import oracle
from kleene.errors import QueryError, QuerySyntaxError, SnapshotError
from kleene.lang import parse, parse_program
from kleene.runtime import snapshot
from tests.helpers import id_sets, match, push_arrow_pieces, stream

RISES = """
DEFINE Rise AS
  PATTERN SEQ(A a, B b) WHERE skip_till_any_match AND b.x > a.x
  WITHIN 5
  RETURN a.x AS low, b.x AS high;
PATTERN SEQ(Rise r, Rise s) WHERE skip_till_any_match AND s.low >= r.high
"""


def test_union_returns_the_matches_of_every_branch_once():
    p = kleene.compile_program(
        "PATTERN SEQ(A a, B b) WHERE skip_till_any_match "
        "UNION PATTERN SEQ(A a, C c) WHERE skip_till_any_match "
        "UNION PATTERN SEQ(A a, B b) WHERE skip_till_any_match AND a.x > 0"
    )
    events = stream("a1@0", "c1@1", "b1@2", x=[1, 0, 0])
    # the third branch finds (a1, b1) again: it is one match
    assert id_sets(p.run(events)) == {match(a="a1", b="b1"), match(a="a1", c="c1")}
    assert len(p.run(events)) == 2


def test_a_definition_feeds_its_matches_as_events():
    events = stream("a1@0", "b1@1", "a2@2", "b2@3", "a3@4", "b3@5", x=[1, 2, 2, 3, 0, 1])
    found = kleene.compile_program(RISES).run(events)
    # rises: (a1,b1) 1->2, (a1,b2) 1->3, (a2,b2) 2->3, (a3,b3) 0->1; a later rise must
    # start at or above where the earlier one ended
    assert id_sets(found) == {
        match(r="Rise[a=a1;b=b1]", s="Rise[a=a2;b=b2]"),
    }
    assert found[0].start == 1 and found[0].end == 3  # derived events carry the end time


def test_pushing_one_event_at_a_time_finds_the_same_matches():
    text = """
    DEFINE Quiet AS PATTERN SEQ(A a, ~(B b)) WITHIN 3 RETURN a.x AS x;
    PATTERN SEQ(Quiet q, C c) WHERE skip_till_any_match AND c.x = q.x
    """
    events = stream("a1@0", "c1@1", "a2@2", "b1@4", "c2@7", "c3@9", x=[1, 1, 2, 0, 2, 1])
    p = kleene.compile_program(text)
    whole = p.run(events)
    m = p.matcher()
    pieces = [x for e in events for x in m.push([e])] + m.flush()
    assert id_sets(pieces) == id_sets(whole)
    # a1 is quiet (no B within 3) and a2 is not (b1 comes 2 later); a1's Quiet event is
    # known only once the window has closed at b1, yet it stands at time 0, before c1
    assert id_sets(whole) == {match(q="Quiet[a=a1]", c="c1"), match(q="Quiet[a=a1]", c="c3")}


def test_snapshot_and_resume():
    events = stream("a1@0", "b1@1", "a2@2", "b2@3", "a3@4", "b3@5", x=[1, 2, 2, 3, 0, 1])
    p = kleene.compile_program(RISES)
    m = p.matcher()
    first = m.push(events[:3])
    resumed = p.matcher(state=m.snapshot())
    rest = resumed.push(events[3:]) + resumed.flush()
    assert id_sets(first + rest) == id_sets(p.run(events))


def test_rejected_events_are_reported_once():
    p = kleene.compile_program(RISES)
    events = stream("a1@0", "b1@1", x=[1, 2])
    events.append({"type": "A", "timestamp": 2, "id": "bad"})  # no x
    result = p.run_detailed(events)
    assert [(r.id, r.reason) for r in result.rejected] == [
        ("bad", "missing attribute 'x' for event type 'A'")
    ]


def test_parse_points_programs_to_compile_program():
    with pytest.raises(QuerySyntaxError, match="compile_program") as caught:
        parse("PATTERN SEQ(A a)\nUNION PATTERN SEQ(B b)")
    assert (caught.value.line, caught.value.column) == (2, 7)
    assert len(parse_program("PATTERN SEQ(A a) UNION PATTERN SEQ(B b)").body.branches) == 2


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        (
            "DEFINE R AS PATTERN SEQ(A a) RETURN a.x AS x;\nPATTERN SEQ(R r) WHERE r.y > 1",
            "R events carry id, timestamp, type, x, not 'y'",
            2,
        ),
        (
            "DEFINE R AS PATTERN SEQ(A a) RETURN a.x AS x\nUNION PATTERN SEQ(B b);\n"
            "PATTERN SEQ(R r)",
            "every query of R must RETURN the same names (x)",
            2,
        ),
        (
            "DEFINE R AS PATTERN SEQ(A a);\nDEFINE R AS PATTERN SEQ(B b);\nPATTERN SEQ(R r)",
            "'R' is defined twice",
            2,
        ),
        (
            "PATTERN SEQ(A+ a[]) WHERE skip_till_any_match OUTPUT COLLAPSED\n"
            "UNION PATTERN SEQ(B b)",
            "cannot return collapsed output",
            1,
        ),
    ],
)
def test_program_errors_name_the_spot(text, message, line):
    with pytest.raises(QueryError, match=re.escape(message)) as caught:
        kleene.compile_program(text)
    assert caught.value.line == line


def test_programs_take_ordered_streams_only():
    with pytest.raises(QueryError, match="allowed_lateness"):
        kleene.compile_program(RISES, allowed_lateness=2)


def test_a_union_forgets_matches_its_branches_can_no_longer_repeat():
    p = kleene.compile_program(
        "PATTERN SEQ(A a, B b) WHERE skip_till_any_match WITHIN 3 "
        "UNION PATTERN SEQ(A a, B b) WHERE skip_till_any_match AND a.x >= 0 WITHIN 3"
    )
    m = p.matcher()
    found = 0
    for k in range(0, 2_000, 100):  # 1,000 (a, b) pairs, one every two time units
        events = [{"type": "AB"[j % 2], "timestamp": j, "id": j, "x": 0} for j in range(k, k + 100)]
        found += len(m.push(events))
        assert len(m.st.statements[-1].seen) <= 4  # only matches ending within the window
    assert found + len(m.flush()) == 1_000 + 999  # (a_j, b_j) and (a_j, b_j+1) pairs


# The case a property test found: the second branch reports (e0, e1) at once (its
# WITHIN 1 has closed at e2), the first only at the end of the stream (its trailing
# negation has no window); the match is the first branch's, with its (empty) values.
LATE_FIRST = (
    "PATTERN SEQ(B+ v0[], B+ v1[], ~(A v2)) WHERE skip_till_any_match\n"
    "UNION\n"
    "PATTERN SEQ(B+ v0[], B+ v1[], ~(A v2)) WHERE skip_till_any_match\n"
    "WITHIN 1 RETURN v0[1].x AS r0"
)
LATE_EVENTS = stream("e0@0", "e1@0", "e2@2", type=["B"] * 3, x=[0] * 3, y=[0] * 3)


def _values(found):
    by_match = {m.key(): m.values() for m in found}
    assert len(by_match) == len(found), "a match was returned twice"
    return by_match


def test_a_union_match_has_the_values_of_the_first_branch_in_text_order():
    found = _values(kleene.compile_program(LATE_FIRST).run(LATE_EVENTS))
    # the first branch finds every B+ B+ split of the three events (no A comes); the
    # second finds only (e0, e1), within its window, and must not give it r0
    assert set(found) == {
        match(v0=("e0",), v1=("e1",)),
        match(v0=("e0",), v1=("e2",)),
        match(v0=("e1",), v1=("e2",)),
        match(v0=("e0", "e1"), v1=("e2",)),
        match(v0=("e0",), v1=("e1", "e2")),
    }
    assert all(values == {} for values in found.values())


@pytest.mark.parametrize("cuts", [[1], [2], [1, 2], [0, 3]])
def test_a_union_pushed_in_pieces_keeps_the_first_branchs_values(cuts):
    p = kleene.compile_program(LATE_FIRST)
    pushed = _values(push_arrow_pieces(p.matcher(), LATE_EVENTS, cuts))
    assert set(pushed) == set(_values(p.run(LATE_EVENTS)))
    assert all(values == {} for values in pushed.values())


def test_a_union_streamed_to_a_callback_keeps_the_first_branchs_values():
    p = kleene.compile_program(LATE_FIRST)
    chunks: list[list] = []
    m = p.matcher(on_matches=chunks.append)
    assert m.push(LATE_EVENTS) == [] and m.flush() == []
    streamed = _values([match for chunk in chunks for match in chunk])
    assert set(streamed) == set(_values(p.run(LATE_EVENTS)))
    assert all(values == {} for values in streamed.values())


def test_a_union_match_waiting_for_an_earlier_branch_survives_a_snapshot():
    p = kleene.compile_program(LATE_FIRST)
    m = p.matcher()
    assert m.push(LATE_EVENTS) == []  # (e0, e1) of the second branch waits for the first
    resumed = p.matcher(state=m.snapshot())
    found = _values(resumed.flush())
    assert set(found) == set(_values(p.run(LATE_EVENTS)))
    assert all(values == {} for values in found.values())


def test_a_union_releases_a_later_branchs_match_once_the_earlier_cannot_report_it():
    p = kleene.compile_program(
        "PATTERN SEQ(A a, B b, ~(C c)) WHERE skip_till_any_match WITHIN 3 RETURN 1 AS branch\n"
        "UNION PATTERN SEQ(A a, B b) WHERE skip_till_any_match WITHIN 3 RETURN 2 AS branch"
    )
    m = p.matcher()
    assert m.push(stream("a1@0", "b1@1")) == []  # the first branch may still report it
    # time 5 is past a1's window: no C came, so the first branch reports it
    assert [(x.ids(), x.values()) for x in m.push(stream("d1@5"))] == [
        ({"a": ("a1",), "b": ("b1",)}, {"branch": 1})
    ]
    assert m.push(stream("a2@10", "b2@11", "c1@12")) == []
    assert m.advance_to(13) == []  # a2's window (10 to 13) is not yet closed
    # past b2's end by the window the first branch has decided (a2, b2), and rejected
    # it (c1 came): the second branch's stands
    assert [(x.ids(), x.values()) for x in m.advance_to(15)] == [
        ({"a": ("a2",), "b": ("b2",)}, {"branch": 2})
    ]
    found = 0
    for k in range(20, 2_000, 2):
        found += len(m.push(stream(f"a{k}@{k}", f"b{k}@{k + 1}", f"c{k}@{k + 1}")))
        # what waits is only what ended within the window: (a_j, b_j) and (a_j-2, b_j)
        # for the last two j
        assert len(m.st.statements[-1].held) <= 4
    assert found + len(m.flush()) == 990 + 989


def _held_tree(change):
    """A snapshot of LATE_FIRST holding (e0, e1) of the second branch, its held match
    changed by ``change`` (a crafted payload)."""
    p = kleene.compile_program(LATE_FIRST)
    m = p.matcher()
    m.push(LATE_EVENTS)
    tree = snapshot.unseal(m.snapshot(), snapshot.PROGRAM, m.fingerprint)
    held = tree["statements"][-1]["held"]
    held[0] = change(*held[0])
    return p, snapshot.seal(snapshot.PROGRAM, m.fingerprint, tree)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda j, m: (2, m), "branch"),
        (lambda j, m: (j, m[:5]), "a held match"),
        (lambda j, m: (j, ({**m[0], "v2": ("e2",)}, *m[1:])), "positions and variables"),
        (lambda j, m: (j, (m[0], {"v0": (0, 1), "v1": (1,)}, *m[2:])), "positions"),
        (lambda j, m: (j, (*m[:3], "late", *m[4:])), "time"),
        (lambda j, m: (j, (*m[:5], {1: 0})), "returned name"),
    ],
)
def test_a_crafted_held_union_match_is_refused_on_load(change, why):
    p, crafted = _held_tree(change)
    with pytest.raises(SnapshotError, match=why):
        p.matcher(state=crafted)


def test_a_union_waits_for_an_earlier_branch_on_the_backtrack_engine():
    # the backtrack engine walks postponed runs late (up to the end of the stream), so
    # a later branch's (a, b) must wait for it even without negation or a window
    p = kleene.compile_program(
        "PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match RETURN 1 AS r\n"
        "UNION PATTERN SEQ(A a, B b) WHERE skip_till_any_match RETURN 2 AS r",
        engine="backtrack",
    )
    events = stream("a1@0", "a2@1", "b1@2", "a3@3", "b2@4")
    m = p.matcher()
    found = _values([x for e in events for x in m.push([e])] + m.flush())
    expected = oracle.evaluate_program(p.ast, events)
    assert set(found) == {tuple(sorted(x.ids.items())) for x in expected}
    assert match(a="a3", b="b2") in found and match(a=("a1", "a2", "a3"), b="b2") in found
    assert all(values == {"r": 1} for values in found.values())  # the first branch's
