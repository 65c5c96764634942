"""Output formats and RETURN values (docs/semantics.md, "Output formats" and "RETURN";
SIGMOD 2008, section 2, output formats)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kleene.lang import ast
from kleene.oracle._analysis import Plan, Selection
from kleene.oracle._interpret import EvalError, evaluate
from kleene.oracle._partition import PartitionKey


def positions(selection: Selection) -> tuple[int, ...]:
    """The positions of all selected events, in pattern order (a group's members
    interleaved by iteration): ascending."""
    return tuple(sorted(e.position for chosen in selection for e in chosen))


def match_order(
    selection: Selection,
) -> tuple[int, int, tuple[int, ...], tuple[tuple[int, ...], ...]]:
    """(last position, first position, all positions in pattern order), then, to break
    ties between selections of the same events, each variable's positions."""
    spots = positions(selection)
    return (max(spots), min(spots), spots, tuple(tuple(e.position for e in c) for c in selection))


def non_overlap(selections: Iterable[Selection], key: PartitionKey) -> list[Selection]:
    """Per partition, in match order: keep a match, drop every match that does not start
    after it ends, repeat."""
    partitions: dict[tuple[Any, ...], list[Selection]] = {}
    for selection in selections:
        partitions.setdefault(key.of_selection(selection), []).append(selection)
    kept: list[Selection] = []
    for members in partitions.values():
        remaining = sorted(members, key=match_order)
        while remaining:
            picked = remaining[0]
            kept.append(picked)
            end = match_order(picked)[0]
            remaining = [s for s in remaining[1:] if match_order(s)[1] > end]
    return sorted(kept, key=match_order)


def returned_values(
    plan: Plan, selection: Selection, name_of: Callable[[ast.Expr], str]
) -> dict[str, Any]:
    """RETURN items by name (the alias, else ``name_of(expr)``, the item's query text).
    An item that cannot be evaluated for this match (say, a division by zero) is None."""
    scope = plan.scope(selection)
    values: dict[str, Any] = {}
    for item in plan.returns:
        name = item.alias if item.alias is not None else name_of(item.expr)
        try:
            values[name] = evaluate(item.expr, scope)
        except EvalError:
            values[name] = None
    return values
