"""Sequenced event set (SES) patterns: the data the SES engine's parts share.

Definition 1 of the match-window paper (Cadonna, Gamper, Böhlen, section 3): a pattern
is ``(B, Θ, τ)``, a sequence of pairwise disjoint sets of variables ``v`` or ``v+``,
constraints over them and a duration. Constraints come in exactly three forms:

- a *property* ``v.A φ C`` (one variable, one constant),
- a *relationship* ``vi.A φ vj.B`` (two variables),
- a *prev relationship* ``prev(v.A) φ v.A`` (consecutive events bound to ``v+``),

with φ one of ``=``, ``!=``, ``<``, ``<=``, ``>``, ``>=``. Each constraint carries its
comparison in the expression IR (:mod:`kleene.compiler.expr`), so every backend
evaluates it by the one set of rules: the left operand's loads read source
``LEFT`` and the right's ``RIGHT``, with ``key`` the attribute name. For a property
only ``LEFT`` appears; for a prev relationship ``LEFT`` is the earlier event.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from kleene.compiler.expr import Compare

Time = int | float

#: Load sources of a constraint's comparison (see the module docstring).
LEFT = "left"
RIGHT = "right"


@dataclass(frozen=True)
class SetVariable:
    """A variable of an event set: ``plus`` for ``v+`` (one or more events)."""

    name: str
    plus: bool
    set_index: int  # the index i of the set B_i that holds it (0-based)


class ConstraintForm(Enum):
    PROPERTY = "property"
    RELATIONSHIP = "relationship"
    PREV = "prev"


@dataclass(frozen=True)
class Constraint:
    """One θ ∈ Θ. ``variables`` is (v,) for a property or prev relationship and
    (vi, vj) for a relationship; ``attributes`` the attribute each side reads
    (one for a property, two otherwise, equal for prev)."""

    form: ConstraintForm
    variables: tuple[str, ...]
    attributes: tuple[str, ...]
    op: str
    comparison: Compare

    @property
    def is_equality_relationship(self) -> bool:
        """``vi.A = vj.A`` over one attribute: what partitioning uses (Definition 6)."""
        return (
            self.form is ConstraintForm.RELATIONSHIP
            and self.op == "="
            and self.attributes[0] == self.attributes[1]
        )


@dataclass(frozen=True)
class SesPattern:
    """``(B, Θ, τ)``. ``sets`` are the B_i in order; ``window`` is τ in the events'
    time units (a match's events lie within τ of each other, inclusive)."""

    sets: tuple[tuple[SetVariable, ...], ...]
    constraints: tuple[Constraint, ...]
    window: Time

    @property
    def variables(self) -> tuple[SetVariable, ...]:
        return tuple(v for group in self.sets for v in group)

    def properties(self, variable: str) -> tuple[Constraint, ...]:
        """Θ^p_v: the properties of one variable."""
        return tuple(
            c
            for c in self.constraints
            if c.form is ConstraintForm.PROPERTY and c.variables == (variable,)
        )


@dataclass(frozen=True)
class SesMatch:
    """A substitution γ that is a match (Definition 2): each variable's events, by
    their positions in the input (arrival order), in chronological order."""

    bindings: Mapping[str, tuple[int, ...]]

    @property
    def first(self) -> int:
        return min(p for ps in self.bindings.values() for p in ps)

    def key(self) -> tuple[tuple[str, tuple[int, ...]], ...]:
        """A hashable, canonical form (for sets and sorting)."""
        return tuple(sorted(self.bindings.items()))
