"""SES patterns built directly on the shared model (kleene.eventsets.model), for tests
that need patterns the text syntax cannot state or random ones."""

from __future__ import annotations

from collections.abc import Sequence

from kleene.compiler.expr import Compare, Const, Load
from kleene.eventsets.model import (
    LEFT,
    RIGHT,
    Constraint,
    ConstraintForm,
    SesPattern,
    SetVariable,
)


def prop(var: str, attr: str, op: str, value: int | float | str) -> Constraint:
    """``var.attr op value``."""
    comparison = Compare(op, Load(LEFT, attr), Const(value))
    return Constraint(ConstraintForm.PROPERTY, (var,), (attr,), op, comparison)


def rel(left: str, a: str, op: str, right: str, b: str, nullable: bool = False) -> Constraint:
    """``left.a op right.b`` (``nullable``: the values may be null)."""
    comparison = Compare(op, Load(LEFT, a, nullable=nullable), Load(RIGHT, b, nullable=nullable))
    return Constraint(ConstraintForm.RELATIONSHIP, (left, right), (a, b), op, comparison)


def prev(var: str, attr: str, op: str) -> Constraint:
    """``prev(var.attr) op var.attr``."""
    comparison = Compare(op, Load(LEFT, attr), Load(RIGHT, attr))
    return Constraint(ConstraintForm.PREV, (var,), (attr, attr), op, comparison)


def pattern(
    sets: Sequence[Sequence[tuple[str, bool]]], constraints: Sequence[Constraint], window: int
) -> SesPattern:
    """``sets`` as lists of (name, plus)."""
    model_sets = tuple(
        tuple(SetVariable(name, plus, i) for name, plus in group) for i, group in enumerate(sets)
    )
    return SesPattern(model_sets, tuple(constraints), window)
