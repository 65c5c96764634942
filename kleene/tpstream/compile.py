"""``build_plan(text) -> TemporalPlan``: validation and compilation of a TPStream query.

Checks what the grammar cannot (EDBT 2018, section 3): every symbol defined once, a
predicate reads only the stream's attributes (a situation cannot read another's
aggregates, section 3.1), relations name known Allen relations between two defined
symbols, every symbol takes part in the pattern, one constraint per pair of symbols,
aggregates in RETURN only over defined symbols. Predicates and RETURN items are
lowered to the expression IR (:mod:`kleene.compiler.expr`) and generated as Python
functions by the scalar backend (:func:`kleene.compiler.codegen.python_code`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kleene.compiler import codegen, expr
from kleene.errors import QueryError
from kleene.lang import ast, expr_to_text
from kleene.lang._suggest import did_you_mean
from kleene.lang.tpstream import (
    Duration,
    RelationText,
    SituationDefinition,
    Summary,
    TemporalQueryText,
    parse,
)
from kleene.tpstream.model import Allen, Constraint
from kleene.tpstream.plan import (
    AGGREGATES,
    SITUATION_FIELDS,
    AggregatePlan,
    Length,
    ReturnPlan,
    SymbolPlan,
    TemporalPlan,
)
from kleene.tpstream.types import return_type

_RELATIONS = {r.value: r for r in Allen}
_NEEDS_ATTRIBUTE = ("first", "last", "min", "max", "avg", "sum")


@expr_to_text.register
def _summary_text(node: Summary) -> str:
    inside = node.var if not node.attr else f"{node.var}.{node.attr}"
    return f"{node.func}({inside})"


def aggregate_name(func: str, attr: str | None) -> str:
    """The key of an aggregate in a situation's ``aggregates``: ``avg(speed)``, ``count``."""
    return func if func == "count" or attr is None else f"{func}({attr})"


class _Checker:
    """Raises QueryErrors at the spot of the query text they are about."""

    def __init__(self, query: TemporalQueryText) -> None:
        self.query = query
        self.alias = query.alias or query.stream

    def error(self, message: str, span: ast.Span) -> QueryError:
        if span.line < 1:
            return QueryError(message)
        return QueryError(message, line=span.line, column=span.column, text=self.query.text)

    def attribute(self, name: str, span: ast.Span) -> str:
        """A partition attribute: ``car_id`` or ``CS.car_id``."""
        owner, dot, attr = name.rpartition(".")
        if dot and owner != self.alias:
            raise self.error(
                f"'{owner}' is not the stream: write {self.alias}.{attr} or {attr}", span
            )
        return attr

    def predicate(self, symbol: str, node: ast.Expr) -> list[str]:
        """The stream attributes a DEFINE predicate reads (validated)."""
        attrs: list[str] = []
        for n in node.walk():
            if isinstance(n, Summary):
                raise self.error(
                    f"the predicate of {symbol} cannot read a situation's aggregates "
                    "(EDBT 2018, section 3.1): it reads the stream's events, as in "
                    f"{self.alias}.speed > 70",
                    n.span,
                )
            if isinstance(n, ast.LenRef | ast.Aggregate | ast.Equivalence) or (
                isinstance(n, ast.AttrRef) and n.index is not None
            ):
                raise self.error(
                    f"a predicate reads one event's attributes, as in {self.alias}.speed > 70",
                    n.span,
                )
            if isinstance(n, ast.AttrRef):
                if n.var != self.alias:
                    raise self.error(
                        f"unknown name '{n.var}': a predicate reads the stream's "
                        f"attributes, as in {self.alias}.{n.attr}",
                        n.span,
                    )
                attrs.append(n.attr)
        return attrs

    def relation(self, rel: RelationText, symbols: set[str]) -> Allen:
        found = _RELATIONS.get(rel.name.lower().replace("_", "-"))
        if found is None:
            hint = did_you_mean(rel.name.lower(), _RELATIONS)
            raise self.error(
                f"unknown relation '{rel.name}'{hint}: the relations are {', '.join(_RELATIONS)}",
                rel.name_span,
            )
        for name in (rel.left, rel.right):
            if name not in symbols:
                raise self.error(
                    f"'{name}' is not defined: relate symbols of the DEFINE clause "
                    f"({', '.join(sorted(symbols))})",
                    rel.span,
                )
        if rel.left == rel.right:
            raise self.error(f"a relation relates two symbols, not {rel.left} to itself", rel.span)
        return found

    def summary(self, node: Summary, symbols: set[str]) -> None:
        if node.var not in symbols:
            raise self.error(
                f"'{node.var}' is not a defined symbol: RETURN aggregates a situation of "
                f"the DEFINE clause ({', '.join(sorted(symbols))})",
                node.span,
            )
        if node.func not in AGGREGATES:
            hint = did_you_mean(node.func, AGGREGATES)
            raise self.error(
                f"unknown aggregate '{node.func}'{hint}: the aggregates are "
                f"{', '.join(AGGREGATES)}",
                node.span,
            )
        if node.func in _NEEDS_ATTRIBUTE and not node.attr:
            raise self.error(
                f"{node.func} needs an attribute, as in {node.func}({node.var}.speed)", node.span
            )
        if node.func in SITUATION_FIELDS and node.attr:
            raise self.error(
                f"{node.func} is the situation's own, written {node.func}({node.var})", node.span
            )


