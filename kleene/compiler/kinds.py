"""Kinds of the values a query compares (numbers or strings), fixed at compile time.

Attributes compared with each other, or used in arithmetic, must hold values of one kind;
the runtime rejects an event whose value has another kind when it admits it
(:mod:`kleene.runtime.ingest`) instead of comparing across kinds.
"""

from __future__ import annotations

from collections.abc import Callable

from kleene.compiler import codegen
from kleene.compiler.expr import Kind
from kleene.lang import ast


def value_kinds(query: ast.Query) -> tuple[dict[tuple[str, str], int], dict[int, str]]:
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


def kind_lookup(
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
