"""SES query text -> :class:`~kleene.eventsets.model.SesPattern`, and constraint tests.

:func:`ses_pattern` lowers an event-set query (match-window paper, section 3,
Definition 1) into the shared model: each set's variables, each WHERE conjunct as one of
the three constraint forms with its comparison in the expression IR, and τ in the events'
time units. A variable's type name ``C c`` is the property ``c.type = 'C'`` on the
event's type field. Anything that is not a conjunction of the three forms is refused with
a :class:`~kleene.errors.QueryError` at its place in the text.

Events reach the engines as *rows*: mappings from attribute name to value, where the
event's type, time and id are under ``"type"``, ``"timestamp"`` and ``"id"`` (the names
the language gives them, whatever the input's field names). :func:`property_test` and
:func:`pair_test` turn a constraint into a Python callable through the IR's one
evaluator (:func:`kleene.compiler.codegen.python_code`): a comparison that is an error
under the IR's rules, or reads a missing attribute, is false.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kleene.compiler import codegen
from kleene.compiler import expr as ir
from kleene.errors import EventError, QueryError
from kleene.eventsets.model import (
    LEFT,
    RIGHT,
    Constraint,
    ConstraintForm,
    SesPattern,
    SetVariable,
    Time,
)
from kleene.lang import ast, parse_ses
from kleene.times import MICROS, missing_time_unit, time_unit_seconds

Row = Mapping[str, Any]
TYPE, TIME, ID = "type", "timestamp", "id"

#: ``x op y`` is ``y FLIPPED[op] x``
FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_ALLOWED = (
    "a condition of an event-set pattern is one of the three forms of Definition 1: "
    "a property v.A op constant, a relationship vi.A op vj.B or prev(v.A) op v.A "
    "(op one of = != < <= > >=), joined by AND"
)


def ses_pattern(
    source: str | ast.SesQuery,
    text: str | None = None,
    *,
    time_unit: str | None = None,
    datetimes: bool = False,
) -> SesPattern:
    """The pattern of an SES query (its text, or its AST with the ``text`` it came from
    for error positions). τ is in the events' time units: microseconds for datetimes;
    for numeric times, a WITHIN with a unit needs ``time_unit`` (what one timestamp unit
    is, see :data:`kleene.times.TIME_UNITS`), a WITHIN without one is in timestamp
    units. Raises QueryError (EventError for a missing ``time_unit``)."""
    if isinstance(source, str):
        text = source
        node = parse_ses(source)
    else:
        node = source
    return _Lowering(node, text).pattern(time_unit, datetimes)


def window_units(window: ast.Window, time_unit: str | None, datetimes: bool) -> Time:
    """τ of a WITHIN clause in the events' time units (see :func:`ses_pattern`)."""
    if datetimes:
        seconds = window.amount if window.seconds is None else window.seconds
        return seconds * MICROS
    if window.unit is None:
        return window.amount
    if time_unit is None:
        written = f"{window.amount} {window.unit.name.lower()}"
        raise EventError(missing_time_unit(written))
    return window.amount * window.unit.value / time_unit_seconds(time_unit)


