"""The states and edges of an NFA^b automaton (SIGMOD 2008, section 3.2, step 1).

The PATTERN clause fixes the states: one per single variable, and per Kleene variable a
pair ``a[1]`` (begin edge) and ``a[i]`` (take, ignore and proceed edges). A group
``SEQ(T1 v1, ..., Tm vm)+`` of m members (SIGMOD 2014, section 2.1) becomes m
first-iteration states ``v1[1] .. vm[1]`` and m loop states ``v1[i] .. vm[i]``, the
proceed edge at ``v1[i]``. Each state's edges carry the conjuncts placed on them by
their last identifier (step 2, :mod:`kleene.compiler.analysis`).
"""

from __future__ import annotations

from kleene.compiler.analysis import Conjunct, Phase
from kleene.compiler.groups import Edge, Link
from kleene.lang import ast


def nfa_states(
    positive: tuple[ast.Component, ...],
    conjuncts: list[Conjunct],
    groups: list[tuple[ast.Component, ...]],
) -> tuple[list[Edge], list[Link]]:
    """The states in order with the conjuncts placed on their edges, and each state's
    successors (:func:`successors`)."""
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
        if not comp.kleene:
            first = _at(live, ci, Phase.FIRST) + _at(live, ci, Phase.EACH)
            edges.append(("single", ci, comp, [c.expr for c in first], []))
            spans.append((len(edges) - 1, 0))
            ci += 1
            continue
        spans += [(len(edges), len(unit))] * (2 * len(unit))
        edges += _kleene_unit(live, ci, unit)
        ci += len(unit)
    return edges, successors(spans, len(edges))


def _at(live: list[Conjunct], component: int, phase: Phase) -> list[Conjunct]:
    """The conjuncts placed on ``component`` for ``phase``."""
    return [c for c in live if c.placement.component == component and c.placement.phase is phase]


def _kleene_unit(live: list[Conjunct], ci: int, unit: tuple[ast.Component, ...]) -> list[Edge]:
    """The first-iteration states, then the loop states, of a Kleene variable or group
    starting at positive component ``ci``; the loop head carries the proceed formula."""
    edges: list[Edge] = []
    for k, member in enumerate(unit):
        first = _at(live, ci + k, Phase.FIRST) + [
            c for c in _at(live, ci + k, Phase.EACH) if not c.placement.needs_previous
        ]
        edges.append(("first", ci + k, member, [c.expr for c in first], []))
    end = [c.expr for c in live if c.placement.phase is Phase.END]
    for k, member in enumerate(unit):
        each = [c.expr for c in _at(live, ci + k, Phase.EACH)]
        edges.append(("rest", ci + k, member, each, end if k == 0 else []))
    return edges


def successors(spans: list[tuple[int, int]], count: int) -> list[Link]:
    """Per state (given its unit's first state and size, 0 for a single variable): its
    ``then`` and ``exit`` states and, for a non-head loop state, its loop head."""
    links: list[Link] = []
    for index, (start, size) in enumerate(spans):
        after = start + 2 * size if size else start + 1
        exit_ = after if after < count else None
        if size == 0:
            links.append((exit_, None, None))
            continue
        head = start + size
        # first iteration v_j[1] -> v_j+1[1], v_m[1] -> v_1[i]; loop v_j[i] -> v_j+1[i],
        # v_m[i] -> v_1[i]
        then = index + 1 if index < head + size - 1 else head
        links.append((then, exit_ if index == head else None, head if index > head else None))
    return links
