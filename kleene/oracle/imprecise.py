"""Possible-worlds semantics for events with uncertainty intervals (VLDB 2010, section
2.3), by brute force on tiny inputs with exact rational arithmetic.

Each event dict carries ``lower`` and ``upper`` (whole numbers) and optionally ``pmf``,
one probability per point (uniform otherwise). A *world* fixes every event at one point
of its interval; its probability is the product of the chosen points' probabilities.
In each world the point-event oracle (:func:`kleene.oracle.evaluate`) runs on the events
at their points, and the results are collapsed by *signature* (the event ids per
variable): the time range covers every match of the signature in every world, and the
confidence is the total probability of the worlds that produce it.

Readings taken (the frameworks of :mod:`kleene.imprecise` must agree):

* A sequence needs strictly increasing occurrence times (Table 1: t1 < ... < tl), so
  two events at the same instant never follow each other in a match. This is added to
  the query as the conjunct ``v.timestamp > u.timestamp`` for each pair of adjacent
  positive variables u, v: under skip till next match an event at the same instant as
  the last selected one is then not "next" either (Appendix B.2, proof of (2)).
* Events at the same instant in a world have no order among themselves: a world
  produces a match when some ordering of its ties does (under skip till any match the
  ordering does not matter; under skip till next match, several events at the first
  instant after the last selected one can each be the next, Appendix B.2).
* A Kleene variable's events are at distinct instants (strictly increasing within it);
  its signature is the set of its events, listed in arrival order.
* The window is the point-event one (last time minus first time at most W), applied in
  each world.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import groupby, pairwise, permutations, product
from typing import Any

from kleene.lang import ast
from kleene.oracle import OracleMatch, evaluate

Signature = tuple[tuple[str, tuple[Any, ...]], ...]


@dataclass(frozen=True)
class WorldsResult:
    """One collapsed result: ids per variable, the time range, the confidence (exact)
    and the RETURN values of its matches."""

    ids: dict[str, tuple[Any, ...]]
    start: int
    end: int
    confidence: Fraction
    values: dict[str, Any]


def strictly_ordered(query: ast.Query) -> ast.Query:
    """The query with ``v.timestamp > u.timestamp`` for adjacent positive variables (a
    Kleene variable's first element after the previous variable, its last before the
    next, and ``b[i].timestamp > b[i-1].timestamp`` within it)."""
    positive = query.pattern.positive
    kleene = {c.var for c in positive if c.kleene}

    def at(var: str, index: ast.IndexKind) -> ast.AttrRef:
        return ast.AttrRef(var, "timestamp", index if var in kleene else None)

    extra = tuple(
        ast.Binary(ast.BinOp.GT, at(v.var, ast.IndexKind.FIRST), at(u.var, ast.IndexKind.LAST))
        for u, v in pairwise(positive)
    ) + tuple(
        ast.Binary(
            ast.BinOp.GT,
            ast.AttrRef(v, "timestamp", ast.IndexKind.CURRENT),
            ast.AttrRef(v, "timestamp", ast.IndexKind.PREVIOUS),
        )
        for v in sorted(kleene)
    )
    return ast.Query(
        pattern=query.pattern,
        strategy=query.strategy,
        strategy_vars=query.strategy_vars,
        where=query.where + extra,
        within=query.within,
        returns=query.returns,
        output=query.output,
        confidence=query.confidence,
    )


def _points(event: Mapping[str, Any]) -> list[tuple[int, Fraction]]:
    lower, upper = event["lower"], event["upper"]
    n = upper - lower + 1
    pmf = event.get("pmf")
    probs = [Fraction(1, n)] * n if pmf is None else [Fraction(p) for p in pmf]
    return [(lower + k, p) for k, p in enumerate(probs) if p]


def _orderings(
    events: Sequence[Mapping[str, Any]], times: Sequence[int], all_ties: bool
) -> Iterator[list[dict[str, Any]]]:
    """The world's point streams: the events at their instants, in time order, ties in
    every order when ``all_ties`` (else in input order)."""
    placed = sorted(
        (
            {**e, "timestamp": t, "id": e.get("id", i)}
            for i, (e, t) in enumerate(zip(events, times, strict=True))
        ),
        key=lambda e: e["timestamp"],
    )
    groups = [list(g) for _, g in groupby(placed, key=lambda e: e["timestamp"])]
    choices = [permutations(g) if all_ties and len(g) > 1 else [tuple(g)] for g in groups]
    for combo in product(*choices):
        yield [e for group in combo for e in group]


def evaluate_worlds(
    query: ast.Query,
    events: Sequence[Mapping[str, Any]],
    *,
    strategy: ast.Strategy | None = None,
) -> list[WorldsResult]:
    """The collapsed results of ``query`` over interval events (dicts with type, id,
    lower, upper, optional pmf and attributes), ordered by (end, start, ids); the
    query's CONFIDENCE clause applies."""
    strategy = strategy or query.strategy or ast.DEFAULT_STRATEGY
    strict = strictly_ordered(query)
    all_ties = strategy is not ast.Strategy.SKIP_TILL_ANY_MATCH
    confidence: dict[Signature, Fraction] = {}
    ranges: dict[Signature, tuple[int, int]] = {}
    values: dict[Signature, dict[str, Any]] = {}
    for world in product(*(_points(e) for e in events)):
        times = [t for t, _ in world]
        probability = Fraction(1)
        for _, p in world:
            probability *= p
        found: set[Signature] = set()
        arrival = {e.get("id", i): i for i, e in enumerate(events)}
        for stream in _orderings(events, times, all_ties):
            by_id = {e["id"]: e["timestamp"] for e in stream}
            for m in evaluate(strict, stream, strategy=strategy, output=ast.OutputFormat.ALL):
                sig = _signature(m, arrival)
                found.add(sig)
                instants = [by_id[i] for ids in m.ids.values() for i in ids]
                low, high = ranges.get(sig, (min(instants), max(instants)))
                ranges[sig] = (min(low, *instants), max(high, *instants))
                values.setdefault(sig, m.values)
        for sig in found:
            confidence[sig] = confidence.get(sig, Fraction(0)) + probability
    results = [
        WorldsResult(dict(sig), ranges[sig][0], ranges[sig][1], c, values[sig])
        for sig, c in confidence.items()
        if _passes(query.confidence, c)
    ]
    results.sort(key=lambda r: (r.end, r.start, repr(sorted(r.ids.items()))))
    return results


def _signature(m: OracleMatch, arrival: Mapping[Any, int]) -> Signature:
    """The ids per variable; a Kleene variable's in arrival order (the worlds differ in
    the order of its events' times, not in the events it selects)."""
    return tuple((v, tuple(sorted(ids, key=arrival.__getitem__))) for v, ids in m.ids.items())


def _passes(clause: ast.Confidence | None, confidence: Fraction) -> bool:
    if clause is None:
        return True
    threshold = Fraction(clause.threshold)
    return confidence > threshold if clause.op == ">" else confidence >= threshold
