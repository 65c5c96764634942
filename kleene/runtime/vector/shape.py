"""Which plans the vectorized evaluation takes, and their conditions per element.

Under strict or partition contiguity a run takes every next event of its partition
(SIGMOD 2008, section 3.2, step 3: the ignore formula is false), so the elements of a
match are consecutive events of one partition. A conjunct that reads one element only,
or one element and the element just before it (``b[i].x OP b[i-1].x``; ``c.x OP b.x``
or ``c.x OP b[b.LEN].x`` when b is the component right before c), is then a boolean
column over (event, previous event) pairs. This module sorts the plan's conjuncts into
three such columns per component and declines every other shape with a reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from kleene.compiler.analysis import (
    Phase,
    expand_equivalence,
    is_key_equality,
    place,
    references,
)
from kleene.compiler.build import conjuncts_of
from kleene.compiler.expr import EVENT, PREVIOUS, Expr, Load, lower
from kleene.compiler.plan import Plan
from kleene.lang import ast

CUR, PREV = "cur", "prev"  # which event of an (event, previous event) pair a ref reads


@dataclass(frozen=True)
class Condition:
    """A conjunct evaluated on an event (and its predecessor, where ``refs`` says so)."""

    expr: ast.Expr
    refs: dict[tuple[str, str, ast.IndexKind | None], str]  # (var, attr, index) -> CUR|PREV

    def side(self, ref: ast.AttrRef) -> str:
        return self.refs[(ref.var, ref.attr, ref.index)]

    @cached_property
    def ir(self) -> Expr:
        """The conjunct in the IR: each reference loads the event's attribute (CUR) or
        the attribute of the event before it (PREV)."""

        def resolve(ref: ast.Expr) -> Expr:
            assert isinstance(ref, ast.AttrRef)  # _place declines the other references
            return Load(EVENT if self.side(ref) == CUR else PREVIOUS, ref.attr)

        return lower(self.expr, resolve)


@dataclass
class Component:
    """One positive component and the conditions of its begin, take and end."""

    var: str
    event_type: str
    kleene: bool
    first_state: int
    rest_state: int | None
    begin: list[Condition] = field(default_factory=list)  # its (first) element
    take: list[Condition] = field(default_factory=list)  # every later element (Kleene)
    end: list[Condition] = field(default_factory=list)  # its last element (Kleene)


@dataclass(frozen=True)
class Shape:
    components: tuple[Component, ...]
    adjacent_key: bool  # strict contiguity with a key: adjacent events share the key


class Declined(Exception):
    """The plan has a shape the vectorized evaluation does not take."""


def analyse(plan: Plan) -> Shape:
    """The plan's components and conditions; raises :class:`Declined` with a reason."""
    if plan.strategy not in (ast.Strategy.STRICT_CONTIGUITY, ast.Strategy.PARTITION_CONTIGUITY):
        raise Declined("the strategy is not strict or partition contiguity")
    if plan.negations:
        raise Declined("the pattern has a negation")
    if plan.output not in (ast.OutputFormat.ALL, ast.OutputFormat.NON_OVERLAP):
        raise Declined("the output format is collapsed")
    query = plan.query
    pattern = query.pattern
    positive = pattern.positive
    comps: list[Component] = []
    for ci, c in enumerate(positive):
        idx = [s.index for s in plan.states if s.component == ci]
        kinds = [plan.states[i].kind for i in idx]
        if not isinstance(c, ast.Component) or kinds not in (["single"], ["first", "rest"]):
            raise Declined("a component is not a single event or a Kleene closure of one")
        comps.append(Component(c.var, c.event_type, c.kleene, idx[0], idx[1] if c.kleene else None))
    exprs = conjuncts_of(query)
    key = plan.key  # the partition when routed, else the hash key (analysis.choose_key)
    chained = _chained(query)
    adjacent_key = False
    for expr in exprs:
        if is_key_equality(expr, key, pattern):
            # routing implies it (partition contiguity); under strict contiguity every
            # event of a match shares the key iff each event shares its predecessor's
            adjacent_key = adjacent_key or not plan.routed
            continue
        if any(expr in group for group in chained.values()):
            continue  # an equivalence test over every event: adjacent equalities below
        _place(expr, place(expr, pattern), comps, positive)
    for attr in chained:
        _chain(attr, comps)
    return Shape(tuple(comps), adjacent_key)


