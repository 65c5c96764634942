"""The join-tree matcher: its cost-based join order, v+ sequences with prev, hash joins
on equalities with v+, and the window bound."""

from __future__ import annotations

from typing import Any

from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.jointree import JoinTreeMatcher
from kleene.eventsets.model import SesMatch
from kleene.oracle.eventsets import evaluate

STAR = "PATTERN SEQ({A a}, {B b, C c}) WHERE a.K = b.K AND a.K = c.K WITHIN 100"


def _row(etype: str, t: int, **values: Any) -> dict[str, Any]:
    return {"type": etype, "timestamp": t, **values}


def _keys(matches: list[SesMatch]) -> set[tuple[Any, ...]]:
    return {m.key() for m in matches}


def _star_rows(b_keys: list[int]) -> list[dict[str, Any]]:
    rows = [_row("A", 0, K=1)]
    rows += [_row("B", 1 + i, K=k) for i, k in enumerate(b_keys)]
    rows += [_row("C", 20 + i, K=1) for i in range(3)]
    return rows


def test_join_order_follows_the_estimates() -> None:
    """After the seed a: ten B with ten distinct K (estimate 10 · 1/10 · 1/2) go before
    three C of one K (3 · 1 · 1/2); ten B of one K (10 · 1 · 1/2) go after them."""
    matcher = JoinTreeMatcher(ses_pattern(STAR))
    for b_keys, order in (
        (list(range(10)), ("a", "b", "c")),
        ([1] * 10, ("a", "c", "b")),
    ):
        rows = _star_rows(b_keys)
        found = matcher.matches(rows, list(range(len(rows))))
        assert matcher.last_order == order
        assert _keys(found) == _keys(evaluate(STAR, rows))
        b_count = sum(k == 1 for k in b_keys)
        assert len(found) == b_count * 3  # each B of K=1 with each C


def test_plus_sequences_follow_prev() -> None:
    """Increasing subsequences of V = 1, 3, 2, 4: from e0 six, from e1 and e2 two
    each, from e3 one."""
    query = "PATTERN SEQ({A+ a}) WHERE prev(a.V) < a.V WITHIN 10"
    rows = [_row("A", t, V=v) for t, v in enumerate((1, 3, 2, 4))]
    found = JoinTreeMatcher(ses_pattern(query)).run_all(rows)
    sequences = {m.bindings["a"] for m in found}
    assert sequences == {
        (0,), (0, 1), (0, 2), (0, 3), (0, 1, 3), (0, 2, 3),
        (1,), (1, 3), (2,), (2, 3), (3,),
    }  # fmt: skip
    assert _keys(found) == _keys(evaluate(query, rows))


def test_plus_joined_by_equality_keeps_one_value() -> None:
    """a+ equated to b on K: its events all share b's K (e0 and e2, not e1)."""
    query = "PATTERN SEQ({A+ a}, {B b}) WHERE a.K = b.K WITHIN 10"
    rows = [_row("A", 0, K=1), _row("A", 1, K=2), _row("A", 2, K=1), _row("B", 3, K=1)]
    found = JoinTreeMatcher(ses_pattern(query)).run_all(rows)
    assert {m.bindings["a"] for m in found} == {(0,), (2,), (0, 2)}
    assert _keys(found) == _keys(evaluate(query, rows))


def test_a_window_longer_than_tau_is_cut() -> None:
    """matches() bounds the events by τ from the first even if given more."""
    query = "PATTERN SEQ({A a}, {B b}) WITHIN 5"
    rows = [_row("A", 0), _row("B", 5), _row("B", 6)]
    found = JoinTreeMatcher(ses_pattern(query)).matches(rows, [0, 1, 2])
    assert _keys(found) == {SesMatch({"a": (0,), "b": (1,)}).key()}


def test_the_first_event_must_be_bound() -> None:
    """Only matches starting at events[0] are returned: none when it is a B."""
    query = "PATTERN SEQ({A a}, {B b}) WITHIN 5"
    rows = [_row("B", 0), _row("A", 1), _row("B", 2)]
    assert JoinTreeMatcher(ses_pattern(query)).matches(rows, [0, 1, 2]) == []
