"""Semantic checks of a parsed query (SIGMOD 2008, section 2; docs/semantics.md).

What a grammar cannot see: every variable declared once and used where it is known;
Kleene references (``v[i]``, ``v[i-1]``, ``v[..i-1]``, ``v[v.LEN]``, ``v.LEN``,
aggregates) only on Kleene variables and plain ``v.x`` only on single ones; the iterator
rule (a conjunct with ``v[i]`` iterates over one Kleene variable and looks only at
variables before it); the negation rules; a positive window; distinct RETURN names;
and the type mismatches the text alone reveals (:mod:`kleene.lang._types`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import NoReturn

from kleene.errors import QueryError
from kleene.lang import ast
from kleene.lang._printer import expr_to_text
from kleene.lang._types import kind_of, require_condition

_ITERATOR_INDEXES = frozenset({ast.IndexKind.CURRENT, ast.IndexKind.PREVIOUS})

Reference = ast.AttrRef | ast.LenRef | ast.Aggregate


def validate(query: ast.Query, text: str | None = None, *, interval: bool = False) -> None:
    """Raises QueryError, with the line and column of the offending node, at the first
    semantic problem of ``query``; ``text`` (the query text) renders the caret line.
    ``interval``: the query reads events with uncertainty intervals, where a CONFIDENCE
    clause is allowed (VLDB 2010, section 2.3)."""
    _Validator(query, text).run()
    _check_confidence(query, text, interval)


def _check_confidence(query: ast.Query, text: str | None, interval: bool) -> None:
    clause = query.confidence
    if clause is None:
        return
    fail = _Validator(query, text).fail
    if not interval:
        fail(
            "CONFIDENCE applies to events with uncertainty intervals: compile the query "
            "with time='interval'",
            clause.span,
        )
    if clause.op not in (">", ">="):
        fail(f"write CONFIDENCE > x or CONFIDENCE >= x, not CONFIDENCE {clause.op} x", clause.span)
    if not 0 <= clause.threshold <= 1:
        fail(f"a confidence threshold lies between 0 and 1, not {clause.threshold}", clause.span)


def _references(expr: ast.Expr) -> Iterator[Reference]:
    for node in expr.walk():
        if isinstance(node, ast.AttrRef | ast.LenRef | ast.Aggregate):
            yield node


def _is_iterator(ref: Reference) -> bool:
    """``v[i]``, ``v[i-1]`` or ``f(v[..i-1].x)``: bound to the current Kleene element."""
    if isinstance(ref, ast.AttrRef):
        return ref.index in _ITERATOR_INDEXES
    return isinstance(ref, ast.Aggregate) and ref.range is ast.AggRange.BEFORE_CURRENT


def _looks_back(ref: Reference) -> bool:
    """``v[i-1]`` or ``f(v[..i-1].x)``: the elements before the current one."""
    if isinstance(ref, ast.AttrRef):
        return ref.index is ast.IndexKind.PREVIOUS
    return isinstance(ref, ast.Aggregate) and ref.range is ast.AggRange.BEFORE_CURRENT


def _is_whole_array(ref: Reference) -> bool:
    """``v[v.LEN]``, ``v.LEN`` or ``f(v[].x)``: known only once v has ended."""
    if isinstance(ref, ast.AttrRef):
        return ref.index is ast.IndexKind.LAST
    return isinstance(ref, ast.LenRef) or ref.range is ast.AggRange.ALL


class _Validator:
    def __init__(self, query: ast.Query, text: str | None) -> None:
        self.query = query
        self.text = text
        self.components = {c.var: c for c in query.pattern.components}
        self.position = {c.var: i for i, c in enumerate(query.pattern.components)}

    def fail(self, message: str, span: ast.Span) -> NoReturn:
        known = span.line > 0
        raise QueryError(
            message,
            line=span.line if known else None,
            column=span.column if known else None,
            text=self.text,
        )

    def run(self) -> None:
        self.check_pattern()
        self.check_strategy_vars()
        top_level = {id(c) for c in self.query.where}
        for node in self.query.walk():
            if isinstance(node, ast.Equivalence) and id(node) not in top_level:
                self.fail(
                    "an equivalence test like '[symbol]' may only be a top-level WHERE conjunct",
                    node.span,
                )
        for conjunct in self.query.where:
            self.check_conjunct(conjunct)
        self.check_window()
        self.check_returns()

    # --- PATTERN and the strategy's variable list -------------------------------------

    def check_pattern(self) -> None:
        pattern = self.query.pattern
        seen: dict[str, ast.Component] = {}
        for component in pattern.components:
            first = seen.get(component.var)
            if first is not None:
                self.fail(
                    f"variable '{component.var}' is declared twice (first at line "
                    f"{first.span.line}, column {first.span.column})",
                    component.span,
                )
            seen[component.var] = component
            if component.negated and component.kleene:
                self.fail(
                    f"the negated component {component.var} must be a single event, "
                    "not a Kleene variable",
                    component.span,
                )
        if not pattern.positive:
            self.fail(
                "the pattern needs at least one component that is not negated",
                pattern.span,
            )

    def check_strategy_vars(self) -> None:
        names = self.query.strategy_vars
        if names is None:
            return
        written = self.query.strategy_var_spans
        spans = list(written) if len(written) == len(names) else []
        seen: set[str] = set()
        for k, name in enumerate(names):
            span = spans[k] if spans else self.query.span
            if name not in self.components:
                self.fail(
                    f"unknown variable '{name}' in the strategy's variable list "
                    f"(the pattern declares {self._declared()})",
                    span,
                )
            if name in seen:
                self.fail(f"variable '{name}' is listed twice in the strategy's list", span)
            seen.add(name)

    def _declared(self) -> str:
        return ", ".join(self.components) or "no variables"

    # --- references -------------------------------------------------------------------

    def check_reference(self, ref: Reference, clause: str) -> ast.Component:
        component = self.components.get(ref.var)
        if component is None:
            self.fail(
                f"unknown variable '{ref.var}' in {clause} (the pattern declares "
                f"{self._declared()})",
                ref.span,
            )
        plain = isinstance(ref, ast.AttrRef) and ref.index is None
        if component.kleene and plain:
            assert isinstance(ref, ast.AttrRef)
            v, x = ref.var, ref.attr
            self.fail(
                f"{v} is a Kleene variable: write {v}[i].{x}, {v}[1].{x}, "
                f"{v}[{v}.LEN].{x} or an aggregate such as avg({v}[].{x})",
                ref.span,
            )
        if not component.kleene and not plain:
            self.fail(
                f"{expr_to_text(ref)} needs a Kleene variable, but {ref.var} is a single event "
                f"(declare it as '{component.event_type}+ {ref.var}[]' or write "
                f"{ref.var}.attr)",
                ref.span,
            )
        if clause == "RETURN" and _is_iterator(ref):
            self.fail(
                f"{expr_to_text(ref)} refers to the current Kleene element, which only exists "
                f"in WHERE; RETURN can use {ref.var}[1], {ref.var}[{ref.var}.LEN] or an "
                f"aggregate over {ref.var}[]",
                ref.span,
            )
        return component

    # --- WHERE ------------------------------------------------------------------------

    def check_conjunct(self, conjunct: ast.Expr) -> None:
        refs = list(_references(conjunct))
        for ref in refs:
            self.check_reference(ref, "WHERE")
        self.check_iteration(refs)
        self.check_negation(refs)
        require_condition(conjunct, "a WHERE conjunct", self.fail)

    def _unit(self, var: str) -> tuple[ast.Component, ...]:
        """What ``var[i]`` iterates over: its SEQ(...)+ group, or the variable alone."""
        return self.query.pattern.group_of(var) or (self.components[var],)

    def check_iteration(self, refs: list[Reference]) -> None:
        """A conjunct with ``v[i]`` holds for every element of one Kleene variable v (or
        every iteration of one group ``SEQ(...)+``, SIGMOD 2014 section 2.1) and may look
        only at variables before it and at ``v[1]`` (docs/semantics.md)."""
        unit: tuple[ast.Component, ...] | None = None
        seen = ""
        for ref in refs:
            if not _is_iterator(ref):
                continue
            if unit is None:
                unit, seen = self._unit(ref.var), ref.var
            elif ref.var not in {m.var for m in unit}:
                self.fail(
                    "a conjunct may iterate over one Kleene variable only (or one "
                    f"SEQ(...)+ group), but it uses {seen}[i] and {ref.var}[i]; split it "
                    "into separate conditions",
                    ref.span,
                )
        if unit is None:
            return
        members = [m.var for m in unit]
        v = members[0] if len(members) == 1 else "SEQ(" + ", ".join(members) + ")+"
        on = f"{v}[i]" if len(members) == 1 else f"iteration i of {v}"
        for ref in refs:
            component = self.components[ref.var]
            if component.negated:
                self.fail(
                    f"the negated variable {ref.var} cannot appear in a condition on {on}",
                    ref.span,
                )
            if ref.var in members and _is_whole_array(ref):
                self.fail(
                    f"{expr_to_text(ref)} is known only when {v} has ended, so it cannot be "
                    f"used in a condition on {on}",
                    ref.span,
                )
            if ref.var not in members and self.position[ref.var] > self.position[members[0]]:
                self.fail(
                    f"a condition on {on} may only use variables before {v} in the "
                    f"pattern, but {ref.var} comes after {v}",
                    ref.span,
                )
        if len(members) > 1:
            self.check_group_order(refs, members)

    def check_group_order(self, refs: list[Reference], members: list[str]) -> None:
        """A condition on iteration i of a group is checked when the latest member it
        uses at i (``vk[i]`` or ``vk[1]``) is selected; there, earlier members already
        hold their i-th event, so ``vj[i-1]`` and ``f(vj[..i-1])`` need j >= k."""
        rank = {m: k for k, m in enumerate(members)}
        anchor = max(
            (
                rank[r.var]
                for r in refs
                if isinstance(r, ast.AttrRef)
                and r.var in rank
                and r.index in (ast.IndexKind.CURRENT, ast.IndexKind.FIRST)
            ),
            default=0,
        )
        for ref in refs:
            if ref.var in rank and _looks_back(ref) and rank[ref.var] < anchor:
                at = members[anchor]
                self.fail(
                    f"{expr_to_text(ref)} cannot be used in a condition checked at "
                    f"{at}[i]: by then {ref.var}[i] is selected; in a SEQ(...)+ group, "
                    f"[i-1] and [..i-1] may refer only to {at} and the members after it",
                    ref.span,
                )

    def check_negation(self, refs: list[Reference]) -> None:
        """A condition may relate the members of one negated sequence, not two separate
        negations (each is its own nested search)."""
        negated: ast.Component | None = None
        for ref in refs:
            component = self.components[ref.var]
            if not component.negated or negated is None:
                negated = negated or (component if component.negated else None)
                continue
            same = component.var == negated.var or (
                component.group is not None and component.group == negated.group
            )
            if not same:
                self.fail(
                    f"a condition may not relate two separate negations ({negated.var} and "
                    f"{ref.var}); write ~SEQ({negated.event_type} {negated.var}, "
                    f"{component.event_type} {ref.var}) to negate them together",
                    ref.span,
                )

    # --- WITHIN and RETURN ------------------------------------------------------------

    def check_window(self) -> None:
        window = self.query.within
        if window is not None and not window.amount > 0:
            self.fail(f"the WITHIN window must be positive, not {window.amount}", window.span)

    def check_returns(self) -> None:
        names: dict[str, ast.ReturnItem] = {}
        for item in self.query.returns:
            for ref in _references(item.expr):
                component = self.check_reference(ref, "RETURN")
                if component.negated:
                    self.fail(
                        f"{ref.var} is negated: a match holds no event for it, so RETURN "
                        "cannot use it",
                        ref.span,
                    )
            kind_of(item.expr, self.fail)
            name = item.alias if item.alias is not None else expr_to_text(item.expr)
            first = names.get(name)
            if first is not None:
                self.fail(
                    f"two RETURN items are named '{name}' (first at line {first.span.line}, "
                    f"column {first.span.column}); give one a different name with AS",
                    item.span,
                )
            names[name] = item
