"""Partition-key inference and partition membership (docs/semantics.md, "Partitions";
SIGMOD 2008, section 2, partition contiguity).

The key is read off the equality conjuncts over positive variables (equivalence tests
are already expanded into such conjuncts). Each side ``v.x``, ``v[1].x``, ``v[i].x`` or
``v[v.LEN].x`` is a node; an equality joins its two nodes into one class. ``v[i].x``
stands for every element of v, so it joins the first and last elements' x as well once
its class holds anything that does not vary with i (``a.x = b[i].x``,
``b[i].x = b[1].x``); ``v[i].x = v[i-1].x`` makes every element's x equal. A class is a
key attribute when it covers every positive variable: a single v through some ``v.x``,
a Kleene v through some x that all its elements share.

An event's key attribute in a class is the one of its type, else the name every positive
variable uses, if they all use the same one; a class in which two variables of one type
use different attributes is no key. Events without it belong to no partition.
Conjuncts that mention a negated variable and equalities of a variable with itself (other
than a Kleene array's elements with each other) do not take part.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from kleene.lang import ast
from kleene.oracle._analysis import Plan, Selection
from kleene.oracle._stream import Event


class _Part(Enum):
    ONE = "one"  # a single variable
    FIRST = "first"
    EACH = "each"
    LAST = "last"


_Node = tuple[str, str, _Part]
_PARTS = {
    None: _Part.ONE,
    ast.IndexKind.FIRST: _Part.FIRST,
    ast.IndexKind.CURRENT: _Part.EACH,
    ast.IndexKind.LAST: _Part.LAST,
}


@dataclass(frozen=True)
class KeyClass:
    """One key attribute: the attribute each positive variable uses, in pattern order."""

    attrs: tuple[str, ...]
    by_type: tuple[tuple[Any, str], ...]
    common: str | None

    @property
    def name(self) -> str:
        return self.common if self.common is not None else self.attrs[0]

    def attribute_for(self, event_type: Any) -> str | None:
        for known, attr in self.by_type:
            if known == event_type:
                return attr
        return self.common


@dataclass(frozen=True)
class PartitionKey:
    """The inferred partition key; no classes means a single partition."""

    classes: tuple[KeyClass, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.classes)

    def of_event(self, event: Event) -> tuple[Any, ...] | None:
        """The event's key, or None when it is in no partition."""
        values = []
        for cls in self.classes:
            attr = cls.attribute_for(event.type)
            if attr is None or not event.has(attr):
                return None
            values.append(event.value(attr))
        return tuple(values)

    def of_selection(self, selection: Selection) -> tuple[Any, ...]:
        """The key of a match: the key values of its first variable's first event."""
        first = selection[0][0]
        return tuple(first.value(cls.attrs[0]) for cls in self.classes)


class _Classes:
    """Union-find over nodes."""

    def __init__(self) -> None:
        self.parent: dict[_Node, _Node] = {}

    def find(self, node: _Node) -> _Node:
        self.parent.setdefault(node, node)
        while self.parent[node] != node:
            node = self.parent[node]
        return node

    def union(self, a: _Node, b: _Node) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return False
        self.parent[max(ra, rb, key=repr)] = min(ra, rb, key=repr)
        return True

    def groups(self) -> list[set[_Node]]:
        out: dict[_Node, set[_Node]] = {}
        for node in list(self.parent):
            out.setdefault(self.find(node), set()).add(node)
        return list(out.values())


def _equalities(plan: Plan) -> Iterable[tuple[ast.AttrRef, ast.AttrRef]]:
    """Equalities between positive variables: a conjunct that mentions a negated
    variable constrains the negation, not the match."""
    positive = {c.var for c in plan.positive}
    for conjunct in plan.conjuncts:
        expr = conjunct.expr
        if any(r.var not in positive for r in expr.find(ast.AttrRef)):
            continue
        if (
            isinstance(expr, ast.Binary)
            and expr.op is ast.BinOp.EQ
            and isinstance(expr.left, ast.AttrRef)
            and isinstance(expr.right, ast.AttrRef)
        ):
            yield expr.left, expr.right


def _all_elements_equal(classes: _Classes, var: str, attr: str) -> bool:
    each = (var, attr, _Part.EACH)
    changed = classes.union(each, (var, attr, _Part.FIRST))
    return classes.union(each, (var, attr, _Part.LAST)) or changed


def _tie(classes: _Classes, left: ast.AttrRef, right: ast.AttrRef, root: dict[str, str]) -> None:
    indices = {left.index, right.index}
    if (
        indices == {ast.IndexKind.CURRENT}
        and left.var in root
        and root[left.var] == root.get(right.var)
    ):
        return  # b[i].x = c[i].x in one group SEQ(...)+ ties each iteration, not all events
    same_array = left.var == right.var and left.attr == right.attr
    consecutive_or_first = {ast.IndexKind.FIRST, ast.IndexKind.PREVIOUS}
    if same_array and ast.IndexKind.CURRENT in indices and indices & consecutive_or_first:
        _all_elements_equal(classes, left.var, left.attr)
        return
    if ast.IndexKind.PREVIOUS in indices or left.var == right.var:
        return  # a variable equated with itself says nothing about partitions
    classes.union(
        (left.var, left.attr, _PARTS[left.index]), (right.var, right.attr, _PARTS[right.index])
    )


def _close(classes: _Classes) -> None:
    """v[i].x in a class with something that does not vary with i: all of v's x agree."""
    changed = True
    while changed:
        changed = False
        for group in classes.groups():
            for var, attr, part in group:
                if part is not _Part.EACH:
                    continue
                if any(not (v == var and p is _Part.EACH) for v, _, p in group):
                    changed = _all_elements_equal(classes, var, attr) or changed


def _covering_attrs(group: set[_Node], component: ast.Component) -> list[str]:
    if component.kleene:
        return sorted(
            a
            for v, a, p in group
            if v == component.var and p is _Part.EACH and (v, a, _Part.FIRST) in group
        )
    return sorted(a for v, a, p in group if v == component.var and p is _Part.ONE)


def infer_key(plan: Plan) -> PartitionKey:
    """The partition key of the query (docs/semantics.md, "Partitions")."""
    classes = _Classes()
    for left, right in _equalities(plan):
        _tie(classes, left, right, dict(plan.group_root))
    _close(classes)
    found = []
    for group in classes.groups():
        attrs = [_covering_attrs(group, c) for c in plan.positive]
        if not all(attrs):
            continue
        chosen = tuple(a[0] for a in attrs)
        by_type: dict[Any, str] = {}
        for component, attr in zip(plan.positive, chosen, strict=True):
            by_type.setdefault(component.event_type, attr)
        if any(by_type[c.event_type] != a for c, a in zip(plan.positive, chosen, strict=True)):
            continue  # one type keyed by two attributes: no partition by this class
        common = chosen[0] if len(set(chosen)) == 1 else None
        found.append(KeyClass(chosen, tuple(by_type.items()), common))
    found.sort(key=lambda c: c.attrs)
    return PartitionKey(tuple(found))
