"""Build an NFA^b plan from a validated query (SIGMOD 2008, section 3.2, steps 1-6).

Step 1 lays out the states from PATTERN; step 2 places each CNF conjunct on the edge of
its last identifier; step 3 (ignore formulas) and steps 4-5 (the window, checked on
every edge) are applied by the runtime from ``Plan.strategy`` and ``Plan.window``;
step 6 (proceed edges peek at the next state's begin formula) likewise. The
computation-state vector of section 5.2.1 is laid out from the values later formulas
read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kleene.compiler import cnf, codegen
from kleene.compiler.analysis import (
    Conjunct,
    Phase,
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
from kleene.compiler.plan import NegatedEvent, Negation, Plan, State
from kleene.compiler.slots import Slot, SlotLayout
from kleene.lang import ast
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


def build_plan(
    query: ast.Query,
    text: str,
    *,
    strategy: ast.Strategy | None = None,
    output: ast.OutputFormat | None = None,
) -> Plan:
    strategy = strategy or query.strategy or ast.DEFAULT_STRATEGY
    output = output or query.output or ast.OutputFormat.ALL
    pattern = query.pattern
    positive = pattern.positive
    exprs = conjuncts_of(query)
    partition = infer_partition_key(equivalence_conjuncts(query), pattern)
    key, routed = choose_key(partition, exprs, pattern, strategy, output)
    conjuncts = [
        Conjunct(e, place(e, pattern), routed and is_key_equality(e, key, pattern)) for e in exprs
    ]

    # Event tuple layout: (type, timestamp, id, *attributes)
    used = {
        c.var: set().union(
            *(codegen.event_attrs(x, c.var) for x in exprs),
            *(codegen.event_attrs(r.expr, c.var) for r in query.returns),
        )
        for c in pattern.components
    }
    attributes = sorted(set().union(*used.values()) | _key_attrs(key))

    check_groups(pattern, strategy, text)
    edges, links = _edges(positive, conjuncts, multi_groups(pattern))

    # Gather the slots every formula reads, then lay out V.
    needed: list[Slot] = []
    read_at: list[list[Slot]] = []  # per state: the slots its edges read
    for kind, _ci, comp, conds, end in edges:
        reads = [s for cond in conds for s in codegen.slots_needed(cond, comp.var, kind)]
        reads += [s for cond in end for s in codegen.slots_needed(cond, None, "rest")]
        read_at.append(reads)
        needed += reads
    edge_slots = len(needed)
    negated_conjuncts = {
        comp.var: [c.expr for c in conjuncts if c.placement.negated == comp.var]
        for comp in pattern.negative
    }
    negated_vars = {comp.var for comp in pattern.negative}
    for var, conds in negated_conjuncts.items():
        for cond in conds:
            needed += [
                s for s in codegen.slots_needed(cond, var, "single") if s[1] not in negated_vars
            ]
    return_exprs = [item.expr for item in query.returns]
    for expr in return_exprs:
        needed += codegen.slots_needed(expr, None, "rest")
    layout = SlotLayout(tuple(dict.fromkeys(needed)))
    # Merge masks (section 5.2.2): what a state and its successors still read, plus
    # what RETURN and the negation checks read from the final vector.
    final_reads = {layout.index(s) for s in needed[edge_slots:]}
    masks: list[tuple[int, ...]] = []
    later: set[int] = set(final_reads)
    for reads in reversed(read_at):
        later |= {layout.index(s) for s in reads}
        masks.append(tuple(sorted(later)))
    masks.reverse()
    for k, (_then, _exit, head) in enumerate(links):
        if head is not None:  # a group's loop: every rest state reads what its head does
            masks[k] = masks[head]

    attr_position = {attr: 3 + k for k, attr in enumerate(attributes)}

    def attr_index(attr: str) -> int:
        return attr_position[attr]

    def slot_code(slot: Slot) -> str:
        return f"V[{layout.index(slot)}]"

    kind_groups, group_kinds = _kinds(query)
    kind_of = _kind_lookup(pattern, kind_groups, group_kinds)

    states: list[State] = []
    for index, (kind, ci, comp, conds, end) in enumerate(edges):
        # single-event properties first: they read only the event, so they are cheap and
        # can be evaluated over a whole batch; relationships read the state vector too
        properties = [c for c in conds if not codegen.slots_needed(c, comp.var, kind)]
        conds = properties + [c for c in conds if codegen.slots_needed(c, comp.var, kind)]
        ctx = codegen.Context(comp.var, kind, slot_code, attr_index, kind_of)
        edge = _edge_function(f"edge_{index}", comp, kind, conds, ctx, layout, attr_index)
        # SASE++ early filters (section 5.2): the conjuncts that read only the event and
        # single variables' values hold or fail the same way for every subset of a
        # Kleene array (true- and false-value consistent), so they can run on the fly
        early = [c for c in conds if all(map(_fixed, codegen.slots_needed(c, comp.var, kind)))]
        relaxed = _edge_function(
            f"relaxed_{index}", comp, kind, early, ctx, layout, attr_index, fixed_only=True
        )
        early_ids = {id(c) for c in early}
        deferred = [c for c in conds if id(c) not in early_ids]
        tests = (
            [
                classify(c, comp.var, slot_code, attr_index, f"consistency_{index}_{k}")
                for k, c in enumerate(deferred)
            ]
            if kind == "rest"
            else []
        )
        proceed = None
        if kind == "rest" and links[index][2] is None:  # the loop head proceeds
            pctx = codegen.Context(None, "rest", slot_code, attr_index, kind_of)
            proceed = _proceed_function(f"proceed_{index}", end, pctx)
        states.append(
            State(
                index=index,
                var=comp.var,
                event_type=comp.event_type,
                kind=kind,
                component=ci,
                edge=edge,
                relaxed=relaxed,
                postponed=bool(deferred),
                consistency=tuple(t for t in tests if t is not None),
                inconsistent=len(deferred) > len([t for t in tests if t is not None]),
                proceed=proceed,
                last=ci == len(positive) - 1,
                properties=tuple(lower(c, codegen.resolver(ctx)) for c in properties),
                property_text=tuple(_text(c) for c in properties),
                edge_text=tuple(_text(c) for c in conds[len(properties) :]),
                proceed_text=tuple(_text(c) for c in end),
                then=links[index][0],
                exit=links[index][1],
            )
        )

    negations = tuple(
        _negation(group, pattern, negated_conjuncts, key, slot_code, attr_index, kind_of)
        for group in pattern.negation_groups()
    )

    returns = None
    if return_exprs:
        rctx = codegen.Context(None, "rest", slot_code, attr_index, kind_of)
        body = ", ".join(codegen.expr_code(e, rctx) for e in return_exprs)
        returns = codegen.build(
            "def returns(V):\n"
            f"    try:\n        return ({body},)\n"
            f"    except {codegen.CAUGHT}:\n        return _fallback(V)\n",
            "returns",
            {"_fallback": _safe_returns(return_exprs, rctx)},
        )

    key_index: dict[str, tuple[int, ...]] = {}
    common_index: tuple[int, ...] = ()
    if key is not None:
        key_index = {t: tuple(attr_index(a) for a in attrs) for t, attrs in key.by_type.items()}
        common_index = tuple(attr_index(a) for a in key.common)

    window = None
    if query.within is not None:
        window = query.within.seconds if query.within.unit else float(query.within.amount)

    return Plan(
        query=query,
        text=text,
        strategy=strategy,
        output=output,
        window=window,
        window_has_unit=query.within is not None and query.within.unit is not None,
        states=tuple(states),
        layout=layout,
        attributes=tuple(attributes),
        negations=negations,
        key=key,
        partition=partition,
        routed=routed,
        key_index=key_index,
        common_key_index=common_index,
        returns=returns,
        return_names=tuple(item.alias or _text(item.expr) for item in query.returns),
        required=_required(pattern, used, key if routed else None),
        kind_groups=kind_groups,
        group_kinds=group_kinds,
        merge_masks=tuple(masks),
        positive_vars=tuple(c.var for c in positive),
        kleene_vars=frozenset(c.var for c in positive if c.kleene),
        groups=tuple(tuple(m.var for m in g) for g in multi_groups(pattern)),
    )


def _edges(
    positive: tuple[ast.Component, ...],
    conjuncts: list[Conjunct],
    groups: list[tuple[ast.Component, ...]],
) -> tuple[list[Edge], list[Link]]:
    """The states (step 1) with the conjuncts placed on them (step 2), and each state's
    successors: one state per single variable; per Kleene variable, or group
    ``SEQ(T1 v1, ..., Tm vm)+`` of m members (SIGMOD 2014, 2.1), m first-iteration
    states v1[1]..vm[1] and m loop states v1[i]..vm[i], the proceed edge at v1[i]."""
    member_of = {m.var: g for g in groups for m in g}
    edges: list[Edge] = []
    spans: list[tuple[int, int]] = []  # per state: (first state of its unit, unit size)
    ci = 0
    while ci < len(positive):
        comp = positive[ci]
        unit = member_of.get(comp.var, (comp,))
        live = [
            c
            for c in conjuncts
            if c.placement.negated is None
            and ci <= c.placement.component < ci + len(unit)
            and not c.key_equality
        ]

        def at(k: int, phase: Phase, live: list[Conjunct] = live, ci: int = ci) -> list[Conjunct]:
            return [
                c for c in live if c.placement.component == ci + k and c.placement.phase is phase
            ]

        if not comp.kleene:
            edges.append(
                ("single", ci, comp, [c.expr for c in at(0, Phase.FIRST) + at(0, Phase.EACH)], [])
            )
            spans.append((len(edges) - 1, 0))
            ci += 1
            continue
        start = len(edges)
        for k, member in enumerate(unit):
            first = at(k, Phase.FIRST) + [
                c for c in at(k, Phase.EACH) if not c.placement.needs_previous
            ]
            edges.append(("first", ci + k, member, [c.expr for c in first], []))
        end = [c.expr for c in live if c.placement.phase is Phase.END]
        for k, member in enumerate(unit):
            each = [c.expr for c in at(k, Phase.EACH)]
            edges.append(("rest", ci + k, member, each, end if k == 0 else []))
        spans += [(start, len(unit))] * (2 * len(unit))
        ci += len(unit)
    links: list[Link] = []
    for index, (start, size) in enumerate(spans):
        after = start + 2 * size if size else start + 1
        exit_ = after if after < len(edges) else None
        if size == 0:
            links.append((exit_, None, None))
            continue
        head = start + size
        # first iteration v_j[1] -> v_j+1[1], v_m[1] -> v_1[i]; loop v_j[i] -> v_j+1[i],
        # v_m[i] -> v_1[i]
        then = index + 1 if index < head + size - 1 else head
        links.append((then, exit_ if index == head else None, head if index > head else None))
    return edges, links


def _key_attrs(key: Any) -> set[str]:
    if key is None:
        return set()
    return {a for cls in key.attrs for a in cls.values()} | set(key.common)


def _edge_function(
    name: str,
    comp: ast.Component,
    kind: str,
    conds: list[ast.Expr],
    ctx: codegen.Context,
    layout: SlotLayout,
    attr_index: Callable[[str], int],
    *,
    fixed_only: bool = False,
) -> Any:
    lines = [f"def {name}(e, V):", f"    if e[0] != {comp.event_type!r}: return None"]
    lines += codegen.conjunction_lines([codegen.expr_code(c, ctx) for c in conds], "return None")
    update = _update_code(comp.var, kind, layout, attr_index, fixed_only=fixed_only)
    if update is None:
        lines.append("    return V")
    else:
        lines += [
            "    try:",
            f"        return {update}",
            f"    except {codegen.CAUGHT}: return None",
        ]
    return codegen.build("\n".join(lines) + "\n", name)


def _fixed(slot: Slot) -> bool:
    """Slots whose value does not depend on which Kleene elements a match picks: a
    single variable's attributes."""
    return slot[0] == "attr" and slot[2] == "single"


