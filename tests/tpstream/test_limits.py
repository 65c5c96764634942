"""``max_matches`` on TPStream queries (kleene.runtime.limits): a pattern whose matches
run away stops at the limit with :class:`MatchLimitError`, after the matches before the
limit were handed out, as SASE+ queries do."""

from __future__ import annotations

from typing import Any

import pytest

import kleene
from kleene.errors import MatchLimitError
from kleene.runtime.limits import DEFAULT_MAX_MATCHES
from kleene.tpstream.query import TemporalQuery

RUNAWAY = "FROM S DEFINE A AS S.a = 1, B AS S.b = 1 PATTERN A before B WITHIN 1000"


def stream(n: int) -> list[dict[str, Any]]:
    """n A situations [4k, 4k+1) and n B situations [4k+2, 4k+3): A number i is before
    B number j for every j >= i, so n(n+1)/2 matches."""
    return [
        {"type": "S", "timestamp": t, "id": t, "a": int(t % 4 == 0), "b": int(t % 4 == 2)}
        for t in range(4 * n)
    ]


def everything(n: int) -> list[Any]:
    return TemporalQuery(RUNAWAY, max_matches=None).run(stream(n))


def test_the_matches_grow_quadratically_without_a_limit() -> None:
    assert len(everything(10)) == 55
    assert TemporalQuery(RUNAWAY).max_matches == DEFAULT_MAX_MATCHES


@pytest.mark.parametrize("batch", [1, 7, 40])
def test_the_matches_before_the_limit_are_handed_out_then_it_raises(batch: int) -> None:
    events, handed = stream(10), []
    m = TemporalQuery(RUNAWAY, max_matches=20).matcher(on_matches=handed.extend)
    with pytest.raises(MatchLimitError, match="max_matches=20") as raised:
        for start in range(0, len(events), batch):
            m.push(events[start : start + batch])
        m.flush()
    assert "--max-matches" in str(raised.value)
    assert handed == everything(10)[:20]


def test_a_limit_the_matches_reach_is_no_error() -> None:
    assert len(TemporalQuery(RUNAWAY, max_matches=55).run(stream(10))) == 55
    with pytest.raises(MatchLimitError):
        kleene.compile(RUNAWAY, max_matches=54).run(stream(10))


def test_a_resumed_matcher_counts_from_its_resumption() -> None:
    events, query = stream(10), TemporalQuery(RUNAWAY, max_matches=40)
    first = query.matcher()
    found = first.push(events[:24])  # 6 A and 6 B situations: 21 matches
    resumed = query.matcher(state=first.snapshot())
    found += resumed.push(events[24:]) + resumed.flush()  # 34 more: over 40 in all
    assert found == everything(10)


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="max_matches"):
        TemporalQuery(RUNAWAY, max_matches=-1)