def _chained(query: ast.Query) -> dict[str, list[ast.Expr]]:
    """The conjuncts ``[x]`` expands to, per attribute x, for the equivalence tests whose
    scope is every variable (SIGMOD 2008, section 2): every event of a match has the
    same x, which holds iff each event has its predecessor's x."""
    every = {c.var for c in query.pattern.components}
    out: dict[str, list[ast.Expr]] = {}
    for expr in query.where:
        if isinstance(expr, ast.Equivalence) and every <= set(query.strategy_vars or every):
            for attr in expr.attrs:
                test = ast.Equivalence((attr,), span=expr.span)
                out.setdefault(attr, []).extend(expand_equivalence(test, query))
    return out


def _chain(attr: str, comps: list[Component]) -> None:
    """``cur.attr == prev.attr`` between each element and the one before it."""
    I = ast.IndexKind  # noqa: E741
    sides: dict[tuple[str, str, ast.IndexKind | None], str]
    for j, comp in enumerate(comps):
        if comp.kleene:
            cur, prev = (
                ast.AttrRef(comp.var, attr, I.CURRENT),
                ast.AttrRef(comp.var, attr, I.PREVIOUS),
            )
            sides = {(comp.var, attr, I.CURRENT): CUR, (comp.var, attr, I.PREVIOUS): PREV}
            comp.take.append(Condition(ast.Binary(ast.BinOp.EQ, cur, prev), sides))
        if j:
            before = comps[j - 1]
            mine = ast.AttrRef(comp.var, attr, I.FIRST if comp.kleene else None)
            theirs = ast.AttrRef(before.var, attr, I.LAST if before.kleene else None)
            sides = {
                (mine.var, attr, mine.index): CUR,
                (theirs.var, attr, theirs.index): PREV,
            }
            comp.begin.append(Condition(ast.Binary(ast.BinOp.EQ, mine, theirs), sides))


def _place(expr: ast.Expr, where: object, comps: list[Component], positive: tuple) -> None:
    from kleene.compiler.analysis import Placement

    assert isinstance(where, Placement)
    refs = references(expr)
    if any(not isinstance(r, ast.AttrRef) for r in refs):
        raise Declined("a conjunct reads a length or an aggregate")
    ci, phase = where.component, where.phase
    comp = comps[ci]
    before = comps[ci - 1] if ci else None
    sides: dict[tuple[str, str, ast.IndexKind | None], str] = {}
    I = ast.IndexKind  # noqa: E741
    for r in refs:
        assert isinstance(r, ast.AttrRef)
        k = (r.var, r.attr, r.index)
        if r.var == comp.var:
            if not comp.kleene or r.index in (I.CURRENT, None):
                side = CUR
            elif r.index is I.PREVIOUS and phase is Phase.EACH:
                side = PREV
            elif (r.index is I.FIRST and phase is Phase.FIRST) or (
                r.index is I.LAST and phase is Phase.END
            ):
                side = CUR
            else:
                raise Declined(f"a conjunct reads {r.var}[{r.index.value}] out of reach")
        elif before is not None and r.var == before.var and phase is Phase.FIRST:
            if before.kleene and r.index is not I.LAST:
                raise Declined("a conjunct reads a Kleene element other than the last before")
            side = PREV
        else:
            raise Declined("a conjunct relates events that are not adjacent")
        sides[k] = side
    cond = Condition(expr, sides)
    if phase is Phase.FIRST:
        comp.begin.append(cond)
    elif phase is Phase.EACH:
        comp.take.append(cond)
        if not where.needs_previous:
            comp.begin.append(cond)
    else:
        if PREV in sides.values():
            raise Declined("an end condition reads an earlier event")
        comp.end.append(cond)


def support(plan: Plan) -> str | None:
    """None when the vectorized evaluation takes the plan, else why not."""
    try:
        analyse(plan)
    except Declined as why:
        return str(why)
    return None
