"""Build an NFA^b plan from a validated query (SIGMOD 2008, section 3.2, steps 1-6).

The compiler is a sequence of named passes (:data:`PASSES`, in order), each a function
that reads what earlier passes put in a :class:`Draft` and adds its own part:

1. ``predicates_to_cnf``: WHERE as CNF conjuncts, equivalence tests expanded (step 2);
2. ``partition_keys``: the equivalence tests' partition and the key runs are indexed by;
3. ``place_conjuncts``: each conjunct on the edge of its last identifier (step 2);
4. ``event_layout``: the attributes an event tuple carries, per pattern type;
5. ``value_kinds``: the kinds the query demands of compared attributes;
6. ``nfa_structure``: the states and their successors (step 1);
7. ``state_vector``: the computation-state vector V (section 5.2.1);
8. ``merge_masks``: what each state and its successors still read (section 5.2.2);
9. ``edge_formulas``: begin/take/proceed functions, early filters and consistency
   classes of postponed conjuncts (SIGMOD 2014, sections 5.1-5.2);
10. ``negation_checks``: one check per negated variable (SIGMOD 2014, section 2.1);
11. ``return_function``: the RETURN function over the final V;
12. ``key_positions``: where the key's values sit in each type's event tuples;
13. ``time_window``: the WITHIN bound (steps 4-5);
14. ``vectorized_shape``: the vector engine's view of the plan (:mod:`kleene.compiler.shape`).

Step 3 (the ignore formulas) and the peek of step 6 depend only on ``Plan.strategy`` and
the next state's begin edge; the runtime applies them, and checks the window on every
edge (step 5).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from kleene.compiler import cnf, codegen, edgecode
from kleene.compiler.analysis import (
    Conjunct,
    PartitionKey,
    choose_key,
    expand_equivalence,
    infer_partition_key,
    is_key_equality,
    multi_groups,
    place,
)
from kleene.compiler.consistency import classify
from kleene.compiler.expr import Kind, lower
from kleene.compiler.groups import Edge, Link, check_groups
from kleene.compiler.kinds import kind_lookup
from kleene.compiler.kinds import value_kinds as _value_kinds
from kleene.compiler.matchwindows import refusal
from kleene.compiler.plan import Negation, Plan, State
from kleene.compiler.returns import return_items, window_text
from kleene.compiler.shape import Shape, vector_shape
from kleene.compiler.slots import Slot, SlotLayout
from kleene.compiler.structure import nfa_states
from kleene.errors import QueryError
from kleene.events import FIRST_ATTRIBUTE
from kleene.lang import ast, to_text
from kleene.lang import expr_to_text as _text


def conjuncts_of(query: ast.Query) -> list[ast.Expr]:
    """WHERE as CNF clauses, equivalence tests expanded (section 3.2, step 2)."""
    out: list[ast.Expr] = []
    for expr in query.where:
        if isinstance(expr, ast.Equivalence):
            out.extend(expand_equivalence(expr, query))
        else:
            out.extend(cnf.clauses(expr))
    return out


def equivalence_conjuncts(query: ast.Query) -> list[ast.Expr]:
    """The equalities the equivalence tests ``[x]`` expand to: they alone form the
    query's partition (SIGMOD 2008, section 2)."""
    return [
        e
        for test in query.where
        if isinstance(test, ast.Equivalence)
        for e in expand_equivalence(test, query)
    ]


