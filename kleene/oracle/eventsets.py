"""The oracle of event-set (SES) patterns: every substitution, checked by Definition 2.

Match-window paper (Cadonna, Gamper, Böhlen), section 3. Straight from the definitions
and sharing nothing with the engines but the parser and WITHIN's unit conversion: the
WHERE conjuncts are read from the AST and interpreted here, so property tests can hold
the SES matchers against it.
Inputs are a dozen events; speed is no concern.

A substitution binds each variable ``v`` to one event and each ``v+`` to a non-empty
chronological sequence, no event twice. It is a match when (1) every constraint holds
under the interpretation of section 3 (a property for every bound event, a relationship
for every pair of events of its two variables, ``prev`` for every two consecutive events
of its variable), (2) every event of a set comes before (by time, strictly) every event
of the next set, and (3) the first and the last event lie within τ.

Readings (docs/semantics.md, "Event-set patterns"):

* Events are the rows of :mod:`kleene.eventsets.compile` in time order; their positions
  (indices) give the chronological order, ties in time broken by position.
* A comparison is false when an operand is missing (None or absent), and an ordering
  comparison is false unless both values are numbers (booleans are not), both strings
  or both datetimes.
* **Earliest**: no single binding ``v/~e`` can be replaced by another sequence that starts
  earlier, but not before the first event of γ, with the result still a match.
* **Maximal**: no binding of a ``v+`` can be extended by one event that comes after the
  first event of γ (inserted at its place in time), with the result still a match.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from itertools import combinations, pairwise, product
from typing import Any

from kleene.eventsets.compile import TIME, TYPE, window_units
from kleene.eventsets.model import SesMatch
from kleene.lang import ast, parse_ses

Row = Mapping[str, Any]
Binding = dict[str, tuple[int, ...]]

OUTPUTS = ("all", "earliest", "maximal", "earliest-maximal")


def _orderable(a: Any, b: Any) -> bool:
    """Two numbers (booleans are not), two strings or two datetimes."""
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, int | float) and isinstance(b, int | float):
        return True
    return any(isinstance(a, k) and isinstance(b, k) for k in (str, dt.datetime))


def _holds(op: ast.BinOp, a: Any, b: Any) -> bool:
    if a is None or b is None:
        return False
    if op is ast.BinOp.EQ:
        return bool(a == b)
    if op is ast.BinOp.NE:
        return bool(a != b)
    if not _orderable(a, b):
        return False
    try:
        if a == b:
            return op in (ast.BinOp.LE, ast.BinOp.GE)
        return bool(a < b) == (op in (ast.BinOp.LT, ast.BinOp.LE))
    except TypeError:  # naive and aware datetimes
        return False


class _Oracle:
    def __init__(self, query: ast.SesQuery, rows: Sequence[Row], window: float) -> None:
        self.query = query
        self.rows = rows
        self.window = window
        self.members = [m for s in query.pattern.sets for m in s.members]
        self.set_of = {m.var: i for i, s in enumerate(query.pattern.sets) for m in s.members}

    def value(self, position: int, attr: str) -> Any:
        return self.rows[position].get(attr)

    def operand(self, node: ast.Expr, position: int) -> Any:
        if isinstance(node, ast.Literal):
            return node.value
        assert isinstance(node, ast.AttrRef | ast.Prev)
        return self.value(position, node.attr)

    def conjunct(self, node: ast.Expr, g: Binding) -> bool:
        """I(θγ) of section 3 for one WHERE conjunct."""
        assert isinstance(node, ast.Binary)
        left, right = node.left, node.right
        prev = left if isinstance(left, ast.Prev) else right
        if isinstance(prev, ast.Prev):
            # prev(v.A) reads the earlier event of each consecutive pair, v.A the later
            pairs = list(pairwise(g[prev.var]))
            if prev is right:
                pairs = [(later, earlier) for earlier, later in pairs]
            return all(
                _holds(node.op, self.value(x, prev.attr), self.value(y, prev.attr))
                for x, y in pairs
            )
        lefts = g[left.var] if isinstance(left, ast.AttrRef) else (-1,)
        rights = g[right.var] if isinstance(right, ast.AttrRef) else (-1,)
        return all(
            _holds(node.op, self.operand(left, x), self.operand(right, y))
            for x in lefts
            for y in rights
        )

    def is_match(self, g: Binding) -> bool:
        """Definition 2 for a substitution (each binding sorted, no event twice)."""
        used = [p for seq in g.values() for p in seq]
        if len(used) != len(set(used)):
            return False
        for m in self.members:
            if any(self.value(p, TYPE) != m.event_type for p in g[m.var]):
                return False
        if not all(self.conjunct(c, g) for c in self.query.where):
            return False
        for vi, vj in product(self.members, self.members):
            consecutive = self.set_of[vj.var] == self.set_of[vi.var] + 1
            last, first = g[vi.var][-1], g[vj.var][0]
            if consecutive and not _before(self.value(last, TIME), self.value(first, TIME)):
                return False
        times = [self.value(p, TIME) for p in used]
        return bool(max(times) - min(times) <= self.window)

    def candidates(self, var: str, plus: bool) -> list[tuple[int, ...]]:
        """Every sequence ``var`` may bind (events of its type, in order)."""
        member = next(m for m in self.members if m.var == var)
        events = [p for p, r in enumerate(self.rows) if r.get(TYPE) == member.event_type]
        if not plus:
            return [(p,) for p in events]
        return [c for k in range(1, len(events) + 1) for c in combinations(events, k)]

    def substitutions(self) -> Iterator[Binding]:
        names = [m.var for m in self.members]
        options = [self.candidates(m.var, m.plus) for m in self.members]
        for choice in product(*options):
            yield dict(zip(names, choice, strict=True))

    def earliest(self, g: Binding) -> bool:
        first = min(p for seq in g.values() for p in seq)
        for m in self.members:
            start = g[m.var][0]
            for seq in self.candidates(m.var, m.plus):
                if first <= seq[0] < start and self.is_match({**g, m.var: seq}):
                    return False
        return True

    def maximal(self, g: Binding) -> bool:
        first = min(p for seq in g.values() for p in seq)
        used = {p for seq in g.values() for p in seq}
        for m in self.members:
            if not m.plus:
                continue
            for p in range(first + 1, len(self.rows)):
                if p not in used and self.is_match({**g, m.var: tuple(sorted((*g[m.var], p)))}):
                    return False
        return True


def _before(a: Any, b: Any) -> bool:
    return bool(a < b)


def evaluate(
    query: str | ast.SesQuery,
    rows: Sequence[Row],
    *,
    output: str = "all",
    time_unit: str | None = None,
    window: float | None = None,
) -> list[SesMatch]:
    """The matches of an SES query over rows in time order (see the module docstring),
    sorted by their canonical key. ``output`` is one of :data:`OUTPUTS`; τ comes from
    ``window`` (in time units) when given, otherwise from WITHIN and ``time_unit``."""
    node = parse_ses(query) if isinstance(query, str) else query
    if output not in OUTPUTS:
        raise ValueError(f"output must be one of {OUTPUTS}")
    if window is None:
        assert node.within is not None
        window = window_units(node.within, time_unit, datetimes=False)
    oracle = _Oracle(node, rows, window)
    found = [g for g in oracle.substitutions() if oracle.is_match(g)]
    if output in ("earliest", "earliest-maximal"):
        found = [g for g in found if oracle.earliest(g)]
    if output in ("maximal", "earliest-maximal"):
        found = [g for g in found if oracle.maximal(g)]
    return sorted((SesMatch(g) for g in found), key=SesMatch.key)
