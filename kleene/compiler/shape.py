"""Which plans the vectorized evaluation takes, and their conditions per element.

Under strict or partition contiguity a run takes every next event of its partition
(SIGMOD 2008, section 3.2, step 3: the ignore formula is false), so the elements of a
match are consecutive events of one partition. A conjunct that reads one element only,
or one element and the element just before it (``b[i].x OP b[i-1].x``; ``c.x OP b.x``
or ``c.x OP b[b.LEN].x`` when b is the component right before c), is then a boolean
column over (event, previous event) pairs. This pass sorts the conjuncts into three
such columns per component, or records why the plan has another shape; the result is
the plan's :class:`Shape`, which the vector engine reads (:mod:`kleene.runtime.vector`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kleene.compiler.analysis import (
    PartitionKey,
    Phase,
    Placement,
    expand_equivalence,
    is_key_equality,
    place,
    references,
)
from kleene.compiler.expr import EVENT, PREVIOUS, Expr, Load, lower
from kleene.lang import ast
from kleene.vocabulary import OutputFormat, Strategy

CUR, PREV = "cur", "prev"  # which event of an (event, previous event) pair a ref reads

Ref = tuple[str, str, ast.IndexKind | None]  # (var, attr, index) of an attribute reference


@dataclass(frozen=True)
class Condition:
    """A conjunct evaluated on an event (and its predecessor, where ``refs`` says so)."""

    expr: ast.Expr
    refs: dict[Ref, str]  # (var, attr, index) -> CUR|PREV
    ir: Expr = field(init=False, compare=False)  # what the vector engine evaluates

    def __post_init__(self) -> None:
        object.__setattr__(self, "ir", lower(self.expr, self._load))

    def side(self, ref: ast.AttrRef) -> str:
        return self.refs[(ref.var, ref.attr, ref.index)]

    def _load(self, ref: ast.Expr) -> Expr:
        """Each reference loads the event's attribute (CUR) or that of the event just
        before it in its partition (PREV)."""
        assert isinstance(ref, ast.AttrRef)  # the shape pass declines other references
        return Load(EVENT if self.side(ref) == CUR else PREVIOUS, ref.attr)


@dataclass(frozen=True)
class Component:
    """One positive component and the conditions of its begin, take and end."""

    var: str
    event_type: str
    kleene: bool
    first_state: int
    rest_state: int | None
    begin: tuple[Condition, ...] = ()  # its (first) element
    take: tuple[Condition, ...] = ()  # every later element (Kleene)
    end: tuple[Condition, ...] = ()  # its last element (Kleene)


@dataclass(frozen=True)
class Shape:
    """The vectorized evaluation's view of a plan: ``declined`` says why it does not
    take the plan (then there are no components), None when it does."""

    components: tuple[Component, ...] = ()
    adjacent_key: bool = False  # strict contiguity with a key: adjacent events share the key
    declined: str | None = None

    @property
    def vectorizable(self) -> bool:
        return self.declined is None


class Declined(Exception):
    """The plan has a shape the vectorized evaluation does not take."""


@dataclass
class _Draft:
    """A component while its conditions are sorted."""

    comp: Component
    begin: list[Condition] = field(default_factory=list)
    take: list[Condition] = field(default_factory=list)
    end: list[Condition] = field(default_factory=list)

    def done(self) -> Component:
        c = self.comp
        return Component(
            c.var, c.event_type, c.kleene, c.first_state, c.rest_state,
            tuple(self.begin), tuple(self.take), tuple(self.end),
        )  # fmt: skip


class StateFacts(Protocol):
    """What the pass reads of a plan state (:class:`kleene.compiler.plan.State`)."""

    @property
    def index(self) -> int: ...
    @property
    def component(self) -> int: ...
    @property
    def kind(self) -> str: ...


def vector_shape(
    query: ast.Query,
    conjuncts: Sequence[ast.Expr],
    states: Sequence[StateFacts],
    *,
    strategy: Strategy,
    output: OutputFormat,
    key: PartitionKey | None,
    routed: bool,
) -> Shape:
    """The plan's components and conditions, or the reason the vectorized evaluation
    declines it. ``conjuncts`` are the WHERE clause's CNF conjuncts with equivalence
    tests expanded; ``key`` is what runs are indexed by (``analysis.choose_key``)."""
    if strategy not in (Strategy.STRICT_CONTIGUITY, Strategy.PARTITION_CONTIGUITY):
        return Shape(declined="the strategy is not strict or partition contiguity")
    if query.pattern.negative:
        return Shape(declined="the pattern has a negation")
    if output not in (OutputFormat.ALL, OutputFormat.NON_OVERLAP):
        return Shape(declined="the output format is collapsed")
    try:
        return _sort(query, conjuncts, states, key, routed)
    except Declined as why:
        return Shape(declined=str(why))


def _sort(
    query: ast.Query,
    conjuncts: Sequence[ast.Expr],
    states: Sequence[StateFacts],
    key: PartitionKey | None,
    routed: bool,
) -> Shape:
    """The components with their conditions; :class:`Declined` for another shape."""
    pattern = query.pattern
    positive = pattern.positive
    comps: list[_Draft] = []
    for ci, c in enumerate(positive):
        idx = [s.index for s in states if s.component == ci]
        kinds = [states[i].kind for i in idx]
        if kinds not in (["single"], ["first", "rest"]):
            raise Declined("a component is not a single event or a Kleene closure of one")
        rest = idx[1] if c.kleene else None
        comps.append(_Draft(Component(c.var, c.event_type, c.kleene, idx[0], rest)))
    chained = _chained(query)
    adjacent_key = False
    for expr in conjuncts:
        if is_key_equality(expr, key, pattern):
            # routing implies it (partition contiguity); under strict contiguity every
            # event of a match shares the key iff each event shares its predecessor's
            adjacent_key = adjacent_key or not routed
            continue
        if any(expr in group for group in chained.values()):
            continue  # an equivalence test over every event: adjacent equalities below
        _place(expr, place(expr, pattern), comps)
    for attr in chained:
        _chain(attr, comps)
    return Shape(tuple(d.done() for d in comps), adjacent_key)


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


def _chain(attr: str, comps: list[_Draft]) -> None:
    """``cur.attr == prev.attr`` between each element and the one before it."""
    I = ast.IndexKind  # noqa: E741
    sides: dict[Ref, str]
    for j, draft in enumerate(comps):
        comp = draft.comp
        if comp.kleene:
            cur, prev = (
                ast.AttrRef(comp.var, attr, I.CURRENT),
                ast.AttrRef(comp.var, attr, I.PREVIOUS),
            )
            sides = {(comp.var, attr, I.CURRENT): CUR, (comp.var, attr, I.PREVIOUS): PREV}
            draft.take.append(Condition(ast.Binary(ast.BinOp.EQ, cur, prev), sides))
        if j:
            before = comps[j - 1].comp
            mine = ast.AttrRef(comp.var, attr, I.FIRST if comp.kleene else None)
            theirs = ast.AttrRef(before.var, attr, I.LAST if before.kleene else None)
            sides = {
                (mine.var, attr, mine.index): CUR,
                (theirs.var, attr, theirs.index): PREV,
            }
            draft.begin.append(Condition(ast.Binary(ast.BinOp.EQ, mine, theirs), sides))


def _place(expr: ast.Expr, where: Placement, comps: list[_Draft]) -> None:
    """Put a conjunct on the begin, take or end column of its component."""
    refs = references(expr)
    if any(not isinstance(r, ast.AttrRef) for r in refs):
        raise Declined("a conjunct reads a length or an aggregate")
    draft = comps[where.component]
    before = comps[where.component - 1].comp if where.component else None
    sides: dict[Ref, str] = {}
    for r in refs:
        assert isinstance(r, ast.AttrRef)
        sides[(r.var, r.attr, r.index)] = _side(r, draft.comp, before, where.phase)
    cond = Condition(expr, sides)
    if where.phase is Phase.FIRST:
        draft.begin.append(cond)
    elif where.phase is Phase.EACH:
        draft.take.append(cond)
        if not where.needs_previous:
            draft.begin.append(cond)
    else:
        if PREV in sides.values():
            raise Declined("an end condition reads an earlier event")
        draft.end.append(cond)


def _side(r: ast.AttrRef, comp: Component, before: Component | None, phase: Phase) -> str:
    """Which event of the (event, previous event) pair the reference reads."""
    I = ast.IndexKind  # noqa: E741
    if r.var == comp.var:
        if not comp.kleene or r.index in (I.CURRENT, None):
            return CUR
        if r.index is I.PREVIOUS and phase is Phase.EACH:
            return PREV
        if (r.index is I.FIRST and phase is Phase.FIRST) or (
            r.index is I.LAST and phase is Phase.END
        ):
            return CUR
        raise Declined(f"a conjunct reads {r.var}[{r.index.value}] out of reach")
    if before is not None and r.var == before.var and phase is Phase.FIRST:
        if before.kleene and r.index is not I.LAST:
            raise Declined("a conjunct reads a Kleene element other than the last before")
        return PREV
    raise Declined("a conjunct relates events that are not adjacent")