class _Lowering:
    """Lowers one SES query's AST (errors point into ``text``)."""

    def __init__(self, node: ast.SesQuery, text: str | None) -> None:
        self.node = node
        self.text = text
        self.variables = {
            m.var: SetVariable(m.var, m.plus, i)
            for i, s in enumerate(node.pattern.sets)
            for m in s.members
        }

    def error(self, message: str, span: ast.Span) -> QueryError:
        if span.line < 1:
            return QueryError(message)
        return QueryError(message, line=span.line, column=span.column, text=self.text)

    def pattern(self, time_unit: str | None, datetimes: bool) -> SesPattern:
        within = self.node.within
        if within is None:
            raise self.error(
                "an event-set pattern needs a duration: add WITHIN τ, as in WITHIN 15 days",
                self.node.span,
            )
        if within.amount < 0:
            raise self.error("the duration of WITHIN must not be negative", within.span)
        sets = tuple(
            tuple(self.variables[m.var] for m in s.members) for s in self.node.pattern.sets
        )
        types = [
            _property(m.var, TYPE, "=", m.event_type)
            for s in self.node.pattern.sets
            for m in s.members
        ]
        conditions = [self.constraint(c) for c in self.node.where]
        window = window_units(within, time_unit, datetimes)
        return SesPattern(sets, (*types, *conditions), window)

    def constraint(self, node: ast.Expr) -> Constraint:
        """One WHERE conjunct as a constraint of Definition 1."""
        if not (isinstance(node, ast.Binary) and node.op.is_comparison):
            raise self.error(f"{_ALLOWED}; this is not a comparison", node.span)
        left, right = node.left, node.right
        op = "=" if node.op is ast.BinOp.EQ else node.op.value  # the IR's spelling
        for operand in (left, right):
            if not isinstance(operand, ast.AttrRef | ast.Literal | ast.Prev):
                raise self.error(
                    f"{_ALLOWED}; an operand is v.A, prev(v.A) or a constant, not an expression",
                    operand.span,
                )
            if isinstance(operand, ast.AttrRef | ast.Prev):
                self.check_variable(operand)
        if isinstance(left, ast.Literal) and isinstance(right, ast.AttrRef):
            left, right, op = right, left, FLIPPED[op]
        if isinstance(right, ast.Prev) and isinstance(left, ast.AttrRef):
            left, right, op = right, left, FLIPPED[op]
        if isinstance(left, ast.AttrRef) and isinstance(right, ast.Literal):
            return _property(left.var, left.attr, op, right.value)
        if isinstance(left, ast.AttrRef) and isinstance(right, ast.AttrRef):
            if left.var == right.var:
                raise self.error(
                    f"{_ALLOWED}; a relationship compares two different variables",
                    node.span,
                )
            return _relationship(left.var, left.attr, op, right.var, right.attr)
        if isinstance(left, ast.Prev) and isinstance(right, ast.AttrRef):
            return self.prev(left, right, op, node)
        raise self.error(f"{_ALLOWED}; this comparison is none of them", node.span)

    def check_variable(self, ref: ast.AttrRef | ast.Prev) -> None:
        if isinstance(ref, ast.AttrRef) and ref.index is not None:
            raise self.error(
                f"{_ALLOWED}; an indexed reference {ref.var}[...] belongs to SASE+ "
                f"Kleene variables (write {ref.var}.{ref.attr}, or prev({ref.var}.{ref.attr}))",
                ref.span,
            )
        if ref.var not in self.variables:
            declared = ", ".join(self.variables)
            raise self.error(
                f"unknown variable {ref.var}: the pattern declares {declared}", ref.span
            )

    def prev(self, left: ast.Prev, right: ast.AttrRef, op: str, node: ast.Expr) -> Constraint:
        if (left.var, left.attr) != (right.var, right.attr):
            raise self.error(
                f"prev({left.var}.{left.attr}) is compared with the same attribute of the "
                f"same variable: prev({left.var}.{left.attr}) {op} {left.var}.{left.attr}",
                node.span,
            )
        if not self.variables[left.var].plus:
            raise self.error(
                f"prev({left.var}.{left.attr}) needs a variable of one or more events: "
                f"declare it as T+ {left.var}",
                left.span,
            )
        comparison = ir.Compare(op, _load(LEFT, left.attr), _load(RIGHT, left.attr))
        return Constraint(ConstraintForm.PREV, (left.var,), (left.attr, left.attr), op, comparison)


def _load(source: str, attr: str) -> ir.Load:
    if attr == TIME:
        return ir.Load(source, attr, ir.Kind.NUMBER, nullable=True)
    if attr == TYPE:
        return ir.Load(source, attr, ir.Kind.STRING, nullable=True)
    return ir.Load(source, attr, ir.Kind.ANY, nullable=True)


def _property(var: str, attr: str, op: str, value: int | float | str | bool) -> Constraint:
    comparison = ir.Compare(op, _load(LEFT, attr), ir.Const(value))
    return Constraint(ConstraintForm.PROPERTY, (var,), (attr,), op, comparison)


def _relationship(left: str, a: str, op: str, right: str, b: str) -> Constraint:
    comparison = ir.Compare(op, _load(LEFT, a), _load(RIGHT, b))
    return Constraint(ConstraintForm.RELATIONSHIP, (left, right), (a, b), op, comparison)


# --- evaluation through the IR's one evaluator --------------------------------------------


def _place(load: ir.Load) -> str:
    row = "l" if load.source == LEFT else "r"
    return f"{row}.get({load.key!r})"


def _function(conditions: list[ir.Expr], arguments: str, name: str) -> Callable[..., bool]:
    body = " and ".join(codegen.python_code(c, _place) for c in conditions) or "True"
    source = (
        f"def {name}({arguments}):\n"
        f"    try:\n"
        f"        return bool({body})\n"
        f"    except {codegen.CAUGHT}:\n"
        f"        return False\n"
    )
    return codegen.build(source, name)


def property_test(c: Constraint) -> Callable[[Row], bool]:
    """``f(event) -> bool`` for a property ``v.A op C``."""
    if c.form is not ConstraintForm.PROPERTY:
        raise ValueError(f"{c.form.value} is not a property")
    return _function([c.comparison], "l", "ses_property")


def properties_test(constraints: tuple[Constraint, ...]) -> Callable[[Row], bool]:
    """``f(event) -> bool``: all the given properties at once (Θ^p_v of a variable)."""
    if any(c.form is not ConstraintForm.PROPERTY for c in constraints):
        raise ValueError("properties_test takes properties only")
    return _function([c.comparison for c in constraints], "l", "ses_properties")


def pair_test(c: Constraint) -> Callable[[Row, Row], bool]:
    """``f(left_event, right_event) -> bool`` for a relationship (the events of
    ``variables[0]`` and ``variables[1]``) or a prev relationship (the earlier and the
    later of two consecutive events of ``v+``)."""
    if c.form is ConstraintForm.PROPERTY:
        raise ValueError("a property tests one event: use property_test")
    return _function([c.comparison], "l, r", "ses_pair")
