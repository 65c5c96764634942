"""The compiled, immutable plan of a query: the NFA^b automaton of SIGMOD 2008 section 3.

A plan holds no runtime state; one plan serves every partition and every matcher.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kleene.compiler.analysis import PartitionKey
from kleene.compiler.consistency import ConsistencyTest
from kleene.compiler.expr import Expr
from kleene.compiler.returns import ReturnItem
from kleene.compiler.shape import Shape
from kleene.compiler.slots import SlotLayout
from kleene.events import FIRST_ATTRIBUTE
from kleene.lang import ast
from kleene.vocabulary import OutputFormat, Strategy

StateVector = tuple[Any, ...]
EdgeFn = Callable[[tuple[Any, ...], StateVector], StateVector | None]


@dataclass(frozen=True)
class State:
    """One NFA^b state.

    ``kind`` is "single" (a singleton state s), "first" (p[1] of a Kleene pair) or
    "rest" (p[i]). ``edge`` is the begin edge (single, first) or the take edge (rest).
    ``relaxed`` is the edge with only the conjuncts that hold or fail alike for every
    subset of a Kleene array (SASE++ early filters); it updates only single variables'
    V columns. ``property_text`` and ``edge_text`` split the edge's conjuncts into single-event
    properties (read only the event) and relationships (read V as well). ``proceed`` is
    the proceed formula of a rest state (without the peek at the next
    state, which the runtime adds). ``last`` marks the states of the last positive
    component, whose completion reaches F.
    """

    index: int
    var: str
    event_type: str
    kind: str
    component: int
    edge: EdgeFn
    relaxed: EdgeFn  # type, single-event properties and conditions on single variables only
    postponed: bool  # whether ``edge`` checks more than ``relaxed`` does
    consistency: tuple[ConsistencyTest, ...]  # take edge: classified postponed conjuncts
    inconsistent: bool  # take edge: some postponed conjunct has no consistency class
    proceed: Callable[[StateVector], bool] | None
    last: bool
    properties: tuple[Expr, ...]  # single-event properties of the begin/take edge, in the IR
    property_text: tuple[str, ...]
    edge_text: tuple[str, ...]  # its relationships (they read the state vector)
    proceed_text: tuple[str, ...]
    then: int | None = None
    exit: int | None = None

    @property
    def name(self) -> str:
        return {"single": self.var, "first": f"{self.var}[1]", "rest": f"{self.var}[i]"}[self.kind]


@dataclass(frozen=True)
class NegatedEvent:
    """One variable of a negation. ``check(e, V, earlier)`` tests a candidate event
    against the conjuncts whose last negated identifier is this variable; ``earlier``
    holds the events already chosen for the variables before it in the negated
    sequence."""

    var: str
    event_type: str
    check: Callable[[tuple[Any, ...], StateVector, tuple[tuple[Any, ...], ...]], bool]
    keyed: bool
    text: tuple[str, ...]


@dataclass(frozen=True)
class Negation:
    """A negated component ``~(T n)``, or a negated sequence ``~SEQ(T1 n1, ...)`` (SIGMOD
    2014, section 2.1), between positive components ``before`` and ``after`` (indices
    into the positive components; None at the pattern's start or end)."""

    members: tuple[NegatedEvent, ...]
    before: int | None
    after: int | None

    @property
    def var(self) -> str:
        return self.members[0].var

    @property
    def event_types(self) -> frozenset[str]:
        return frozenset(m.event_type for m in self.members)

    @property
    def keyed(self) -> bool:
        """Every member's candidates are looked up in the match's partition."""
        return all(m.keyed for m in self.members)


@dataclass(frozen=True)
class Plan:
    """Everything a runtime needs to know about a query; runtimes never read ``query``
    (the AST, kept for explain and the tools) nor anything else of the front end."""

    query: ast.Query
    text: str
    canonical: str  # the query's canonical text (kleene.lang.to_text): its identity
    strategy: Strategy
    output: OutputFormat
    window: float | None  # in timestamp units; seconds when the WITHIN has a unit
    window_has_unit: bool
    within: str | None  # the WITHIN clause's size as written ("5 minutes"), for messages
    states: tuple[State, ...]
    layout: SlotLayout
    attributes: tuple[str, ...]  # event tuple layout after (type, timestamp, id)
    negations: tuple[Negation, ...]
    key: PartitionKey | None  # what runs are indexed by (see analysis.choose_key)
    partition: PartitionKey | None  # the equivalence tests' partition (key starts with it)
    routed: bool  # runs are indexed by key
    key_index: dict[str, tuple[int, ...]]  # event type -> tuple positions of key values
    common_key_index: tuple[int, ...]
    returns: Callable[[StateVector], tuple[Any, ...]] | None
    return_items: tuple[ReturnItem, ...]  # name, time flag and type of each RETURN item
    required: dict[str, tuple[str, ...]]  # event type -> attributes its events must carry
    kind_groups: dict[tuple[str, str], int]  # (type, attribute) -> group of same-kind values
    group_kinds: dict[int, str]  # group -> "number" | "string", where the query demands it
    merge_masks: tuple[tuple[int, ...], ...]  # per state: V columns it and later states read
    positive_vars: tuple[str, ...]
    kleene_vars: frozenset[str]
    shape: Shape  # the vectorized evaluation's view (kleene.compiler.shape)
    groups: tuple[tuple[str, ...], ...] = ()  # members of each SEQ(...)+ of 2+ members
    match_windows: bool = False  # only candidate match windows' events reach the engine

    @property
    def partition_width(self) -> int:
        """How many leading values of a run's key are its partition's values (0 when
        runs are not routed: they all share the partition ())."""
        return len(self.partition.attrs) if self.routed and self.partition is not None else 0

    @property
    def return_names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.return_items)

    @property
    def return_times(self) -> tuple[bool, ...]:
        """One flag per RETURN item: whether it gives an event time."""
        return tuple(r.time for r in self.return_items)

    @property
    def initial_vector(self) -> StateVector:
        return (None,) * len(self.layout.slots)

    def attr_index(self, attr: str) -> int:
        return FIRST_ATTRIBUTE + self.attributes.index(attr)