def _update_code(
    var: str,
    kind: str,
    layout: SlotLayout,
    attr_index: Callable[[str], int],
    *,
    fixed_only: bool = False,
) -> str | None:
    """The new V after selecting an event for ``var`` (section 5.2.1); with
    ``fixed_only``, only the slots that are set once."""
    mine = {i: s for i, s in layout.for_var(var) if _fixed(s) or not fixed_only}
    if not mine:
        return None

    def field(attr: str) -> str:
        return codegen.event_field(attr, attr_index)

    cols = []
    for i, slot in enumerate(layout.slots):
        if i not in mine:
            cols.append(f"V[{i}]")
            continue
        op = slot[0]
        begin = kind in ("single", "first")
        if op == "attr":
            which = slot[2]
            cols.append(field(slot[3]) if begin or which == "last" else f"V[{i}]")
        elif op == "count":
            cols.append("1" if begin else f"V[{i}] + 1")
        elif op == "sum":
            cols.append(field(slot[2]) if begin else f"V[{i}] + {field(slot[2])}")
        else:  # min / max
            f = field(slot[2])
            cmp = "<" if op == "min" else ">"
            cols.append(f if begin else f"({f} if {f} {cmp} V[{i}] else V[{i}])")
    return "(" + ", ".join(cols) + ",)"


