"""A completed positive match on its way to the output: what negation checks and the
non-overlap order read of it (SIGMOD 2008, sections 2 and 3.1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from kleene.runtime import snapshot
from kleene.runtime.core import Completion, Grouped, Selection, group
from kleene.runtime.snapshot import Shapes, fail, sequence

if TYPE_CHECKING:
    from kleene.compiler.plan import Plan

# (first position, last position, first time, last time) of one positive component
Bounds = tuple[int, int, Any, Any]


@dataclass
class Found:
    """A completed positive match awaiting negation checks and output."""

    partition: tuple[Any, ...]
    selections: list[Selection]
    vector: tuple[Any, ...]
    order: tuple[Any, ...]  # the non-overlap order (kleene.runtime.output)
    bounds: list[Bounds]  # per positive component

    @property
    def first_time(self) -> Any:
        _state, _position, _id, time = self.selections[0]
        return time

    @property
    def last_time(self) -> Any:
        _state, _position, _id, time = self.selections[-1]
        return time

    def grouped(self, var_of_state: Sequence[str], names: Sequence[str]) -> Grouped:
        return group(self.selections, var_of_state, names)


class Pending(NamedTuple):
    """A match waiting for its trailing negation to be decided at ``deadline``."""

    deadline: Any
    seq: int  # arrival order among matches of the same deadline
    found: Found


class FoundMaker:
    """Derives a :class:`Found` from a completion: per component its bounds, and the
    match's order (last position, first position, positions, per component)."""

    def __init__(self, plan: Plan) -> None:
        self.component_of_state = [s.component for s in plan.states]
        self.n_components = len(plan.positive_vars)

    def __call__(self, c: Completion) -> Found:
        selections = c.selections
        component = self.component_of_state
        bounds: list[Any] = [None] * self.n_components
        per_component: list[list[int]] = [[] for _ in range(self.n_components)]
        for state, position, _id, time in selections:
            k = component[state]
            b = bounds[k]
            if b is None:
                bounds[k] = (position, position, time, time)
            else:
                first, _last, first_time, _ = b
                bounds[k] = (first, position, first_time, time)
            per_component[k].append(position)
        positions = tuple(position for _state, position, _id, _time in selections)
        order = (positions[-1], positions[0], positions, tuple(map(tuple, per_component)))
        return Found(c.partition, selections, c.vector, order, bounds)

    def from_data(self, data: Any, shapes: Shapes) -> Found:
        """A found match written as (partition, selections, vector), checked; its order
        and bounds are derived again from its selections."""
        part, selections, vector = sequence(data, "a found match", tuple, 3)
        snapshot.partition_key(part)
        for s in sequence(selections, "a match's selections"):
            shapes.selection(s)
        if not selections:
            fail("a match without selections")
        return self(Completion(part, selections, shapes.vector(vector)))


def to_data(found: Found) -> Any:
    """What :meth:`FoundMaker.from_data` reads."""
    return (found.partition, found.selections, found.vector)
