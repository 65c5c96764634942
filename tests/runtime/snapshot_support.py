"""Shared by the snapshot tests: results in a comparable form, and resumed runs."""

from __future__ import annotations

from typing import Any

import kleene
from kleene.collapsed import CollapsedMatch
from kleene.lang import ast
from kleene.runtime import snapshot
from kleene.runtime.matcher import Matcher
from tests.helpers import pieces

# (engine, strategy, output) combinations every engine evaluates
ANY = ast.Strategy.SKIP_TILL_ANY_MATCH
COMBINATIONS = [
    *(
        (engine, strategy, output)
        for engine in ("nfa", "merge")
        for strategy in ast.Strategy
        for output in (ast.OutputFormat.ALL, ast.OutputFormat.NON_OVERLAP)
    ),
    *(("backtrack", strategy, ast.OutputFormat.ALL) for strategy in ast.Strategy),
    *(
        (engine, ANY, output)
        for engine in ("postpone", "postpone-late")
        for output in (ast.OutputFormat.ALL, ast.OutputFormat.COLLAPSED)
    ),
]


def comparable(results: list[Any]) -> list[Any]:
    """Results as plain values, in the order they came (collapsed ones with their
    expansion)."""
    out = []
    for r in results:
        if isinstance(r, CollapsedMatch):
            out.append(
                (
                    r.singles,
                    r.candidates,
                    r.first_fixed,
                    r.last_fixed,
                    r.start,
                    r.end,
                    r.partition,
                    r.exact,
                    comparable(r.expand()),
                )
            )
        else:
            out.append((r.variables, r.positions, r.start, r.end, r.partition, r.returned))
    return out


def run_in_pieces(
    q: kleene.Query, events: list[dict[str, Any]], cuts: list[int], resume: bool
) -> tuple[list[Any], list[Any]]:
    """Push ``events`` cut at ``cuts`` (then flush); with ``resume``, every piece goes to
    a new matcher resumed from the previous one's snapshot. The results and the
    rejected events."""
    m = q.matcher()
    found: list[Any] = []
    rejected: list[Any] = []
    for part in pieces(events, cuts):
        found += m.push(part)
        if resume:
            m = q.matcher(state=m.snapshot())
    found += m.flush()
    rejected += m.take_rejected()
    return comparable(found), rejected


def tree_of(m: Matcher) -> Any:
    """The state tree of a matcher's snapshot."""
    return snapshot.unseal(m.snapshot(), snapshot.QUERY, m.fingerprint)


def reseal(m: Matcher, tree: Any) -> bytes:
    """A well-framed snapshot of ``tree`` for ``m``'s query (a crafted payload)."""
    return snapshot.seal(snapshot.QUERY, m.fingerprint, tree)