def _length(d: Duration, what: str, check: _Checker) -> Length:
    if d.amount < 0:
        raise check.error(f"{what} cannot be negative", d.span)
    unit = "" if d.unit is None else f" {d.unit.name.lower()}"
    return Length(d.value, d.seconds, f"{what} {d.amount}{unit}")


def _constraints(query: TemporalQueryText, check: _Checker) -> tuple[Constraint, ...]:
    """One constraint per AND group; its alternatives relate one pair of symbols
    (Definition 10), written in either direction."""
    symbols = {d.symbol for d in query.definitions}
    out: list[Constraint] = []
    pairs: dict[frozenset[str], RelationText] = {}
    for group in query.constraints:
        first = group[0]
        relations: set[Allen] = set()
        for rel in group:
            allen = check.relation(rel, symbols)
            if {rel.left, rel.right} != {first.left, first.right}:
                raise check.error(
                    f"the alternatives of one constraint relate one pair of symbols: "
                    f"{rel.left}, {rel.right} is not {first.left}, {first.right} (join "
                    "constraints with AND)",
                    rel.span,
                )
            relations.add(allen if rel.left == first.left else allen.inverse)
        pair = frozenset((first.left, first.right))
        if pair in pairs:
            earlier = pairs[pair].span
            raise check.error(
                f"{first.left} and {first.right} are already related at line {earlier.line}, "
                f"column {earlier.column}: write their alternatives as one constraint "
                "separated by ';'",
                first.span,
            )
        pairs[pair] = first
        out.append(Constraint(first.left, first.right, frozenset(relations)))
    related = set().union(*pairs)
    for d in query.definitions:
        if d.symbol not in related:
            raise check.error(f"{d.symbol} is defined but takes part in no relation", d.span)
    return tuple(out)


def _predicate(
    d: SituationDefinition, index: Callable[[str], int], name: str, check: _Checker
) -> tuple[Callable[..., bool], str, expr.Expr]:
    lowered = expr.lower(d.predicate, lambda ref: expr.Load(expr.EVENT, ref.attr))  # type: ignore[attr-defined]
    if lowered.kind in (expr.Kind.NUMBER, expr.Kind.STRING):
        raise check.error(
            f"the predicate of {d.symbol} is a {lowered.kind.value}, not a condition",
            d.predicate.span,
        )
    code = codegen.python_code(lowered, lambda load: f"e[{index(load.key)}]")
    source = (
        f"def {name}(e):\n    try:\n        return {code} is True\n"
        f"    except {codegen.CAUGHT}:\n        return False\n"
    )
    return codegen.build(source, name), source, lowered


def _return_value(node: ast.Expr, name: str) -> tuple[Callable[..., Any], str, tuple[Any, ...]]:
    reads: list[tuple[str, str]] = []

    def resolve(ref: ast.Expr) -> expr.Expr:
        assert isinstance(ref, Summary)
        attr = None if ref.func == "count" else ref.attr or None
        key = (ref.var, aggregate_name(ref.func, attr))
        reads.append(key)
        return expr.Load(expr.SLOT, key, nullable=True)

    code = codegen.python_code(expr.lower(node, resolve), lambda load: f"v[{load.key!r}]")
    source = (
        f"def {name}(v):\n    try:\n        return {code}\n"
        f"    except {codegen.CAUGHT}:\n        return None\n"
    )
    return codegen.build(source, name), source, tuple(dict.fromkeys(reads))


