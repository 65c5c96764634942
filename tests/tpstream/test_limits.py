"""``max_matches`` and ``max_runs`` on TPStream queries (kleene.runtime.limits): a
pattern whose matches run away stops at the limit with :class:`MatchLimitError`, after
the matches before the limit were handed out, as SASE+ queries do, and the join that
enumerates them stops there; the situations the matcher holds over all partitions are
bounded by ``max_runs`` (:class:`RunLimitError`)."""

from __future__ import annotations

from typing import Any

import pytest

import kleene
from kleene.errors import MatchLimitError, RunLimitError
from kleene.runtime.limits import DEFAULT_MAX_MATCHES, DEFAULT_MAX_RUNS
from kleene.tpstream.matcher import _Found
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


# The exploding query (issue 25): A and B situations alternate event by event,
# C situations every three events, so the matches of A before B before C grow with the
# cube of the stream.
EXPLODING = (
    "FROM S DEFINE A AS S.x = 0, B AS S.x = 1, C AS S.y = 0 "
    "PATTERN A before B AND B before C WITHIN 100000"
)


def exploding(n: int) -> list[dict[str, Any]]:
    return [{"type": "S", "timestamp": t, "x": t % 2, "y": (t // 3) % 2} for t in range(n)]


@pytest.mark.parametrize("low_latency", [True, False])
def test_the_join_stops_at_the_limit(low_latency: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """max_matches is counted as performMatch produces configurations: past the limit
    the join is abandoned, not run to its end (thousands of matches per C here)."""
    published = []
    publish = _Found.publish

    def counted(self: _Found, ws: Any) -> Any:
        published.append(1)
        return publish(self, ws)

    monkeypatch.setattr(_Found, "publish", counted)
    query = TemporalQuery(EXPLODING, max_matches=10, low_latency=low_latency)
    handed: list[Any] = []
    with pytest.raises(MatchLimitError, match="max_matches=10"):
        query.matcher(on_matches=handed.extend).run(exploding(2000))
    assert len(handed) == 10
    assert len(published) == 11  # the one past the limit, and no more
    # the same first ten as a run without a limit over a prefix of the stream
    everything = TemporalQuery(EXPLODING, max_matches=None, low_latency=low_latency)
    assert handed == everything.run(exploding(30))[:10]


def test_the_default_run_limit_and_a_bad_one() -> None:
    assert TemporalQuery(RUNAWAY).max_runs == DEFAULT_MAX_RUNS
    assert kleene.compile(RUNAWAY, max_runs=7).max_runs == 7
    with pytest.raises(ValueError, match="max_runs"):
        TemporalQuery(RUNAWAY, max_runs=0)


def test_the_situations_held_are_bounded_by_max_runs() -> None:
    """RUNAWAY keeps every A situation within its window of 1000 for a later B: 10 A
    and 10 B situations are held (as in RUNAWAY's stream); limits below raise."""
    assert len(TemporalQuery(RUNAWAY, max_runs=20, max_matches=None).run(stream(10))) == 55
    handed: list[Any] = []
    query = TemporalQuery(RUNAWAY, max_runs=12, max_matches=None)
    with pytest.raises(RunLimitError, match="max_runs=12") as raised:
        query.matcher(on_matches=handed.extend).run(stream(10))
    assert "--max-runs" in str(raised.value) and "situations" in str(raised.value)
    assert handed == everything(10)[: len(handed)] and handed


def test_the_window_keeps_the_situations_held_few() -> None:
    """With a window of 10 a long stream holds only the situations of its last 10
    time units: a small max_runs never trips."""
    text = RUNAWAY.replace("WITHIN 1000", "WITHIN 10")
    found = TemporalQuery(text, max_runs=8, max_matches=None).run(stream(2000))
    assert len(found) == 2000 * 3 - 3  # each B: the A before it, and the two before that


PARTED = "FROM S PARTITION BY k DEFINE A AS S.a = 1, B AS S.b = 1 PATTERN A before B WITHIN 50"


def quiet(keys: range, at: int) -> list[dict[str, Any]]:
    """One A situation [at, at + 1) in each partition of ``keys``, nothing after."""
    return [
        {"type": "S", "timestamp": at + d, "k": k, "a": int(d == 0), "b": 0}
        for k in keys
        for d in (0, 1)
    ]


def test_max_runs_counts_every_partition_and_advance_to_frees_quiet_ones() -> None:
    """Each partition holds its one A for a later B; 60 partitions hold 60 > 40. Time
    passing beyond the window (advance_to) lets the first 30 give theirs up."""
    query = TemporalQuery(PARTED, max_runs=40)
    m = query.matcher()
    m.push(quiet(range(30), 0))
    with pytest.raises(RunLimitError, match="max_runs=40"):
        m.push(quiet(range(30, 60), 100))
    m = query.matcher()
    m.push(quiet(range(30), 0))
    assert m.advance_to(100) == []
    m.push(quiet(range(30, 60), 100))
    assert m.flush() == [] and m.take_rejected() == []
