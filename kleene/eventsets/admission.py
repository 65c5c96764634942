"""Admission of events to an SES matcher: validation, time order, rows.

The rules of kleene's other queries (:mod:`kleene.runtime.ingest`): every event has a
readable time of the stream's kind (numbers or datetimes), is not late, has a type; an
event of a type the pattern names carries every attribute the pattern reads of that
type, with values of one kind per *kind group* (attributes compared with each other),
the kind a constant demands where one shows. An event that fails is rejected with its
reason. Admitted events become rows (:mod:`kleene.eventsets.compile`) at the next
stream position; events of other types too (they are ignored by matching, which checks
the type of each variable first). The time kind, the clock, the counters and the
rejected events are the shared :class:`~kleene.runtime.stream_time.StreamTime`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from kleene.compiler.codegen import FIXED_FIELDS
from kleene.events import EventBatch
from kleene.eventsets.compile import ID, TIME, TYPE, Row
from kleene.eventsets.model import ConstraintForm, SesPattern
from kleene.runtime.ingest import Validator
from kleene.runtime.stream_time import StreamTime


@dataclass(frozen=True)
class SesRequirements:
    """What events of each type must carry (the fields a :class:`Validator` reads)."""

    required: dict[str, tuple[str, ...]]
    kind_groups: dict[tuple[str, str], int]
    group_kinds: dict[int, str]
    attributes: tuple[str, ...]  # every attribute the pattern reads (rows carry them)


def variable_types(pattern: SesPattern) -> dict[str, str]:
    """Each variable's type name (its property ``v.type = 'T'``)."""
    types: dict[str, str] = {}
    for c in pattern.constraints:
        if c.form is ConstraintForm.PROPERTY and c.attributes == (TYPE,) and c.op == "=":
            value = getattr(c.comparison.right, "value", None)
            if isinstance(value, str):
                types.setdefault(c.variables[0], value)
    return types


def requirements(pattern: SesPattern) -> SesRequirements:
    """Required attributes per type and kind groups of (type, attribute)."""
    types = variable_types(pattern)
    parent: dict[tuple[str, str], tuple[str, str]] = {}
    demanded: dict[tuple[str, str], str] = {}

    def root(x: tuple[str, str]) -> tuple[str, str]:
        while parent.setdefault(x, x) != x:
            x = parent[x]
        return x

    for c in pattern.constraints:
        leaves = [
            (types[v], a)
            for v, a in zip(c.variables * 2, c.attributes, strict=False)
            if a not in FIXED_FIELDS and v in types
        ]
        for leaf in leaves[1:]:
            parent[root(leaf)] = root(leaves[0])
        value = getattr(c.comparison.right, "value", None)
        if c.form is ConstraintForm.PROPERTY and leaves and not isinstance(value, bool):
            demanded.setdefault(leaves[0], "string" if isinstance(value, str) else "number")
        for leaf in leaves:
            root(leaf)
    groups = {root: k for k, root in enumerate(sorted({root(x) for x in parent}))}
    kind_groups = {x: groups[root(x)] for x in parent}
    group_kinds: dict[int, str] = {}
    for leaf, kind in demanded.items():
        group_kinds.setdefault(kind_groups[leaf], kind)
    required: dict[str, set[str]] = {t: set() for t in types.values()}
    for etype, attr in kind_groups:
        required[etype].add(attr)
    attributes = sorted({a for _, a in kind_groups})
    return SesRequirements(
        {t: tuple(sorted(a)) for t, a in required.items()},
        kind_groups,
        group_kinds,
        tuple(attributes),
    )


class SesAdmission:
    """Admits a stream's events for one SES pattern."""

    def __init__(self, needs: SesRequirements, time: StreamTime, learned: dict[int, str]) -> None:
        self.needs = needs
        self.time = time
        self.validator = Validator(needs, learned)  # learns the kind groups' kinds

    def admit(self, batch: EventBatch) -> Iterator[tuple[int, Row]]:
        """The batch's admitted events as (position, row), rejecting the others."""
        time = self.time
        types, times, kinds, ids = batch.types, batch.times, batch.time_kinds, batch.ids
        columns = [(a, batch.column(a)) for a in self.needs.attributes]
        for j in range(len(batch)):
            time.arrived += 1
            # as for point queries (kleene.runtime.admission): the time's kind, the
            # attributes, then lateness
            reason = batch.problems.get(j) or time.problem(kinds[j])
            if reason is None:
                reason = self.validator.problem(types[j], batch, j)
            if reason is None:
                reason = time.late(times[j])
            if reason is not None:
                time.reject(ids[j], None, reason, batch.record(j))
                continue
            time.learn(kinds[j], batch.tz)
            time.clock = times[j]
            row = {TYPE: types[j], TIME: times[j], ID: ids[j]}
            for attr, values in columns:
                row[attr] = values[j]
            yield time.position, row
            time.position += 1
