"""Kleene closure of a nested sequence, ``SEQ(B b, C c)+`` (SIGMOD 2014, section 2.1).

The core language L is closed under Kleene closure of a whole pattern. A group of m
single-event members compiles to 2m NFA^b states (see :mod:`kleene.compiler.structure`):
the first iteration ``v1[1] .. vm[1]`` (begin edges), then the loop ``v1[i] .. vm[i]``
(take edges) whose head ``v1[i]`` holds the proceed edge. Only skip till any match is
supported, where every valid selection is a match (SIGMOD 2008, section 2).
"""

from __future__ import annotations

from kleene.errors import QueryError
from kleene.lang import ast

# (state kind, positive component index, component, begin/take conjuncts, proceed conjuncts)
Edge = tuple[str, int, ast.Component, list[ast.Expr], list[ast.Expr]]
# (then, exit, loop head of a non-head rest state): see State.then and State.exit
Link = tuple[int | None, int | None, int | None]

ENGINES = ("nfa", "merge")


def check_groups(pattern: ast.Seq, strategy: ast.Strategy, text: str) -> None:
    """Groups of two or more members are evaluated under skip till any match only."""
    for group in pattern.kleene_groups():
        if len(group) > 1 and strategy is not ast.Strategy.SKIP_TILL_ANY_MATCH:
            span = group[0].span
            raise QueryError(
                "a SEQ(...)+ group is evaluated under skip_till_any_match only, not "
                f"{strategy.value}",
                line=span.line or None,
                column=span.column or None,
                text=text,
            )