def _proceed_function(name: str, conds: list[ast.Expr], ctx: codegen.Context) -> Any:
    lines = [f"def {name}(V):"]
    lines += codegen.conjunction_lines([codegen.expr_code(c, ctx) for c in conds], "return False")
    lines.append("    return True")
    return codegen.build("\n".join(lines) + "\n", name)


def _negation(
    group: tuple[ast.Component, ...],
    pattern: ast.Seq,
    conjuncts: dict[str, list[ast.Expr]],
    key: Any,
    slot_code: Callable[[Slot], str],
    attr_index: Callable[[str], int],
    kind_of: Callable[[str, str], Kind],
) -> Negation:
    """A negated component or sequence: one check per variable, holding the conjuncts
    whose last negated identifier it is; earlier members are read from ``P``."""
    positive = [c.var for c in pattern.positive]
    first = pattern.components.index(group[0])
    last = pattern.components.index(group[-1])
    before_vars = [c.var for c in pattern.components[:first] if not c.negated]
    after_vars = [c.var for c in pattern.components[last + 1 :] if not c.negated]
    earlier = {m.var: k for k, m in enumerate(group)}

    def member_slot(slot: Slot) -> str:
        if slot[1] in earlier:  # ("attr", var, "single", attr) of an earlier member
            return f"P[{earlier[slot[1]]}][{codegen.field_index(slot[3], attr_index)}]"
        return slot_code(slot)

    members = []
    for comp in group:
        conds = conjuncts[comp.var]
        ctx = codegen.Context(comp.var, "single", member_slot, attr_index, kind_of)
        name = f"negation_{comp.var}"
        lines = [f"def {name}(e, V, P):", f"    if e[0] != {comp.event_type!r}: return False"]
        lines += codegen.conjunction_lines(
            [codegen.expr_code(c, ctx) for c in conds], "return False"
        )
        lines.append("    return True")
        members.append(
            NegatedEvent(
                var=comp.var,
                event_type=comp.event_type,
                check=codegen.build("\n".join(lines) + "\n", name),
                keyed=key is not None and key.covers(comp.var),
                text=tuple(_text(c) for c in conds),
            )
        )
    return Negation(
        members=tuple(members),
        before=positive.index(before_vars[-1]) if before_vars else None,
        after=positive.index(after_vars[0]) if after_vars else None,
    )