@dataclass
class Draft:
    """A plan under construction: each pass fills the fields it names."""

    query: ast.Query
    text: str
    strategy: ast.Strategy
    output: ast.OutputFormat
    exprs: list[ast.Expr] = field(default_factory=list)
    partition: PartitionKey | None = None
    key: PartitionKey | None = None
    routed: bool = False
    conjuncts: list[Conjunct] = field(default_factory=list)
    used: dict[str, set[str]] = field(default_factory=dict)  # variable -> attributes read
    attributes: tuple[str, ...] = ()  # event tuple layout after (type, timestamp, id)
    positions: dict[str, int] = field(default_factory=dict)  # attribute -> tuple position
    edges: list[Edge] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    negated: dict[str, list[ast.Expr]] = field(default_factory=dict)  # negated var -> conjuncts
    layout: SlotLayout = field(default_factory=lambda: SlotLayout(()))
    read_at: list[list[Slot]] = field(default_factory=list)  # per state: the slots it reads
    final_reads: list[Slot] = field(default_factory=list)  # RETURN and negations read these
    masks: list[tuple[int, ...]] = field(default_factory=list)
    states: list[State] = field(default_factory=list)
    negations: tuple[Negation, ...] = ()
    returns: Callable[[Any], tuple[Any, ...]] | None = None
    key_index: dict[str, tuple[int, ...]] = field(default_factory=dict)
    common_key_index: tuple[int, ...] = ()
    window: float | None = None
    kind_groups: dict[tuple[str, str], int] = field(default_factory=dict)
    group_kinds: dict[int, str] = field(default_factory=dict)
    shape: Shape | None = None

    def kind_of(self, var: str, attr: str) -> Kind:
        """What admission guarantees about ``var.attr``'s values (:mod:`kinds`)."""
        return kind_lookup(self.query.pattern, self.kind_groups, self.group_kinds)(var, attr)

    def attr_index(self, attr: str) -> int:
        """The position of an attribute in an event tuple (type, timestamp, id, ...)."""
        return self.positions[attr]

    def slot_code(self, slot: Slot) -> str:
        return f"V[{self.layout.index(slot)}]"

    def context(self, var: str | None, kind: str) -> codegen.Context:
        return codegen.Context(var, kind, self.slot_code, self.attr_index, self.kind_of)


def predicates_to_cnf(d: Draft) -> None:
    """Step 2, first half: WHERE rewritten to CNF, ``[attr]`` expanded to equalities."""
    d.exprs = conjuncts_of(d.query)


def partition_keys(d: Draft) -> None:
    """The partition formed by the equivalence tests (SIGMOD 2008, section 2), and the
    key runs are indexed by where that cannot change a result (``choose_key``)."""
    pattern = d.query.pattern
    d.partition = infer_partition_key(equivalence_conjuncts(d.query), pattern)
    d.key, d.routed = choose_key(d.partition, d.exprs, pattern, d.strategy, d.output)


def place_conjuncts(d: Draft) -> None:
    """Step 2, second half: each conjunct placed by its last identifier; equalities the
    key routing already implies are marked so no edge checks them again."""
    pattern = d.query.pattern
    d.conjuncts = [
        Conjunct(e, place(e, pattern), d.routed and is_key_equality(e, d.key, pattern))
        for e in d.exprs
    ]


def event_layout(d: Draft) -> None:
    """The attributes each variable's formulas and RETURN read; an event tuple is
    ``(type, timestamp, id, *attributes)``."""
    query = d.query
    d.used = {
        c.var: set().union(
            *(codegen.event_attrs(x, c.var) for x in d.exprs),
            *(codegen.event_attrs(r.expr, c.var) for r in query.returns),
        )
        for c in query.pattern.components
    }
    key_attrs: set[str] = set()
    if d.key is not None:
        key_attrs = {a for cls in d.key.attrs for a in cls.values()} | set(d.key.common)
    d.attributes = tuple(sorted(set().union(*d.used.values()) | key_attrs))
    d.positions = {attr: FIRST_ATTRIBUTE + k for k, attr in enumerate(d.attributes)}


def nfa_structure(d: Draft) -> None:
    """Step 1: the states the PATTERN clause determines, their edges' conjuncts and
    successors (:mod:`kleene.compiler.structure`)."""
    pattern = d.query.pattern
    check_groups(pattern, d.strategy, d.text)
    d.edges, d.links = nfa_states(pattern.positive, d.conjuncts, multi_groups(pattern))


def state_vector(d: Draft) -> None:
    """SIGMOD 2008, section 5.2.1: the slots of V, every value a later edge formula, a
    negation check or RETURN reads."""
    pattern = d.query.pattern
    d.read_at = []
    for kind, _ci, comp, conds, end in d.edges:
        reads = [s for cond in conds for s in codegen.slots_needed(cond, comp.var, kind)]
        reads += [s for cond in end for s in codegen.slots_needed(cond, None, "rest")]
        d.read_at.append(reads)
    d.negated = {
        comp.var: [c.expr for c in d.conjuncts if c.placement.negated == comp.var]
        for comp in pattern.negative
    }
    negated_vars = set(d.negated)
    d.final_reads = [
        s
        for var, conds in d.negated.items()
        for cond in conds
        for s in codegen.slots_needed(cond, var, "single")
        if s[1] not in negated_vars
    ]
    for item in d.query.returns:
        d.final_reads += codegen.slots_needed(item.expr, None, "rest")
    needed = [s for reads in d.read_at for s in reads] + d.final_reads
    d.layout = SlotLayout(tuple(dict.fromkeys(needed)))


