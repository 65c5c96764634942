"""The expression IR: every WHERE conjunct and RETURN item in one typed form.

The compiler lowers each AST expression once, in the context of the edge, negation
check or RETURN clause it belongs to (:func:`lower`), into a tree of the nodes below.
References are resolved by then: a :class:`Load` reads an attribute of an event at
hand or a column of the computation-state vector (SIGMOD 2008, section 5.2.1). Every
backend evaluates this tree, and nothing else: the scalar per-event functions
(:mod:`kleene.compiler.codegen`), the columnar evaluation over a batch
(:mod:`kleene.compiler.columnar`) and Spark Column expressions
(:mod:`kleene.spark.columns`). Only the oracle keeps its own interpreter of the AST: it
is the check.

The rules (docs/semantics.md, "Arithmetic and types"), for every backend:

- **Values** are numbers (Python int or float; a boolean is not a number), strings,
  booleans, datetimes and null (a missing value). Event timestamps are numbers.
- **Errors.** An operation has no value (is an *error*) when an operand is null or an
  error; when arithmetic or ``-x`` meets anything but numbers; when ``/`` or ``%``
  divides by zero; when ``<``, ``<=``, ``>``, ``>=`` meet anything but two numbers,
  two strings or two datetimes; when ``and``, ``or``, ``not`` meet anything but booleans.
- **Numbers** are exact: int arithmetic does not overflow, int and float mix as in
  Python (``1 = 1.0``), ``/`` gives a float, ``%`` takes the sign of the divisor.
- ``=`` and ``!=`` compare any two non-null values.
- ``and`` and ``or`` evaluate the left operand first and stop when it decides the
  result: ``false and <error>`` is false, ``true or <error>`` is true.
- A conjunct holds only when it is true: an error makes it false. A RETURN item that is
  an error is null.

Admission (kleene.runtime.ingest) lets through only events whose attributes a query
reads are present and of one kind per *kind group* (attributes compared with each other
share a group). The compiler records what that guarantees on each load (:attr:`Load.kind`,
:attr:`Load.nullable`), so backends check only what can still go wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any, ClassVar

from kleene.lang import ast


class Kind(Enum):
    """What the compiler knows of a value's kind."""

    NUMBER = "number"
    STRING = "string"
    BOOLEAN = "boolean"
    ANY = "any"  # not known before the events arrive


class Expr:
    """An IR node. ``kind`` is the node's static kind: ``result`` for an operator."""

    __slots__ = ()
    result: ClassVar[Kind] = Kind.BOOLEAN

    @property
    def kind(self) -> Kind:
        return self.result

    def children(self) -> tuple[Expr, ...]:
        return ()

    def walk(self) -> Iterator[Expr]:
        yield self
        for child in self.children():
            yield from child.walk()


@dataclass(frozen=True, slots=True)
class Const(Expr):
    value: int | float | str | bool

    @property
    def kind(self) -> Kind:
        if isinstance(self.value, bool):
            return Kind.BOOLEAN
        return Kind.STRING if isinstance(self.value, str) else Kind.NUMBER


EVENT, PREVIOUS, SLOT = "event", "previous", "slot"


@dataclass(frozen=True, slots=True)
class Load(Expr):
    """A value read at evaluation time. ``source`` is EVENT (an attribute of the event
    the edge reads; ``key`` is the attribute name, including "type", "timestamp" and
    "id"), PREVIOUS (the same of the event just before it in its partition, used by
    the contiguous vector evaluation) or SLOT (a column of the state vector V; ``key``
    is the slot, see :mod:`kleene.compiler.slots`). ``value_kind`` is what admission
    guarantees about the value; ``nullable`` whether it may be missing."""

    source: str
    key: Any
    value_kind: Kind = Kind.ANY
    nullable: bool = False

    @property
    def kind(self) -> Kind:
        return self.value_kind


ARITHMETIC = ("+", "-", "*", "/", "%")
EQUALITY = ("=", "!=")
ORDERING = ("<", "<=", ">", ">=")


@dataclass(frozen=True, slots=True)
class Binary(Expr):
    """An operator node with two operands; ``result`` is the kind of its value."""

    op: str
    left: Expr
    right: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.left, self.right)


@dataclass(frozen=True, slots=True)
class Unary(Expr):
    """An operator node with one operand."""

    operand: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,)


@dataclass(frozen=True, slots=True)
class Arith(Binary):
    """``op`` is one of ARITHMETIC."""

    result: ClassVar[Kind] = Kind.NUMBER


@dataclass(frozen=True, slots=True)
class Compare(Binary):
    """``op`` is one of EQUALITY or ORDERING."""

    @property
    def ordering(self) -> bool:
        return self.op in ORDERING


@dataclass(frozen=True, slots=True)
class Logic(Binary):
    """``op`` is "and" or "or"."""


@dataclass(frozen=True, slots=True)
class Neg(Unary):
    result: ClassVar[Kind] = Kind.NUMBER


@dataclass(frozen=True, slots=True)
class Not(Unary):
    pass


def orderable(expr: Expr) -> bool:
    """Whether the static kind alone shows ``expr`` can take part in an ordering
    comparison (a number or a string); otherwise a backend checks at run time (a
    value of unknown kind may be a boolean, which does not order)."""
    return expr.kind in (Kind.NUMBER, Kind.STRING)


# --- lowering from the AST ---------------------------------------------------------

_ARITH_OPS = {
    ast.BinOp.ADD: "+",
    ast.BinOp.SUB: "-",
    ast.BinOp.MUL: "*",
    ast.BinOp.DIV: "/",
    ast.BinOp.MOD: "%",
}
_COMPARE_OPS = {
    ast.BinOp.EQ: "=",
    ast.BinOp.NE: "!=",
    ast.BinOp.LT: "<",
    ast.BinOp.LE: "<=",
    ast.BinOp.GT: ">",
    ast.BinOp.GE: ">=",
}
_LOGIC_OPS = {ast.BinOp.AND: "and", ast.BinOp.OR: "or"}

# How a reference (v.x, v[i].x, v.LEN, sum(v[..i-1].x), ...) reads in one context
Resolver = Callable[[ast.Expr], Expr]


def lower(node: ast.Expr, resolve: Resolver) -> Expr:
    """The IR of an AST expression; ``resolve`` turns each reference (AttrRef, LenRef,
    Aggregate) into the loads it reads in this context."""
    if isinstance(node, ast.Literal):
        return Const(node.value)
    if isinstance(node, ast.Binary):
        left, right = lower(node.left, resolve), lower(node.right, resolve)
        if node.op in _ARITH_OPS:
            return Arith(_ARITH_OPS[node.op], left, right)
        if node.op in _COMPARE_OPS:
            return Compare(_COMPARE_OPS[node.op], left, right)
        return Logic(_LOGIC_OPS[node.op], left, right)
    if isinstance(node, ast.Unary):
        operand = lower(node.operand, resolve)
        return Not(operand) if node.op is ast.UnOp.NOT else Neg(operand)
    if isinstance(node, ast.AttrRef | ast.LenRef | ast.Aggregate):
        return resolve(node)
    raise TypeError(f"no IR for {type(node).__name__}")


def loads(expr: Expr) -> list[Load]:
    """The loads an expression reads, in evaluation order."""
    return [n for n in expr.walk() if isinstance(n, Load)]


def reads_only(expr: Expr, *sources: str) -> bool:
    """Whether every load of ``expr`` reads from one of ``sources``."""
    return all(load.source in sources for load in loads(expr))
