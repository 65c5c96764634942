"""TemporalQuery with its shared adaptive planner (kleene/tpstream/planning.py): the
matches equal the oracle's whatever order the planner switches to, explain() names the
order and why, and snapshots re-derive the planner's statistics."""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import given, settings

from kleene.oracle import tpstream as oracle
from kleene.tpstream.query import TemporalQuery
from kleene.tpstream.runtime import TemporalMatcher
from tests.tpstream.streams import closed, events, queries
from tests.tpstream.test_query import identity
from tests.tpstream.test_runtime import DRIVERS, cars


def three_cars() -> list[dict[str, Any]]:
    return cars() + [dict(r, car_id=3) for r in cars() if r["car_id"] == 1]


# re-plan on any drift, averages that follow each observation closely: many switches
EAGER = {"alpha": 0.9, "threshold": 0.0}


def eager_matcher(q: TemporalQuery, state: bytes | None = None) -> TemporalMatcher:
    m = q.matcher(state=state)
    return TemporalMatcher(
        q.plan,
        q.fields,
        time_unit=q.time_unit,
        make_matcher=m.make_matcher,
        fingerprint=q.fingerprint(),
        state=state,
        planner_options=EAGER,
    )


@settings(max_examples=40, deadline=None)
@given(queries(), events())
def test_an_eagerly_replanning_query_equals_the_oracle(
    text: str, stream: list[dict[str, Any]]
) -> None:
    stream = closed(stream)
    _, expected = oracle.matches(text, stream)
    m = eager_matcher(TemporalQuery(text))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = m.push(stream) + m.flush()
    assert sorted(identity(x) for x in found) == sorted(identity(x) for x in expected)
    if m.planner is not None:  # every partition runs the planner's current order
        assert {p.matcher.order for p in m.partitions.values()} <= {m.planner.order}


def test_the_planner_pools_every_partition_and_switches() -> None:
    """Cars 1 and 3 drive alike (car 2 never accelerates hard): one planner observes
    the updates of every partition; with eager settings the statistics move off
    Table 3's and it re-plans."""
    rows = sorted(three_cars(), key=lambda r: r["timestamp"])
    m = eager_matcher(TemporalQuery(DRIVERS))
    found = m.push(rows) + m.flush()
    assert m.planner is not None
    assert sorted(x.partition for x in found) == [(1,), (3,)]
    inner = m.planner.planner
    alone = eager_matcher(TemporalQuery(DRIVERS))
    alone.push([r for r in rows if r["car_id"] == 1])
    assert alone.planner is not None
    assert inner.updates > alone.planner.planner.updates > 0
    assert inner.replanned > 0
    assert "(observed)" in m.planner.explanation()


def test_explain_shows_the_order_its_cost_and_why() -> None:
    text = TemporalQuery(DRIVERS).explain()
    assert "evaluation order: A -> B -> C (estimated cost" in text
    assert "next best" in text and "Table 3" in text
    assert "A: CS.accel > 8 [AT LEAST 2]" in text
    fixed = TemporalQuery(DRIVERS, order=["C", "B", "A"]).explain()
    assert "evaluation order: C -> B -> A (fixed by the order option" in fixed
    assert "initial choice would be A -> B -> C" in fixed


def test_a_resumed_matcher_rederives_the_planner() -> None:
    """The snapshot holds no planner statistics: the resumed matcher's planner starts
    from the initial plan, every restored partition runs its order, and the matches
    are those of an uninterrupted run."""
    q = TemporalQuery(DRIVERS)
    rows = three_cars()
    rows.sort(key=lambda r: r["timestamp"])
    first = eager_matcher(q)
    found = first.push(rows[:20])
    assert first.planner is not None and first.planner.planner.updates > 0
    second = eager_matcher(q, first.snapshot())
    assert second.planner is not None and second.planner.planner.updates == 0
    assert {p.matcher.order for p in second.partitions.values()} == {second.planner.order}
    found += second.push(rows[20:]) + second.flush()
    whole = q.matcher()
    expected = whole.push(rows) + whole.flush()
    assert [identity(m) for m in found] == [identity(m) for m in expected]