def _safe_returns(exprs: list[ast.Expr], ctx: codegen.Context) -> Callable[[Any], tuple[Any, ...]]:
    """Per-item evaluation when the fast path raised: a failing item returns None."""
    items = [
        codegen.build(
            f"def item(V):\n    try:\n        return {codegen.expr_code(e, ctx)}\n"
            f"    except {codegen.CAUGHT}:\n        return None\n",
            "item",
        )
        for e in exprs
    ]
    return lambda V: tuple(f(V) for f in items)


def _required(pattern: ast.Seq, used: dict[str, set[str]], key: Any) -> dict[str, tuple[str, ...]]:
    """Attributes each pattern type's events must carry to take part in matching."""
    req: dict[str, set[str]] = {c.event_type: set() for c in pattern.components}
    for comp in pattern.components:
        req[comp.event_type] |= used[comp.var]
    if key is not None:
        for t, attrs in key.by_type.items():
            req.setdefault(t, set()).update(attrs)
    return {t: tuple(sorted(a)) for t, a in req.items()}


def _kinds(query: ast.Query) -> tuple[dict[tuple[str, str], int], dict[int, str]]:
    """Kind groups of (type, attribute): attributes compared with each other share a
    group; a group's kind is fixed where the query text shows it (arithmetic, sum/avg,
    comparison with a literal), otherwise learned from the first event."""
    types = {c.var: c.event_type for c in query.pattern.components}
    parent: dict[tuple[str, str], tuple[str, str]] = {}
    demanded: dict[tuple[str, str], str] = {}

    def find(x: tuple[str, str]) -> tuple[str, str]:
        parent.setdefault(x, x)
        while parent[x] != x:
            x = parent[x]
        return x

    def leaves(node: ast.Expr) -> list[tuple[str, str]]:
        if isinstance(node, ast.AttrRef) and node.attr not in codegen.FIXED_FIELDS:
            return [(types[node.var], node.attr)]
        if (
            isinstance(node, ast.Aggregate)
            and node.attr
            and node.func in (ast.AggFunc.MIN, ast.AggFunc.MAX)
        ):
            return [(types[node.var], node.attr)]
        return []

    def static(node: ast.Expr) -> str | None:
        if isinstance(node, ast.Literal) and not isinstance(node.value, bool):
            return "string" if isinstance(node.value, str) else "number"
        if isinstance(node, ast.Binary) and node.op.is_arithmetic:
            return "number"
        if isinstance(node, ast.Unary) and node.op is ast.UnOp.NEG:
            return "number"
        if isinstance(node, ast.LenRef):
            return "number"
        if isinstance(node, ast.Aggregate) and node.func not in (ast.AggFunc.MIN, ast.AggFunc.MAX):
            return "number"
        return None

    for node in query.walk():
        if isinstance(node, ast.Binary) and (node.op.is_arithmetic or node.op.is_comparison):
            group = leaves(node.left) + leaves(node.right)
            for other in group[1:]:
                parent[find(other)] = find(group[0])
            kind = "number" if node.op.is_arithmetic else static(node.left) or static(node.right)
            for leaf in group:
                find(leaf)
                if kind:
                    demanded.setdefault(leaf, kind)
        elif isinstance(node, ast.Unary) and node.op is ast.UnOp.NEG:
            for leaf in leaves(node.operand):
                demanded.setdefault(find(leaf), "number")
        elif isinstance(node, ast.Aggregate) and node.attr and static(node) == "number":
            demanded.setdefault((types[node.var], node.attr), "number")
            find((types[node.var], node.attr))
    for ref in query.find(ast.AttrRef):
        if ref.attr not in codegen.FIXED_FIELDS:
            find((types[ref.var], ref.attr))
    roots = {root: k for k, root in enumerate(sorted({find(x) for x in parent}))}
    group_of = {x: roots[find(x)] for x in parent}
    group_kind: dict[int, str] = {}
    for leaf, kind in demanded.items():
        group_kind.setdefault(group_of[leaf], kind)
    return group_of, group_kind


def _kind_lookup(
    pattern: ast.Seq, kind_groups: dict[tuple[str, str], int], group_kinds: dict[int, str]
) -> Callable[[str, str], Kind]:
    """What admission guarantees about ``var.attr``'s values: the kind the query text
    demands of its kind group, if any."""
    types = {c.var: c.event_type for c in pattern.components}

    def kind_of(var: str, attr: str) -> Kind:
        group = kind_groups.get((types[var], attr))
        demanded = group_kinds.get(group) if group is not None else None
        return Kind(demanded) if demanded else Kind.ANY

    return kind_of
