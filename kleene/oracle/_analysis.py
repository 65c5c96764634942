"""What the oracle needs to know about a query before it looks at events.

* Equivalence tests ``[x]`` are expanded over their scope (docs/semantics.md,
  "Equivalence tests"): the first positive variable of the scope is the reference r, and
  each other variable w of the scope gets ``w.x == r.x`` (``w[i].x`` for a Kleene w,
  ``r[1].x`` for a Kleene r); a Kleene r also gets ``r[i].x == r[1].x``.
* Every WHERE item is rewritten into CNF; each clause is a *conjunct*
  (SIGMOD 2008, section 3.2, step 2).
* Each conjunct records the variables it mentions, its iterator variable (the Kleene
  variable whose ``v[i]``, ``v[i-1]`` or ``v[..i-1]`` it mentions) with the first index it
  applies to (docs/semantics.md, "Iterator predicates"), and, for a conjunct over positive
  variables, the location of its last identifier (SIGMOD 2008, section 3.2, step 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from kleene.errors import QueryError
from kleene.lang import ast
from kleene.oracle._cnf import to_cnf
from kleene.oracle._interpret import Scope, truth
from kleene.oracle._stream import Event

#: Events per positive component, in pattern order (a 1-tuple for a single variable).
#: During a run the tuple holds only the components started so far.
Selection = tuple[tuple[Event, ...], ...]


class Phase(IntEnum):
    """Where in the NFA^b an identifier is instantiated (SIGMOD 2008, section 3.1)."""

    BEGIN = 0  # the state of a single variable, or v[1]: v.x, v[1].x
    TAKE = 1  # every take at v[i]: v[i].x, v[i-1].x, f(v[..i-1].x)
    END = 2  # the proceed edge leaving v[i]: v[v.LEN].x, v.LEN, f(v[].x)


#: (index of the positive component, phase); ordered as the NFA^b instantiates them.
Location = tuple[int, Phase]


@dataclass(frozen=True)
class Conjunct:
    """One CNF clause of the WHERE clause, with what evaluation needs to know of it."""

    expr: ast.Expr
    variables: frozenset[str]
    iterator: str | None
    first_index: int
    location: Location | None  # None when the conjunct mentions a negated variable
    negated: str | None  # the negation group it constrains (see negation_group)

    def holds(self, scope: Scope) -> bool:
        """Holds once, or, with an iterator variable v, at every index i from
        ``first_index`` to v.LEN (the iterator rule)."""
        if self.iterator is None:
            return truth(self.expr, scope)
        length = len(scope.elements(self.iterator))
        return all(truth(self.expr, scope.at(i)) for i in range(self.first_index, length + 1))

    def holds_at(self, scope: Scope, index: int) -> bool:
        """Holds at the single element index ``index`` of its iterator variable."""
        return truth(self.expr, scope.at(index))


@dataclass(frozen=True)
class Plan:
    positive: tuple[ast.Component, ...]
    negative: tuple[ast.Component, ...]
    components: tuple[ast.Component, ...]
    kleene: frozenset[str]
    conjuncts: tuple[Conjunct, ...]  # over positive variables only
    negation: tuple[Conjunct, ...]  # each mentions one negation group (negation_group)
    window: float | None
    returns: tuple[ast.ReturnItem, ...]
    #: member -> first member, for each group SEQ(T1 v1, ..., Tm vm)+ with m >= 2
    group_root: Mapping[str, str] = field(default_factory=dict)

    def group_at(self, component: int) -> int:
        """How many positive components from ``component`` on form one unit: the
        members of the group starting there, else 1."""
        root = self.group_root.get(self.positive[component].var)
        if root is None:
            return 1
        return sum(1 for c in self.positive if self.group_root.get(c.var) == root)

    def at(self, component: int, phase: Phase) -> tuple[Conjunct, ...]:
        """The conjuncts whose last identifier is instantiated at this location."""
        return tuple(c for c in self.conjuncts if c.location == (component, phase))

    def scope(self, selection: Selection, extra: Mapping[str, Event] | None = None) -> Scope:
        """Binds each (started) positive component to its events, plus ``extra`` single
        variables (a negated variable's candidate event)."""
        started = zip(self.positive, selection, strict=False)
        events: dict[str, tuple[Event, ...]] = {c.var: chosen for c, chosen in started}
        for var, event in (extra or {}).items():
            events[var] = (event,)
        return Scope(events, self.kleene)

    def within(self, first: Event, last: Event) -> bool:
        """The WITHIN condition: ``last`` is at most W after ``first`` (inclusive)."""
        return self.window is None or last.time - first.time <= self.window


def window_size(window: ast.Window | None) -> float | None:
    if window is None:
        return None
    seconds = window.seconds
    return window.amount if seconds is None else seconds


def analyse(query: ast.Query) -> Plan:
    """Validates ``query`` and gathers its conjuncts; raises QueryError on misuse."""
    components = query.pattern.components
    positive = tuple(c for c in components if not c.negated)
    negative = tuple(c for c in components if c.negated)
    if not positive:
        raise QueryError("the pattern needs a positive component")
    names = [c.var for c in components]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise QueryError(f"variable declared twice: {', '.join(duplicates)}")
    for component in negative:
        if component.kleene:
            raise QueryError(f"negated component {component.var} cannot be a Kleene variable")
    kleene = frozenset(c.var for c in positive if c.kleene)
    clauses: list[ast.Expr] = []
    for item in query.where:
        if isinstance(item, ast.Equivalence):
            clauses.extend(_expand(item, _scope_vars(query), components))
        else:
            if any(isinstance(n, ast.Equivalence) for n in item.walk()):
                raise QueryError("an equivalence test must be a top-level WHERE conjunct")
            clauses.extend(to_cnf(item))
    position = {c.var: k for k, c in enumerate(positive)}
    negated = {c.var: negation_group(c, components) for c in negative}
    root = _group_roots(components)
    conjuncts = [_conjunct(clause, position, kleene, negated, root) for clause in clauses]
    for returned in query.returns:
        _check_return(returned.expr, position, kleene)
    return Plan(
        positive=positive,
        negative=negative,
        components=components,
        kleene=kleene,
        conjuncts=tuple(c for c in conjuncts if c.negated is None),
        negation=tuple(c for c in conjuncts if c.negated is not None),
        window=window_size(query.within),
        returns=query.returns,
        group_root=root,
    )


def _group_roots(components: Sequence[ast.Component]) -> dict[str, str]:
    """Each member of a positive group ``SEQ(...)+`` of two or more members (SIGMOD
    2014, section 2.1) -> the group's first member: all iterate together over i."""
    members: dict[int, list[str]] = {}
    for c in components:
        if c.kleene and c.group is not None and not c.negated:
            members.setdefault(c.group, []).append(c.var)
    return {v: group[0] for group in members.values() if len(group) > 1 for v in group}


def _scope_vars(query: ast.Query) -> set[str]:
    """The variables an equivalence test covers: the strategy's list, else all."""
    if query.strategy_vars is None:
        return {c.var for c in query.pattern.components}
    listed = {v.removesuffix("[]").strip() for v in query.strategy_vars}
    known = {c.var for c in query.pattern.components}
    unknown = sorted(listed - known)
    if unknown:
        raise QueryError(f"unknown variable in the strategy list: {', '.join(unknown)}")
    return listed


def _expand(
    test: ast.Equivalence, scope: set[str], components: Iterable[ast.Component]
) -> list[ast.Expr]:
    members = [c for c in components if c.var in scope]
    positive = [c for c in members if not c.negated]
    if not positive:
        if len(members) > 1:
            raise QueryError("an equivalence test cannot relate only negated variables")
        return []
    reference = positive[0]
    out: list[ast.Expr] = []
    for attr in test.attrs:
        anchor = ast.AttrRef(reference.var, attr, ast.IndexKind.FIRST if reference.kleene else None)
        for member in members:
            if member is reference and not member.kleene:
                continue
            index = ast.IndexKind.CURRENT if member.kleene else None
            out.append(ast.Binary(ast.BinOp.EQ, ast.AttrRef(member.var, attr, index), anchor))
    return out


def _references(expr: ast.Expr) -> list[ast.AttrRef | ast.LenRef | ast.Aggregate]:
    return [n for n in expr.walk() if isinstance(n, ast.AttrRef | ast.LenRef | ast.Aggregate)]


def _check_reference(
    ref: ast.AttrRef | ast.LenRef | ast.Aggregate, known: set[str], kleene: frozenset[str]
) -> None:
    if ref.var not in known:
        raise QueryError(f"unknown variable {ref.var}")
    if isinstance(ref, ast.AttrRef):
        if ref.var in kleene and ref.index is None:
            raise QueryError(f"Kleene variable {ref.var} needs an index: {ref.var}[..].{ref.attr}")
        if ref.var not in kleene and ref.index is not None:
            raise QueryError(f"{ref.var} is not a Kleene variable and takes no index")
    else:
        if ref.var not in kleene:
            raise QueryError(f"{ref.var} is not a Kleene variable")
        counts = isinstance(ref, ast.Aggregate) and ref.func is ast.AggFunc.COUNT
        if isinstance(ref, ast.Aggregate) and ref.attr is None and not counts:
            raise QueryError(f"{ref.func.value}({ref.var}[]) needs an attribute")


def _is_iterating(ref: Any) -> bool:
    if isinstance(ref, ast.AttrRef):
        return ref.index in (ast.IndexKind.CURRENT, ast.IndexKind.PREVIOUS)
    return isinstance(ref, ast.Aggregate) and ref.range is ast.AggRange.BEFORE_CURRENT


def _looks_back(ref: Any) -> bool:
    """``v[i-1]`` and ``v[..i-1]`` exist only from i = 2."""
    if isinstance(ref, ast.AttrRef):
        return ref.index is ast.IndexKind.PREVIOUS
    return isinstance(ref, ast.Aggregate) and ref.range is ast.AggRange.BEFORE_CURRENT


def _identifier_location(ref: Any, position: Mapping[str, int]) -> Location:
    component = position[ref.var]
    if isinstance(ref, ast.LenRef):
        return (component, Phase.END)
    if isinstance(ref, ast.Aggregate):
        phase = Phase.TAKE if ref.range is ast.AggRange.BEFORE_CURRENT else Phase.END
        return (component, phase)
    if ref.index in (ast.IndexKind.CURRENT, ast.IndexKind.PREVIOUS):
        return (component, Phase.TAKE)
    if ref.index is ast.IndexKind.LAST:
        return (component, Phase.END)
    return (component, Phase.BEGIN)


def negation_group(component: ast.Component, components: Sequence[ast.Component]) -> str:
    """The variable naming a negated component's group: the first member of its negated
    sequence (``~SEQ(B b, C c)`` is one group, b), or the variable itself."""
    if component.group is None:
        return component.var
    return components[component.group].var


def _conjunct(
    expr: ast.Expr,
    position: Mapping[str, int],
    kleene: frozenset[str],
    negated: Mapping[str, str],
    root: Mapping[str, str],
) -> Conjunct:
    refs = _references(expr)
    known = set(position) | set(negated)
    for ref in refs:
        _check_reference(ref, known, kleene)
    # a group's members share the index i: the iterator is the group (its first member)
    iterators = {root.get(r.var, r.var) for r in refs if _is_iterating(r)}
    if len(iterators) > 1:
        raise QueryError(f"a conjunct may iterate over one Kleene variable: {sorted(iterators)}")
    iterator = next(iter(iterators), None)
    first_index = 2 if any(_looks_back(r) for r in refs) else 1
    mentioned_negated = {negated[r.var] for r in refs if r.var in negated}
    if len(mentioned_negated) > 1:
        raise QueryError(f"a conjunct cannot relate separate negations {sorted(mentioned_negated)}")
    negated_var = next(iter(mentioned_negated), None)
    location: Location | None = None
    if negated_var is None:
        locations = [_identifier_location(r, position) for r in refs]
        location = max(locations, default=(0, Phase.BEGIN))
    return Conjunct(
        expr=expr,
        variables=frozenset(r.var for r in refs),
        iterator=iterator,
        first_index=first_index,
        location=location,
        negated=negated_var,
    )


def _check_return(expr: ast.Expr, position: Mapping[str, int], kleene: frozenset[str]) -> None:
    if any(isinstance(n, ast.Equivalence) for n in expr.walk()):
        raise QueryError("an equivalence test cannot be returned")
    for ref in _references(expr):
        _check_reference(ref, set(position), kleene)
        if _is_iterating(ref):
            raise QueryError("RETURN cannot use v[i], v[i-1] or v[..i-1]")
