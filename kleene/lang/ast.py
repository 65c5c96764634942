"""The abstract syntax tree of the SASE+ query language (SIGMOD 2008, section 2).

Every node is a frozen dataclass with a ``span`` giving its place in the query text.
Nodes declare their child fields in ``_children`` once; ``walk()`` and ``find()`` are
inherited from :class:`Node`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar, TypeVar

# the clause words, shared with the compiler and the runtimes (kleene.vocabulary)
from kleene.vocabulary import DEFAULT_STRATEGY as DEFAULT_STRATEGY
from kleene.vocabulary import OutputFormat as OutputFormat
from kleene.vocabulary import Strategy as Strategy
from kleene.vocabulary import TimeUnit as TimeUnit

N = TypeVar("N", bound="Node")


@dataclass(frozen=True)
class Span:
    """A 1-based line and column of the first character of a node."""

    line: int
    column: int

    @staticmethod
    def unknown() -> Span:
        return Span(0, 0)


@dataclass(frozen=True)
class Node:
    span: Span = field(default_factory=Span.unknown, compare=False, repr=False, kw_only=True)
    _children: ClassVar[tuple[str, ...]] = ()

    def children(self) -> Iterator[Node]:
        for name in self._children:
            value = getattr(self, name)
            if isinstance(value, Node):
                yield value
            elif isinstance(value, tuple):
                yield from (v for v in value if isinstance(v, Node))

    def walk(self) -> Iterator[Node]:
        """This node and all its descendants, depth first, parents before children."""
        yield self
        for child in self.children():
            yield from child.walk()

    def find(self, kind: type[N]) -> Iterator[N]:
        """All descendants (and self) of the given node class."""
        return (n for n in self.walk() if isinstance(n, kind))


# --- expressions -------------------------------------------------------------------


class IndexKind(Enum):
    """How a Kleene array element is addressed (SIGMOD 2008, section 2)."""

    FIRST = "1"  # a[1]
    CURRENT = "i"  # a[i]
    PREVIOUS = "i-1"  # a[i-1]
    LAST = "LEN"  # a[a.LEN]


@dataclass(frozen=True)
class Expr(Node):
    pass


@dataclass(frozen=True)
class Literal(Expr):
    value: int | float | str | bool


@dataclass(frozen=True)
class AttrRef(Expr):
    """``var.attr`` for a single variable, ``var[index].attr`` for a Kleene one.

    ``attr`` may be ``timestamp`` (the event time), ``type`` or ``id`` as well as any
    event attribute.
    """

    var: str
    attr: str
    index: IndexKind | None = None


@dataclass(frozen=True)
class LenRef(Expr):
    """``var.LEN``: the number of events selected by a Kleene variable."""

    var: str


class AggFunc(Enum):
    AVG = "avg"
    MIN = "min"
    MAX = "max"
    SUM = "sum"
    COUNT = "count"


class AggRange(Enum):
    """Which Kleene elements an aggregate covers."""

    BEFORE_CURRENT = "..i-1"  # avg(a[..i-1].price): elements 1 .. i-1 (WHERE only)
    ALL = ""  # avg(a[].price): the whole array (RETURN, or WHERE after the array ends)


@dataclass(frozen=True)
class Aggregate(Expr):
    """``func(var[range].attr)``; ``attr`` is None only for ``count(var[])``."""

    func: AggFunc
    var: str
    range: AggRange
    attr: str | None


class BinOp(Enum):
    ADD = "+"
    SUB = "-"
    MUL = "*"
    DIV = "/"
    MOD = "%"
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    AND = "and"
    OR = "or"

    @property
    def is_comparison(self) -> bool:
        return self in _COMPARISONS

    @property
    def is_arithmetic(self) -> bool:
        return self in _ARITHMETIC

    @property
    def is_logical(self) -> bool:
        return self in (BinOp.AND, BinOp.OR)


_COMPARISONS = frozenset({BinOp.EQ, BinOp.NE, BinOp.LT, BinOp.LE, BinOp.GT, BinOp.GE})
_ARITHMETIC = frozenset({BinOp.ADD, BinOp.SUB, BinOp.MUL, BinOp.DIV, BinOp.MOD})


@dataclass(frozen=True)
class Binary(Expr):
    op: BinOp
    left: Expr
    right: Expr
    _children: ClassVar[tuple[str, ...]] = ("left", "right")


class UnOp(Enum):
    NEG = "-"
    NOT = "not"


@dataclass(frozen=True)
class Unary(Expr):
    op: UnOp
    operand: Expr
    _children: ClassVar[tuple[str, ...]] = ("operand",)


@dataclass(frozen=True)
class Equivalence(Expr):
    """``[attr, ...]``: every variable of the strategy's scope has equal values of these
    attributes (SIGMOD 2008, section 2). Allowed only as a top-level WHERE conjunct."""

    attrs: tuple[str, ...]


# --- pattern -----------------------------------------------------------------------


@dataclass(frozen=True)
class Component(Node):
    """One SEQ component: ``Type var``, ``Type+ var[]`` or ``~(Type var)`` / ``!Type var``.

    The members of a negated nested sequence ``~SEQ(B b, C c)`` (SIGMOD 2014, section
    2.1: negation applied to a pattern) are consecutive negated components sharing
    ``group``, the index of the group's first member in the pattern; a lone negated
    component has ``group`` None. Likewise the members of a positive nested Kleene
    sequence ``SEQ(B b, C c)+`` (SIGMOD 2014, section 2.1: Kleene closure of a pattern)
    are consecutive components with ``kleene`` True sharing ``group``; a Kleene variable
    ``T+ v[]`` has ``group`` None.
    """

    event_type: str
    var: str
    kleene: bool = False
    negated: bool = False
    group: int | None = None


@dataclass(frozen=True)
class Seq(Node):
    components: tuple[Component, ...]
    _children: ClassVar[tuple[str, ...]] = ("components",)

    @property
    def positive(self) -> tuple[Component, ...]:
        return tuple(c for c in self.components if not c.negated)

    @property
    def negative(self) -> tuple[Component, ...]:
        return tuple(c for c in self.components if c.negated)

    def component(self, var: str) -> Component | None:
        return next((c for c in self.components if c.var == var), None)

    def negation_groups(self) -> list[tuple[Component, ...]]:
        """The negated components, one tuple per negated sequence (a lone negated
        component is a sequence of one), in pattern order."""
        groups: list[tuple[Component, ...]] = []
        for index, c in enumerate(self.components):
            if not c.negated:
                continue
            if c.group is not None and c.group != index and groups:
                groups[-1] = (*groups[-1], c)
            else:
                groups.append((c,))
        return groups

    def kleene_groups(self) -> list[tuple[Component, ...]]:
        """The members of each positive group ``SEQ(...)+``, in pattern order."""
        groups: dict[int, tuple[Component, ...]] = {}
        for c in self.components:
            if c.kleene and c.group is not None:
                groups[c.group] = (*groups.get(c.group, ()), c)
        return list(groups.values())

    def group_of(self, var: str) -> tuple[Component, ...] | None:
        """The members of the positive group ``var`` belongs to, or None."""
        return next((g for g in self.kleene_groups() if any(m.var == var for m in g)), None)


# --- clauses -----------------------------------------------------------------------


@dataclass(frozen=True)
class Window(Node):
    """``WITHIN amount [unit]``: last selected time minus first selected time <= size."""

    amount: int | float
    unit: TimeUnit | None = None

    @property
    def seconds(self) -> float | None:
        return None if self.unit is None else self.amount * self.unit.value


@dataclass(frozen=True)
class Confidence(Node):
    """``CONFIDENCE > threshold`` (or ``>=``): keep the results over interval events whose
    confidence passes (VLDB 2010, section 2.3)."""

    op: str
    threshold: int | float


@dataclass(frozen=True)
class ReturnItem(Node):
    expr: Expr
    alias: str | None = None
    _children: ClassVar[tuple[str, ...]] = ("expr",)


@dataclass(frozen=True)
class Query(Node):
    """A whole query. ``strategy_vars`` is the variable list of ``strategy(a, b[])`` in the
    function form of WHERE, or None when not given (then the scope is every variable).
    ``where`` holds the top-level conjuncts of the WHERE clause in text order."""

    pattern: Seq
    strategy: Strategy | None = None
    strategy_vars: tuple[str, ...] | None = None
    where: tuple[Expr, ...] = ()
    within: Window | None = None
    returns: tuple[ReturnItem, ...] = ()
    output: OutputFormat | None = None
    confidence: Confidence | None = None
    # where each name of ``strategy_vars`` is written (empty for a query built in code)
    strategy_var_spans: tuple[Span, ...] = field(default=(), compare=False, repr=False)
    _children: ClassVar[tuple[str, ...]] = ("pattern", "where", "within", "returns")


# --- programs: union and composition (SIGMOD 2014, section 2.1) -----------------------


@dataclass(frozen=True)
class Union(Node):
    """``q1 UNION q2 ...``: every match of any branch (a match found by several branches,
    the same events for the same variables, counts once)."""

    branches: tuple[Query, ...]
    _children: ClassVar[tuple[str, ...]] = ("branches",)


@dataclass(frozen=True)
class Definition(Node):
    """``DEFINE Name AS <union>;``: its matches become events of type ``Name`` (time: the
    match's last event; attributes: the RETURN items) for the statements after it."""

    name: str
    body: Union
    _children: ClassVar[tuple[str, ...]] = ("body",)


@dataclass(frozen=True)
class Program(Node):
    """Definitions in order, then the union whose matches the program returns."""

    definitions: tuple[Definition, ...]
    body: Union
    _children: ClassVar[tuple[str, ...]] = ("definitions", "body")

    @property
    def single(self) -> Query | None:
        """The one query of a program without DEFINE and UNION."""
        if self.definitions or len(self.body.branches) != 1:
            return None
        return self.body.branches[0]


# --- event-set (SES) patterns (match-window paper, section 3, Definition 1) -------------


@dataclass(frozen=True)
class Prev(Expr):
    """``prev(var.attr)``: in ``prev(v.A) op v.A``, the event bound to ``v+`` just before
    each other one (allowed only in an SES pattern)."""

    var: str
    attr: str


@dataclass(frozen=True)
class SetMember(Node):
    """``Type var`` (one event) or ``Type+ var`` (one or more) in an event set."""

    event_type: str
    var: str
    plus: bool = False


@dataclass(frozen=True)
class EventSet(Node):
    """``{C c, P+ p}``: variables whose events may occur in any order."""

    members: tuple[SetMember, ...]
    _children: ClassVar[tuple[str, ...]] = ("members",)


@dataclass(frozen=True)
class SetSeq(Node):
    """``SEQ({...}, {...}, B b)``: a sequence of event sets (a plain ``B b`` is a set of
    one)."""

    sets: tuple[EventSet, ...]
    _children: ClassVar[tuple[str, ...]] = ("sets",)


@dataclass(frozen=True)
class SesQuery(Node):
    """An SES query: event sets, the WHERE conjuncts in text order, WITHIN, and the
    OUTPUT clause's choice ("all", "earliest", "maximal", "earliest-maximal") if any."""

    pattern: SetSeq
    where: tuple[Expr, ...] = ()
    within: Window | None = None
    output: str | None = None
    _children: ClassVar[tuple[str, ...]] = ("pattern", "where", "within")
