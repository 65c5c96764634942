"""Partitions (docs/semantics.md, "Partitions"; SIGMOD 2008, section 2, partition
contiguity, and section 3.2, step 3).

The partition is formed by the equivalence tests alone: each attribute x of a test
``[x]`` whose scope holds every positive variable is a key attribute, and an event is in
partition (v1, ..., vk) when its key attributes, in name order, have those values.
Equalities between variables (``a.x = b.x``) are conditions on the match and form no
partition. Events without a key attribute belong to no partition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kleene.lang import ast
from kleene.oracle._analysis import Selection
from kleene.oracle._stream import Event


@dataclass(frozen=True)
class PartitionKey:
    """The partition's attribute names; none means a single partition."""

    names: tuple[str, ...]

    @property
    def classes(self) -> tuple[str, ...]:
        return self.names

    def of_event(self, event: Event) -> tuple[Any, ...] | None:
        """The event's partition, or None when it is in no partition."""
        if not all(event.has(name) for name in self.names):
            return None
        return tuple(event.value(name) for name in self.names)

    def of_selection(self, selection: Selection) -> tuple[Any, ...]:
        """The partition of a match: that of its first variable's first event."""
        first = selection[0][0]
        return tuple(first.value(name) for name in self.names)


def infer_key(query: ast.Query) -> PartitionKey:
    """The attributes of the equivalence tests whose scope (the strategy's variable list,
    else every variable) holds every positive variable."""
    scope = set(query.strategy_vars or (c.var for c in query.pattern.components))
    if not all(c.var in scope for c in query.pattern.positive):
        return PartitionKey(())
    names = {a for item in query.where if isinstance(item, ast.Equivalence) for a in item.attrs}
    return PartitionKey(tuple(sorted(names)))
