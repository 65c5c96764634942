"""The TPStream oracle: situations and temporal matches straight from the definitions
of EDBT 2018, section 4, by brute force, on small inputs.

Situations (Definitions 6-8): every contiguous subsequence ``E[i..j]`` of a partition's
events is tried; it is a situation when every event satisfies the predicate, the events
just before and after it do not (the one after must exist: it gives ``te``) and
``te - ts`` lies within the duration constraint. Matches (Definitions 11-13): every
combination of one situation per symbol (the cross product), kept when each constraint
holds by at least one of its relations (Table 1, written out here again) and the
configuration is established within the window: ``t_d(P) - min ts <= WITHIN``, with
``t_d(P)`` section 5.3.1's earliest detection time (docs/semantics.md, "Situations and
temporal patterns": the reading of Definition 12 under which reporting a match early
and waiting for its last end agree). Predicates and RETURN items are read from the AST by
this module's own small interpreter (the rules of docs/semantics.md, "Arithmetic and
types"), not by the compiled code the engine runs.

Input: mappings with a numeric ``timestamp`` (strictly increasing within a partition)
and every attribute the query reads; the events an engine would reject are not given
to the oracle.
"""

from __future__ import annotations

import datetime as dt
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from typing import Any

from kleene.lang import ast
from kleene.lang.tpstream import Duration, Summary, TemporalQueryText, parse
from kleene.times import time_unit_seconds


class _NoValue(Exception):
    """An expression has no value (an error of the expression rules)."""


@dataclass(frozen=True)
class OracleSituation:
    symbol: str
    key: tuple[Any, ...]
    start: Any
    end: Any
    events: tuple[Mapping[str, Any], ...]  # the situation's events, in order
    positions: tuple[int, ...]


@dataclass(frozen=True)
class OracleMatch:
    key: tuple[Any, ...]
    situations: Mapping[str, OracleSituation]
    time: Any  # the largest end (Definition 12)

    def returned(self, query: TemporalQueryText, upto: Any = None) -> dict[str, Any]:
        """The RETURN values; with ``upto``, a situation not finished by then is read as
        known at that time: its events up to ``upto``, no end and no duration."""
        return {item.name: _value(item.expr, self, upto) for item in query.returns}


# --- the expression rules ---------------------------------------------------------------


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _ordered(left: Any, right: Any) -> bool:
    return (
        (_number(left) and _number(right))
        or (isinstance(left, str) and isinstance(right, str))
        or (isinstance(left, dt.datetime) and isinstance(right, dt.datetime))
    )


_ARITH: dict[ast.BinOp, Callable[[Any, Any], Any]] = {
    ast.BinOp.ADD: operator.add,
    ast.BinOp.SUB: operator.sub,
    ast.BinOp.MUL: operator.mul,
    ast.BinOp.DIV: operator.truediv,
    ast.BinOp.MOD: operator.mod,
}
_ORDER = {
    ast.BinOp.LT: operator.lt,
    ast.BinOp.LE: operator.le,
    ast.BinOp.GT: operator.gt,
    ast.BinOp.GE: operator.ge,
}


def evaluate(node: ast.Expr, read: Callable[[ast.AttrRef], Any]) -> Any:
    """The value of ``node``; ``read`` gives a reference's value (None: no value)."""
    if isinstance(node, ast.Literal):
        return node.value
    if isinstance(node, ast.AttrRef):
        value = read(node)
        if value is None:
            raise _NoValue
        return value
    if isinstance(node, ast.Unary):
        value = evaluate(node.operand, read)
        if node.op is ast.UnOp.NEG:
            if not _number(value):
                raise _NoValue
            return -value
        if not isinstance(value, bool):
            raise _NoValue
        return not value
    assert isinstance(node, ast.Binary)
    left = evaluate(node.left, read)
    if node.op in (ast.BinOp.AND, ast.BinOp.OR):
        if not isinstance(left, bool):
            raise _NoValue
        if left is (node.op is ast.BinOp.OR):
            return left
        right = evaluate(node.right, read)
        if not isinstance(right, bool):
            raise _NoValue
        return right
    right = evaluate(node.right, read)
    if node.op is ast.BinOp.EQ:
        return left == right
    if node.op is ast.BinOp.NE:
        return left != right
    if node.op in _ORDER:
        if not _ordered(left, right):
            raise _NoValue
        return _ORDER[node.op](left, right)
    if not (_number(left) and _number(right)):
        raise _NoValue
    if node.op in (ast.BinOp.DIV, ast.BinOp.MOD) and right == 0:
        raise _NoValue
    return _ARITH[node.op](left, right)