def merge_masks(d: Draft) -> None:
    """SIGMOD 2008, section 5.2.2: per state, the V columns it and its successors still
    read (plus what RETURN and the negation checks read from the final V); runs equal
    on them are equivalent and merge."""
    later = {d.layout.index(s) for s in d.final_reads}
    masks: list[tuple[int, ...]] = []
    for reads in reversed(d.read_at):
        later |= {d.layout.index(s) for s in reads}
        masks.append(tuple(sorted(later)))
    masks.reverse()
    for k, (_then, _exit, head) in enumerate(d.links):
        if head is not None:  # a group's loop: every rest state reads what its head does
            masks[k] = masks[head]
    d.masks = masks


def edge_formulas(d: Draft) -> None:
    """Step 2's formulas compiled per state: the begin/take edge, its relaxed form for
    SASE++ early filters and the consistency classes of its postponed conjuncts (SIGMOD
    2014, sections 5.1-5.2), and a loop head's proceed formula (step 6)."""
    d.states = [_state(d, index, edge) for index, edge in enumerate(d.edges)]


def _state(d: Draft, index: int, edge_spec: Edge) -> State:
    kind, ci, comp, conds, end = edge_spec
    # single-event properties first: they read only the event, so they are cheap and
    # can be evaluated over a whole batch; relationships read the state vector too
    properties = [c for c in conds if not codegen.slots_needed(c, comp.var, kind)]
    conds = properties + [c for c in conds if codegen.slots_needed(c, comp.var, kind)]
    ctx = d.context(comp.var, kind)
    edge = edgecode.edge_function(f"edge_{index}", comp, kind, conds, ctx, d.layout, d.attr_index)
    # SASE++ early filters (section 5.2): the conjuncts that read only the event and
    # single variables' values hold or fail the same way for every subset of a
    # Kleene array (true- and false-value consistent), so they can run on the fly
    early = [c for c in conds if all(map(edgecode.fixed, codegen.slots_needed(c, comp.var, kind)))]
    relaxed = edgecode.edge_function(
        f"relaxed_{index}", comp, kind, early, ctx, d.layout, d.attr_index, fixed_only=True
    )
    early_ids = {id(c) for c in early}
    deferred = [c for c in conds if id(c) not in early_ids]
    tests = (
        [
            classify(c, comp.var, d.slot_code, d.attr_index, f"consistency_{index}_{k}")
            for k, c in enumerate(deferred)
        ]
        if kind == "rest"
        else []
    )
    classified = tuple(t for t in tests if t is not None)
    proceed = None
    if kind == "rest" and d.links[index][2] is None:  # the loop head proceeds
        proceed = edgecode.proceed_function(f"proceed_{index}", end, d.context(None, "rest"))
    return State(
        index=index,
        var=comp.var,
        event_type=comp.event_type,
        kind=kind,
        component=ci,
        edge=edge,
        relaxed=relaxed,
        postponed=bool(deferred),
        consistency=classified,
        inconsistent=len(deferred) > len(classified),
        proceed=proceed,
        last=ci == len(d.query.pattern.positive) - 1,
        properties=tuple(lower(c, codegen.resolver(ctx)) for c in properties),
        property_text=tuple(_text(c) for c in properties),
        edge_text=tuple(_text(c) for c in conds[len(properties) :]),
        proceed_text=tuple(_text(c) for c in end),
        then=d.links[index][0],
        exit=d.links[index][1],
    )


def negation_checks(d: Draft) -> None:
    """Negated components and sequences (SIGMOD 2008, section 2; SIGMOD 2014, section
    2.1): one check per negated variable, holding the conjuncts placed on it."""
    key = d.key

    def keyed(var: str) -> bool:
        return key is not None and key.covers(var)

    pattern = d.query.pattern
    d.negations = tuple(
        edgecode.negation_checks(
            group, pattern, d.negated, keyed, d.slot_code, d.attr_index, d.kind_of
        )
        for group in pattern.negation_groups()
    )


def return_function(d: Draft) -> None:
    """The RETURN clause (SIGMOD 2008, section 2) as one function over the final V."""
    exprs = [item.expr for item in d.query.returns]
    if exprs:
        d.returns = edgecode.returns_function(exprs, d.context(None, "rest"))


