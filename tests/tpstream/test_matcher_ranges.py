"""Range queries per relation (section 5.2, Figure 3) against Table 1's definitions."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.tpstream.buffers import SituationBuffer
from kleene.tpstream.model import Allen, Situation, holds
from kleene.tpstream.ranges import INF, decided, intersect, partner_bounds, union


@st.composite
def buffers(draw):
    """A buffer of disjoint situations, some purged from its front."""
    buf, t = SituationBuffer(), draw(st.integers(0, 5))
    for _ in range(draw(st.integers(0, 12))):
        d = draw(st.integers(1, 6))
        buf.append(Situation("B", (), t, t + d, 0, 0))
        t += d + draw(st.integers(0, 4))
    buf.purge(draw(st.integers(0, 10)))
    return buf


@settings(max_examples=150, deadline=None)
@given(buffers(), st.integers(0, 30), st.integers(1, 12), st.booleans(), st.sampled_from(Allen))
def test_range_query_finds_exactly_the_partners_in_relation(buf, start, length, running, r):
    end = INF if running else start + length
    lo, hi = buf.positions(*partner_bounds(r, start, end))
    got = {buf[p].start for p in range(lo, hi)}
    want = {s.start for s in buf if holds(r, start, end, s.start, s.end)}
    assert got == want


@settings(max_examples=100, deadline=None)
@given(
    buffers(),
    st.integers(0, 30),
    st.integers(1, 12),
    st.lists(st.frozensets(st.sampled_from(Allen), min_size=1), min_size=1, max_size=3),
)
def test_unions_and_intersections_answer_conjunctions_of_alternatives(buf, start, n, cons):
    found = [buf.span()]
    for rels in cons:
        found = intersect(
            found, union(buf.positions(*partner_bounds(r, start, start + n)) for r in rels)
        )
    got = {buf[p].start for lo, hi in found for p in range(lo, hi)}
    want = {
        s.start
        for s in buf
        if all(any(holds(r, start, start + n, s.start, s.end) for r in rels) for rels in cons)
    }
    assert got == want


@settings(max_examples=100, deadline=None)
@given(
    st.integers(0, 10),
    st.integers(0, 10),
    st.frozensets(st.sampled_from(Allen)),
)
def test_two_running_situations_are_decided_only_by_their_prefix_group(s1, s2, rels):
    """decided() with both ends unknown holds iff every way they can end satisfies
    the constraint (the ends tried here cover every order of the two ends)."""
    a, b = Situation("A", (), s1, None, 0, 0), Situation("B", (), s2, None, 0, 0)
    now = max(s1, s2)
    outcomes = [(now + e1, now + e2) for e1 in (1, 2, 3) for e2 in (1, 2, 3)]
    every = all(any(holds(r, s1, e1, s2, e2) for r in rels) for e1, e2 in outcomes)
    assert decided(rels, a, b) == every