def holds(predicate: ast.Expr, event: Mapping[str, Any]) -> bool:
    try:
        return evaluate(predicate, lambda ref: event[ref.attr]) is True
    except _NoValue:
        return False


# --- aggregates -----------------------------------------------------------------------


def summary(func: str, attr: str, s: OracleSituation, upto: Any = None) -> Any:
    """``func(s.attr)`` over the situation's events (those up to ``upto`` when given and
    the situation had not finished by then); None when it has no value."""
    done = upto is None or s.end <= upto
    events = [e for e in s.events if done or e["timestamp"] <= upto]
    if func == "start":
        return s.start
    if func in ("end", "duration"):
        if not done:
            return None
        return s.end if func == "end" else s.end - s.start
    if func == "count":
        return len(events)
    values = [e[attr] for e in events]
    if func == "first":
        return values[0]
    if func == "last":
        return values[-1]
    if func in ("sum", "avg"):
        if not all(_number(v) for v in values):
            return None
        return sum(values) if func == "sum" else sum(values) / len(values)
    if not all(_ordered(v, values[0]) for v in values):
        return None
    return min(values) if func == "min" else max(values)


def _value(node: ast.Expr, match: OracleMatch, upto: Any) -> Any:
    def read(ref: ast.AttrRef) -> Any:
        assert isinstance(ref, Summary)
        return summary(ref.func, ref.attr, match.situations[ref.var], upto)

    try:
        return evaluate(node, read)
    except _NoValue:
        return None


# --- Definitions 6-8: situations --------------------------------------------------------


def _length(d: Duration | None, time_unit: str | None) -> Any:
    if d is None or d.unit is None:
        return None if d is None else d.amount
    if time_unit is None:
        raise ValueError("a duration with a unit needs time_unit")
    return d.value / time_unit_seconds(time_unit)


def partitions(query: TemporalQueryText, events: Sequence[Mapping[str, Any]]) -> dict:
    """The events of each partition key, in input order, with their input positions."""
    names = [name.rpartition(".")[2] for name, _ in query.partition]
    found: dict[tuple[Any, ...], list[tuple[int, Mapping[str, Any]]]] = {}
    for position, e in enumerate(events):
        found.setdefault(tuple(e[n] for n in names), []).append((position, e))
    return found


def derive(
    query: TemporalQueryText,
    events: Sequence[Mapping[str, Any]],
    time_unit: str | None = None,
) -> dict[tuple[Any, ...], dict[str, list[OracleSituation]]]:
    """Per partition key and symbol, the derived situations (Definition 8)."""
    out: dict[tuple[Any, ...], dict[str, list[OracleSituation]]] = {}
    for key, part in partitions(query, events).items():
        out[key] = {}
        for d in query.definitions:
            low, high = _length(d.minimum, time_unit), _length(d.maximum, time_unit)
            ok = [holds(d.predicate, e) for _, e in part]
            found = []
            for i, j in product(range(len(part)), repeat=2):
                if j < i or j + 1 >= len(part) or not all(ok[i : j + 1]):
                    continue
                if (i > 0 and ok[i - 1]) or ok[j + 1]:
                    continue
                ts, te = part[i][1]["timestamp"], part[j + 1][1]["timestamp"]
                if (low is not None and te - ts < low) or (high is not None and te - ts > high):
                    continue
                run = part[i : j + 1]
                found.append(
                    OracleSituation(
                        d.symbol, key, ts, te, tuple(e for _, e in run), tuple(p for p, _ in run)
                    )
                )
            out[key][d.symbol] = found
    return out