def _returns(query: TemporalQueryText, check: _Checker) -> tuple[ReturnPlan, ...]:
    symbols = {d.symbol for d in query.definitions}
    seen: set[str] = set()
    out = []
    for k, item in enumerate(query.returns):
        for n in item.expr.walk():
            if isinstance(n, Summary):
                check.summary(n, symbols)
            elif isinstance(n, ast.AttrRef | ast.LenRef | ast.Aggregate | ast.Equivalence):
                raise check.error(
                    "RETURN reads situations through aggregates, as in first(B.speed), "
                    "avg(B.speed), count(B) or duration(B)",
                    n.span,
                )
        if item.name in seen:
            raise check.error(
                f"two RETURN items are named {item.name!r}: name one with AS", item.span
            )
        seen.add(item.name)
        value, source, reads = _return_value(item.expr, f"_return{k}")
        out.append(ReturnPlan(item.name, value, source, reads, return_type(item.expr)))
    return tuple(out)


def build_plan(text: str) -> TemporalPlan:
    """The compiled plan of a TPStream query; QueryError (with line and column) when the
    query is not valid."""
    query = parse(text)
    check = _Checker(query)
    partition = tuple(check.attribute(name, span) for name, span in query.partition)
    defined: dict[str, ast.Span] = {}
    for d in query.definitions:
        if d.symbol in defined:
            first = defined[d.symbol]
            raise check.error(
                f"{d.symbol} is defined twice (first at line {first.line}, column {first.column})",
                d.span,
            )
        if d.symbol == check.alias:
            raise check.error(
                f"{d.symbol} names the stream; give the situation another name", d.span
            )
        defined[d.symbol] = d.span
    constraints = _constraints(query, check)
    returns = _returns(query, check)
    reads = [check.predicate(d.symbol, d.predicate) for d in query.definitions]
    wanted: dict[str, dict[str, AggregatePlan]] = {d.symbol: {} for d in query.definitions}
    for item in query.returns:
        for n in item.expr.find(Summary):
            if n.func not in SITUATION_FIELDS:
                attr = None if n.func == "count" else n.attr
                name = aggregate_name(n.func, attr)
                wanted[n.var][name] = AggregatePlan(n.func, attr, name)
    agg_attrs = [a.attr for w in wanted.values() for a in w.values() if a.attr is not None]
    attributes = tuple(dict.fromkeys([*(a for r in reads for a in r), *agg_attrs]))
    position = {a: k for k, a in enumerate(attributes)}
    symbols = []
    for k, d in enumerate(query.definitions):
        holds, source, lowered = _predicate(d, position.__getitem__, f"_holds{k}", check)
        low = None if d.minimum is None else _length(d.minimum, "AT LEAST", check)
        high = None if d.maximum is None else _length(d.maximum, "AT MOST", check)
        if (
            low is not None
            and high is not None
            and low.seconds == high.seconds
            and low.amount > high.amount
        ):
            raise check.error(
                f"the duration of {d.symbol} is {low.text} and {high.text}: no situation "
                "can satisfy both",
                d.span,
            )
        symbols.append(
            SymbolPlan(
                d.symbol,
                holds,
                source,
                expr_to_text(d.predicate),
                low,
                high,
                tuple(wanted[d.symbol].values()),
                lowered,
            )
        )
    window = _length(query.within, "WITHIN", check)
    if window.amount <= 0:
        raise check.error("WITHIN must be a positive length of time", query.within.span)
    return TemporalPlan(
        text=text,
        stream=query.stream,
        attributes=attributes,
        partition=partition,
        symbols=tuple(symbols),
        constraints=constraints,
        window=window,
        returns=returns,
        relations_text=tuple(
            "; ".join(f"{r.left} {r.name.lower()} {r.right}" for r in group)
            for group in query.constraints
        ),
    )
