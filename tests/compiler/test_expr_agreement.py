"""The expression backends agree with each other and with the oracle's interpreter.

Random well-typed conditions over one event ``a`` (docs/language.md: the static kinds
of kleene.lang reject the rest) and random rows are evaluated three ways: by the scalar
backend (generated Python, as an edge conjunct), by the columnar backend (numpy, unless
it gives up for the batch) and by the oracle (kleene.oracle reads the AST itself). Per
row, all say the same about whether the conjunct holds (docs/semantics.md,
"Arithmetic and types": an error, a null included, makes it false).

The rows respect what admission guarantees (kleene.runtime.ingest): the attributes
compared or combined with each other hold one kind; a missing attribute (a null) occurs
only where the load says it may (``Load.nullable``). The strategies are module-level so
that another backend's agreement test can reuse them: :func:`cases` draws a
:class:`Case` (conditions, loads, rows); for each condition, :func:`oracle_says` is the
expected answer per row and :meth:`Case.lowered` the IR to evaluate. (A Spark test
needs the session fixture of tests/conftest.py, the ``spark`` marker and a place in
tests/spark.)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
import pyarrow as pa
from hypothesis import given, note, settings
from hypothesis import strategies as st

from kleene.compiler import codegen, columnar, expr
from kleene.lang import ast
from kleene.lang import expr_to_text as text
from kleene.oracle._interpret import Scope, truth
from kleene.oracle._stream import Event

VAR = "a"
# the row schema: attribute -> its kind ("timestamp" is the event's own time)
NUMBERS = ("i", "f", "m", "n", "timestamp")  # int, float, and a mixed int/float pair
STRINGS = ("s", "u")
BOOLEANS = ("b",)
ATTRIBUTES = ("i", "f", "m", "n", "s", "u", "b")  # the event tuple's attributes, in order
KINDS = {
    **{a: expr.Kind.NUMBER for a in NUMBERS},
    **{a: expr.Kind.STRING for a in STRINGS},
    "b": expr.Kind.BOOLEAN,
}

BIG = 2**53
SMALL = st.integers(-3, 3)  # zeros and signs, where / and % differ
MEDIUM = st.integers(-(2**20), 2**20)
SIMPLE_FLOATS = st.sampled_from([0.0, -0.0, 0.5, -1.5, 1.0, 2.0, -3.0])  # meet the ints
# values beyond what float64 holds exactly (the columnar backend gives up on them)
WIDE_INTS = st.sampled_from([BIG - 1, BIG, BIG + 1, -BIG, -BIG - 1, 2**62, -(2**63), 10**20])
WIDE_FLOATS = st.sampled_from([1e-300, 1e300, float(BIG), 2.0**60])


@cache
def number_values(wide: bool) -> tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]:
    """Ints and floats: mostly small ones that meet each other (equal, zero, halves);
    beyond 2**53 only when ``wide``."""
    ints = st.one_of(SMALL, SMALL, SMALL, MEDIUM)
    floats = st.one_of(SIMPLE_FLOATS, SIMPLE_FLOATS, st.floats(-1e3, 1e3))
    if wide:
        ints, floats = st.one_of(ints, WIDE_INTS), st.one_of(floats, WIDE_FLOATS)
    return ints, floats


TEXTS = st.text("ab", max_size=3)


def columns(wide: bool) -> dict[str, st.SearchStrategy[Any]]:
    """The values of each attribute."""
    ints, floats = number_values(wide)
    times = st.one_of(st.integers(0, 5), st.sampled_from([0.5, 2.0]))
    return {
        "i": ints,
        "f": floats,
        "m": st.one_of(ints, floats),
        "n": st.one_of(ints, floats),
        "timestamp": st.one_of(times, WIDE_INTS.map(abs)) if wide else times,
        "s": TEXTS,
        "u": TEXTS,
        "b": st.booleans(),
    }


def ref(attr: str) -> ast.AttrRef:
    return ast.AttrRef(VAR, attr)


def literal(value: Any) -> ast.Literal:
    return ast.Literal(value)


_ARITH = st.sampled_from(
    [ast.BinOp.ADD, ast.BinOp.SUB, ast.BinOp.MUL, ast.BinOp.DIV, ast.BinOp.MOD]
)
_ORDER = st.sampled_from([ast.BinOp.LT, ast.BinOp.LE, ast.BinOp.GT, ast.BinOp.GE])
_COMPARE = st.sampled_from(
    [ast.BinOp.EQ, ast.BinOp.NE, ast.BinOp.LT, ast.BinOp.LE, ast.BinOp.GT, ast.BinOp.GE]
)
_EQUAL = st.sampled_from([ast.BinOp.EQ, ast.BinOp.NE])
_LOGIC = st.sampled_from([ast.BinOp.AND, ast.BinOp.OR])

# Each node picks its shape with one integer draw (weights by ranges), recursing with
# ``draw`` itself: hypothesis then varies every level, not only the first branch.


def _number(draw: st.DrawFn, depth: int, wide: bool) -> ast.Expr:
    """A numeric expression: number attributes and literals, arithmetic, ``-x``."""
    pick = draw(st.integers(0, 9)) if depth else 9
    if pick < 4:
        return ast.Binary(
            draw(_ARITH), _number(draw, depth - 1, wide), _number(draw, depth - 1, wide)
        )
    if pick == 4:
        return ast.Unary(ast.UnOp.NEG, _number(draw, depth - 1, wide))
    if pick < 8 or draw(st.booleans()):
        return ref(draw(st.sampled_from(NUMBERS)))
    return literal(draw(st.one_of(*number_values(wide))))


def _string(draw: st.DrawFn) -> ast.Expr:
    return ref(draw(st.sampled_from(STRINGS))) if draw(st.booleans()) else literal(draw(TEXTS))


def _comparison(draw: st.DrawFn, wide: bool) -> ast.Expr:
    """Values of one kind compared, as admission lets them meet. Booleans only meet
    booleans; ``a.b < a.b`` passes the static kinds (attributes may hold anything) and
    is an error at run time: booleans do not order."""
    pick = draw(st.integers(0, 9))
    if pick < 6:
        return ast.Binary(draw(_COMPARE), _number(draw, 2, wide), _number(draw, 2, wide))
    if pick < 8:
        return ast.Binary(draw(_COMPARE), _string(draw), _string(draw))
    if pick == 8:
        flag = literal(draw(st.booleans())) if draw(st.booleans()) else ref("b")
        return ast.Binary(draw(_EQUAL), ref("b"), flag)
    return ast.Binary(draw(_ORDER), ref("b"), ref("b"))


def _condition(draw: st.DrawFn, depth: int, wide: bool) -> ast.Expr:
    """A condition: comparisons, true/false, and/or/not, equality of conditions."""
    pick = draw(st.integers(0, 9)) if depth else 9
    if pick < 3:
        return ast.Binary(
            draw(_LOGIC), _condition(draw, depth - 1, wide), _condition(draw, depth - 1, wide)
        )
    if pick == 3:  # often around and/or: their errors show through "not"
        inner = _condition(draw, depth - 1, wide)
        if draw(st.booleans()):
            inner = ast.Binary(draw(_LOGIC), inner, _condition(draw, depth - 1, wide))
        return ast.Unary(ast.UnOp.NOT, inner)
    if pick == 4:
        return ast.Binary(
            draw(_EQUAL), _condition(draw, depth - 1, wide), _condition(draw, depth - 1, wide)
        )
    if pick == 5:
        return literal(draw(st.booleans()))
    return _comparison(draw, wide)


@st.composite
def numbers(draw: st.DrawFn, depth: int = 2, wide: bool = False) -> ast.Expr:
    return _number(draw, depth, wide)


@st.composite
def conditions(draw: st.DrawFn, depth: int = 2, wide: bool = False) -> ast.Expr:
    return _condition(draw, depth, wide)


@dataclass(frozen=True)
class Case:
    """Conditions and the rows each is evaluated on. ``loads`` maps each attribute to
    the load the compiler would make of it (its guaranteed kind and nullability);
    ``rows`` hold a value per attribute, None for a null. ``form`` is how the columns
    reach the columnar backend: "python" (lists of Python values), "numpy" (arrays as
    EventBatch.array makes them) or "arrow" (pyarrow arrays; then ``rows`` are already
    the values arrow holds)."""

    conditions: tuple[ast.Expr, ...]
    loads: dict[str, expr.Load]
    rows: tuple[dict[str, Any], ...]
    form: str

    def lowered(self, condition: ast.Expr) -> expr.Expr:
        """The IR the compiler would make of a condition, with these loads."""

        def resolve(node: ast.Expr) -> expr.Expr:
            assert isinstance(node, ast.AttrRef)
            return self.loads[node.attr]

        return expr.lower(condition, resolve)

    def column(self, attr: str) -> list[Any]:
        return [row[attr] for row in self.rows]


@st.composite
def loads(draw: st.DrawFn) -> dict[str, expr.Load]:
    """Per attribute, a load whose kind is the true one or unknown (ANY), and which may
    be null (never the event's timestamp)."""
    out = {}
    for attr, kind in KINDS.items():
        known = kind is not expr.Kind.BOOLEAN and draw(st.booleans())
        nullable = attr != "timestamp" and draw(st.booleans())
        out[attr] = expr.Load(expr.EVENT, attr, kind if known else expr.Kind.ANY, nullable)
    return out


@st.composite
def rows(
    draw: st.DrawFn, loads: dict[str, expr.Load], wide: bool = False
) -> tuple[dict[str, Any], ...]:
    """Rows of the schema; a nullable attribute is None now and then."""
    nullable = tuple(attr for attr in KINDS if loads[attr].nullable)
    return tuple(draw(_rows(nullable, wide)))


@cache
def _rows(nullable: tuple[str, ...], wide: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    values = columns(wide)

    def value(attr: str) -> st.SearchStrategy[Any]:
        return (
            st.one_of(st.none(), values[attr], values[attr]) if attr in nullable else values[attr]
        )

    row = st.fixed_dictionaries({attr: value(attr) for attr in KINDS})
    return st.lists(row, min_size=1, max_size=16)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    """A few conditions (each is checked on its own) over one set of rows; one case in
    four has numbers beyond 2**53."""
    wide = draw(st.integers(0, 3)) == 0
    several = tuple(_condition(draw, 2, wide) for _ in range(draw(st.integers(1, 6))))
    chosen = draw(loads())
    drawn = draw(rows(chosen, wide))
    form = draw(st.sampled_from(["python", "numpy", "arrow"]))
    if form == "arrow":
        arrow = _arrow_columns(drawn)
        if arrow is None:
            form = "python"
        else:  # the values an arrow table holds (a mixed column becomes floats)
            drawn = tuple(
                dict(zip(arrow, r, strict=True)) for r in zip(*arrow.values(), strict=True)
            )
    return Case(several, chosen, drawn, form)


def _arrow_columns(drawn: tuple[dict[str, Any], ...]) -> dict[str, list[Any]] | None:
    out = {}
    for attr in KINDS:
        try:
            out[attr] = pa.array([row[attr] for row in drawn]).to_pylist()
        except (pa.ArrowException, OverflowError):
            return None  # ints beyond int64: no arrow input holds them
    return out


# --- the three evaluations -----------------------------------------------------------


def oracle_says(case: Case, condition: ast.Expr) -> list[bool]:
    """Per row, whether the oracle's interpreter finds the condition true."""
    out = []
    for k, row in enumerate(case.rows):
        record = {a: v for a, v in row.items() if v is not None and a != "timestamp"}
        event = Event(k, k, k, "A", row["timestamp"], record)
        out.append(truth(condition, Scope({VAR: (event,)}, frozenset())))
    return out


def scalar_says(case: Case, condition: ast.Expr) -> list[bool]:
    """Per row, whether the generated conjunct holds (an error is false)."""

    def place(load: expr.Load) -> str:
        return f"e[{codegen.field_index(load.key, lambda a: 3 + ATTRIBUTES.index(a))}]"

    code = codegen.python_code(case.lowered(condition), place)
    lines = ["def holds(e):", *codegen.conjunction_lines([code], "return False"), "    return True"]
    holds = codegen.build("\n".join(lines) + "\n", "holds")
    return [
        holds(("A", row["timestamp"], k, *(row[a] for a in ATTRIBUTES)))
        for k, row in enumerate(case.rows)
    ]


def columnar_says(case: Case, condition: ast.Expr) -> list[bool] | None:
    """Per row, whether the columnar backend finds the conjunct holds; None when it
    gives up for the batch."""

    def resolve(load: expr.Load) -> columnar.Raw:
        values = case.column(load.key)
        if case.form == "arrow":
            return pa.array(values)
        kind = KINDS[load.key]
        if case.form == "numpy" and None not in values and kind is not expr.Kind.BOOLEAN:
            if load.key == "timestamp":
                return np.asarray(values, dtype=np.float64)  # as EventBatch.times_array
            # as EventBatch.array makes a column of numbers or strings
            return np.asarray(values, dtype=None if kind is expr.Kind.NUMBER else object)
        return values

    try:
        python = case.form != "arrow"  # numpy arrays may hold rounded Python ints
        values, error = columnar.holds(case.lowered(condition), resolve, len(case.rows), python)
    except columnar.GiveUp:
        return None
    return (values & ~error).tolist()


@settings(max_examples=200, deadline=None)
@given(case=cases())
def test_scalar_and_columnar_backends_agree_with_the_oracle(case: Case) -> None:
    for condition in case.conditions:
        note(f"{text(condition)}  [{case.form}]  loads={list(case.loads.values())}")
        want = oracle_says(case, condition)
        assert scalar_says(case, condition) == want
        got = columnar_says(case, condition)
        if got is not None:
            assert got == want
