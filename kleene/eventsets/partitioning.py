"""Partitioned match windows (match-windows paper, section 4.4, Definition 6).

The equality relationships ``vi.A = vj.A`` over one attribute, closed transitively
(equality of values is transitive), relate variables; an attribute ``A`` partitions the
events when the closure relates every pair of variables, the reflexive pairs included
(for one variable that needs a relationship ``v.A = v.A`` of its own). All events of a
match then agree on every such ``A``, so each partition of the stream is matched alone
and those relationships are dropped from the pattern the matching algorithm sees.

An event whose value of a partitioning attribute is null or not equal to itself (NaN)
fails every one of those relationships, so it can be in no match: it is dropped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from kleene.eventsets.model import Constraint, SesPattern


def _components(names: list[str], pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Union-find over variable names: each name's representative."""
    parent = {n: n for n in names}

    def find(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for a, b in pairs:
        parent[find(a)] = find(b)
    return {n: find(n) for n in names}


def partition_attributes(pattern: SesPattern) -> tuple[str, ...]:
    """X of Definition 6: the attributes on which every pair of variables is related
    by the transitive closure of the equality relationships, in name order."""
    names = [v.name for v in pattern.variables]
    by_attr: dict[str, list[tuple[str, str]]] = {}
    for c in pattern.constraints:
        if c.is_equality_relationship:
            by_attr.setdefault(c.attributes[0], []).append((c.variables[0], c.variables[1]))
    out = []
    for attr, pairs in sorted(by_attr.items()):
        related = {n for pair in pairs for n in pair}
        if set(names) <= related and len(set(_components(names, pairs).values())) == 1:
            out.append(attr)
    return tuple(out)


def removed(pattern: SesPattern, attributes: tuple[str, ...]) -> tuple[Constraint, ...]:
    """The equality relationships that partitioning on ``attributes`` makes true."""
    return tuple(
        c
        for c in pattern.constraints
        if c.is_equality_relationship and c.attributes[0] in attributes
    )


def without_partitioning(pattern: SesPattern, attributes: tuple[str, ...]) -> SesPattern:
    """The pattern the matching algorithm is given: the relationships that partitioning
    on ``attributes`` guarantees are removed (section 4.4)."""
    gone = set(removed(pattern, attributes))
    return replace(pattern, constraints=tuple(c for c in pattern.constraints if c not in gone))


def partition_key(event: Mapping[str, Any], attributes: tuple[str, ...]) -> tuple[Any, ...] | None:
    """The event's values of the partitioning attributes, or None when one is missing,
    null or not equal to itself (such an event fails the equalities: it is in no
    match)."""
    return key_of(tuple(event.get(attr) for attr in attributes))


def key_of(values: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """``values`` as a partition key, or None when one is null or not equal to itself."""
    return None if any(v is None or v != v for v in values) else values