# --- Definitions 9-13: matches ----------------------------------------------------------

# Table 1: [a.ts, a.te) R [b.ts, b.te)
_DELTA: dict[str, Callable[[Any, Any, Any, Any], bool]] = {
    "before": lambda as_, ae, bs, be: ae < bs,
    "meets": lambda as_, ae, bs, be: ae == bs,
    "overlaps": lambda as_, ae, bs, be: as_ < bs < ae < be,
    "starts": lambda as_, ae, bs, be: as_ == bs and ae < be,
    "during": lambda as_, ae, bs, be: bs < as_ and ae < be,
    "finishes": lambda as_, ae, bs, be: bs < as_ and ae == be,
    "equals": lambda as_, ae, bs, be: as_ == bs and ae == be,
}
_INVERSES = {
    "after": "before",
    "met-by": "meets",
    "overlapped-by": "overlaps",
    "started-by": "starts",
    "contains": "during",
    "finished-by": "finishes",
}


def relation_holds(name: str, a: OracleSituation, b: OracleSituation) -> bool:
    """``a name b`` by Table 1; an inverse relation is its pair read the other way."""
    name = name.lower().replace("_", "-")
    if name in _INVERSES:
        return _DELTA[_INVERSES[name]](b.start, b.end, a.start, a.end)
    return _DELTA[name](a.start, a.end, b.start, b.end)


# Section 5.3.1's prefix groups: the relations left open when both situations have
# started and neither has ended, by the order of their starts (a first, together, b first)
_GROUPS = (
    frozenset({"overlaps", "finished-by", "contains"}),
    frozenset({"starts", "equals", "started-by"}),
    frozenset({"overlapped-by", "finishes", "during"}),
)


def established(query: TemporalQueryText, chosen: Mapping[str, OracleSituation]) -> Any:
    """When a configuration is first known to match (section 5.3.1, ``t_d(P)``): per
    constraint the third of the four endpoints in time order (t3), or the later start
    when the constraint holds the whole prefix group of the two starts' order; the
    largest over the constraints and the starts."""
    t = max(s.start for s in chosen.values())
    for group in query.constraints:
        a, b = chosen[group[0].left], chosen[group[0].right]
        names = {_oriented(r, group[0].left) for r in group}
        order = 0 if a.start < b.start else 1 if a.start == b.start else 2
        if _GROUPS[order] <= names:
            t = max(t, a.start, b.start)
        else:
            t = max(t, sorted([a.start, a.end, b.start, b.end])[2])
    return t


def _oriented(r: Any, left: str) -> str:
    """A relation of a constraint as ``left R right`` (alternatives may be written
    either way round)."""
    name = r.name.lower().replace("_", "-")
    if r.left == left:
        return name
    inverse = {v: k for k, v in _INVERSES.items()} | _INVERSES
    return inverse.get(name, name)


def matches(
    text: str, events: Sequence[Mapping[str, Any]], time_unit: str | None = None
) -> tuple[TemporalQueryText, list[OracleMatch]]:
    """The parsed query and its matches over ``events``: the cross product of the
    derived situation streams filtered by the pattern and the window."""
    query = parse(text)
    window = _length(query.within, time_unit)
    symbols = [d.symbol for d in query.definitions]
    found = []
    for key, streams in derive(query, events, time_unit).items():
        for combo in product(*(streams[s] for s in symbols)):
            chosen = dict(zip(symbols, combo, strict=True))
            if not all(
                any(relation_holds(r.name, chosen[r.left], chosen[r.right]) for r in group)
                for group in query.constraints
            ):
                continue
            if established(query, chosen) - min(s.start for s in combo) > window:
                continue
            found.append(OracleMatch(key, chosen, max(s.end for s in combo)))
    return query, found