def key_positions(d: Draft) -> None:
    """Per event type, the tuple positions of the run key's values."""
    if d.key is not None:
        d.key_index = {
            t: tuple(d.attr_index(a) for a in attrs) for t, attrs in d.key.by_type.items()
        }
        d.common_key_index = tuple(d.attr_index(a) for a in d.key.common)


def time_window(d: Draft) -> None:
    """Steps 4-5: the WITHIN bound, in seconds when it has a unit, else in timestamp
    units; the runtime checks it on every edge so old runs are pruned early."""
    within = d.query.within
    if within is not None:
        d.window = within.seconds if within.unit else float(within.amount)


def value_kinds(d: Draft) -> None:
    """Kind groups of compared attributes and the kinds the query text demands
    (:mod:`kleene.compiler.kinds`); the generated code relies on them."""
    d.kind_groups, d.group_kinds = _value_kinds(d.query)


def vectorized_shape(d: Draft) -> None:
    """The components and conditions the vectorized evaluation needs, or why it
    declines the plan (:mod:`kleene.compiler.shape`)."""
    d.shape = vector_shape(
        d.query,
        d.exprs,
        d.states,
        strategy=d.strategy,
        output=d.output,
        key=d.key,
        routed=d.routed,
    )


PASSES: tuple[Callable[[Draft], None], ...] = (
    predicates_to_cnf,
    partition_keys,
    place_conjuncts,
    event_layout,
    value_kinds,
    nfa_structure,
    state_vector,
    merge_masks,
    edge_formulas,
    negation_checks,
    return_function,
    key_positions,
    time_window,
    vectorized_shape,
)
"""The compiler passes in the order they run."""


def build_plan(
    query: ast.Query,
    text: str,
    *,
    strategy: ast.Strategy | None = None,
    output: ast.OutputFormat | None = None,
    match_windows: bool = False,
) -> Plan:
    """Run :data:`PASSES` over the query, then freeze the result into a :class:`Plan`;
    ``match_windows`` puts match windows in front of the engine, or raises QueryError
    where they would change the matches (:mod:`kleene.compiler.matchwindows`)."""
    draft = Draft(
        query,
        text,
        strategy or query.strategy or ast.DEFAULT_STRATEGY,
        output or query.output or ast.OutputFormat.ALL,
    )
    for compiler_pass in PASSES:
        compiler_pass(draft)
    plan = _plan(draft)
    if not match_windows:
        return plan
    why = refusal(plan)
    if why is not None:
        raise QueryError(f"match_windows does not apply to this query: {why}")
    return replace(plan, match_windows=True)


def _plan(d: Draft) -> Plan:
    query = d.query
    assert d.shape is not None  # every pass has run
    positive = query.pattern.positive
    return Plan(
        query=query,
        text=d.text,
        canonical=to_text(query),
        strategy=d.strategy,
        output=d.output,
        window=d.window,
        window_has_unit=query.within is not None and query.within.unit is not None,
        within=window_text(query.within),
        states=tuple(d.states),
        layout=d.layout,
        attributes=d.attributes,
        negations=d.negations,
        key=d.key,
        partition=d.partition,
        routed=d.routed,
        key_index=d.key_index,
        common_key_index=d.common_key_index,
        returns=d.returns,
        return_items=return_items(query),
        required=_required(query.pattern, d.used, d.key if d.routed else None),
        kind_groups=d.kind_groups,
        group_kinds=d.group_kinds,
        merge_masks=tuple(d.masks),
        positive_vars=tuple(c.var for c in positive),
        kleene_vars=frozenset(c.var for c in positive if c.kleene),
        shape=d.shape,
        groups=tuple(tuple(m.var for m in g) for g in multi_groups(query.pattern)),
    )


def _required(
    pattern: ast.Seq, used: dict[str, set[str]], key: PartitionKey | None
) -> dict[str, tuple[str, ...]]:
    """Attributes each pattern type's events must carry to take part in matching."""
    req: dict[str, set[str]] = {c.event_type: set() for c in pattern.components}
    for comp in pattern.components:
        req[comp.event_type] |= used[comp.var]
    if key is not None:
        for t, attrs in key.by_type.items():
            req.setdefault(t, set()).update(attrs)
    return {t: tuple(sorted(a)) for t, a in req.items()}
