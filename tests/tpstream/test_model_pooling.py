"""The public model types stay immutable value types with their own constructors, and
the shared planner pools the same statistics from a matcher's live counters as from
its ``statistics()`` copies (kleene/tpstream/model.py, planning.py)."""

from __future__ import annotations

import dataclasses
import pickle
from collections import defaultdict
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.tpstream.matcher import SituationMatcher
from kleene.tpstream.model import Allen, Constraint, Situation, TemporalMatch, TemporalPattern
from kleene.tpstream.planning import SharedPlanner

BEFORE = frozenset({Allen.BEFORE})
Q3 = TemporalPattern(
    ("A", "B", "C"),
    (Constraint("A", "B", BEFORE), Constraint("A", "C", BEFORE), Constraint("B", "C", BEFORE)),
    60,
)


def test_situations_are_frozen_values() -> None:
    s = Situation("A", ("k",), 1, 5, 0, 3, {"n": 2})
    assert s == Situation("A", ("k",), 1, 5, 0, 3, {"n": 2})
    assert s != Situation("A", ("k",), 1, 6, 0, 3, {"n": 2})
    assert repr(s) == (
        "Situation(symbol='A', key=('k',), start=1, end=5, first=0, last=3, aggregates={'n': 2}"
        ", first_id=None, last_id=None)"
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.end = 7  # type: ignore[misc]
    assert [f.name for f in dataclasses.fields(s)] == [
        *("symbol", "key", "start", "end", "first", "last", "aggregates", "first_id", "last_id")
    ]
    # the ids of its first and last events take part in equality, and name the situation
    named = Situation("A", ("k",), 1, 5, 0, 3, {"n": 2}, "e0", "e3")
    assert named != s and named.ids() == ("e0", "e3")
    assert Situation("A", (), 1, 2, 4, 4, None, "e4", "e4").ids() == ("e4",)
    moved = dataclasses.replace(s, start=2)
    assert (moved.start, moved.end, moved.aggregates, s.start) == (2, 5, {"n": 2}, 1)
    assert pickle.loads(pickle.dumps(s)) == s
    # the default aggregates are a fresh mapping per situation, as default_factory gave
    one, two = Situation("A", (), 1, None, 0, 0), Situation("A", (), 1, None, 0, 0)
    assert one.aggregates == {} and one.aggregates is not two.aggregates
    assert not one.finished and s.finished
    assert hash(Situation("A", (), 1, 2, 0, 0, frozenset())) == hash(  # type: ignore[arg-type]
        Situation("A", (), 1, 2, 0, 0, frozenset())  # type: ignore[arg-type]
    )


def test_matches_are_frozen_values() -> None:
    s = Situation("A", (), 1, 5, 0, 3)
    m = TemporalMatch((), {"A": s}, 5, 4)
    assert m == TemporalMatch((), {"A": s}, 5, 4, {}) and m.returned == {}
    assert m != TemporalMatch((), {"A": s}, 5, 5)
    assert repr(m).startswith("TemporalMatch(partition=(), situations={'A': Situation(")
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.time = 1  # type: ignore[misc]
    assert dataclasses.replace(m, returned={"x": 1}).returned == {"x": 1}
    assert pickle.loads(pickle.dumps(m)) == m


class StatisticsOnly:
    """A matcher seen only through ``statistics()``, the copies (no ``counters``)."""

    def __init__(self, matcher: SituationMatcher) -> None:
        self.matcher = matcher

    def statistics(self) -> object:
        return self.matcher.statistics()

    def set_order(self, order: Sequence[str]) -> None:
        self.matcher.set_order(order)


@st.composite
def streams(draw: st.DrawFn) -> list[tuple[int, list[Situation], list[Situation]]]:
    """The updates a deriver makes for one partition: each symbol's situations
    disjoint, visible at their start and finished at their end."""
    started: dict[int, list[Situation]] = defaultdict(list)
    finished: dict[int, list[Situation]] = defaultdict(list)
    for x in Q3.symbols:
        t = draw(st.integers(0, 5))
        for _ in range(draw(st.integers(0, 8))):
            length = draw(st.integers(1, 6))
            started[t].append(Situation(x, (), t, None, 0, 0))
            finished[t + length].append(Situation(x, (), t, t + length, 0, 0))
            t += length + draw(st.integers(1, 8))
    return [(t, started[t], finished[t]) for t in sorted(set(started) | set(finished))]


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), streams()), min_size=1, max_size=4))
def test_live_counters_pool_like_the_statistics(
    feeds: list[tuple[int, list[tuple[int, list[Situation], list[Situation]]]]],
) -> None:
    # Two partitions fed in turns; one planner reads the live counters, the other the
    # statistics' copies: the same observations, averages and orders. (Keeping the
    # live lists instead of copies would pool no growth at all.)
    options = {"alpha": 0.3, "threshold": 0.05, "initial_buffer_size": 2}
    live = [SituationMatcher(Q3), SituationMatcher(Q3)]
    copied = [SituationMatcher(Q3), SituationMatcher(Q3)]
    wrapped = [StatisticsOnly(m) for m in copied]
    p_live, p_copied = SharedPlanner(Q3, **options), SharedPlanner(Q3, **options)
    for m in live:
        p_live.adopt(m)
    for w in wrapped:
        p_copied.adopt(w)
    clock = [0, 0]
    for part, updates in feeds:
        for t, started, finished in updates:
            at = clock[part] + t
            shift = clock[part]
            moved_s = [dataclasses.replace(s, start=s.start + shift) for s in started]
            moved_f = [dataclasses.replace(s, start=s.start + shift, end=at) for s in finished]
            assert live[part].update(at, moved_s, moved_f) == copied[part].update(
                at, moved_s, moved_f
            )
            p_live.observe(live[part], live)
            p_copied.observe(wrapped[part], wrapped)
            assert p_live.candidates == p_copied.candidates
            assert p_live.survivors == p_copied.survivors
            assert p_live.queries == p_copied.queries
            assert p_live.planner.sizes == p_copied.planner.sizes
            assert p_live.planner.selectivities == p_copied.planner.selectivities
            assert p_live.order == p_copied.order
        clock[part] += updates[-1][0] + 10 if updates else 0
    assert sum(p_live.candidates) == sum(sum(m.statistics().candidates) for m in live)
