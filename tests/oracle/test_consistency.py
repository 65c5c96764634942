"""The oracle's two definitions agree with each other on random queries and streams:
the NFA^b under skip till any match accepts exactly the valid selections (as
docs/semantics.md states), and every strategy's matches are valid selections."""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from kleene.lang import ast
from kleene.oracle import evaluate
from kleene.oracle._analysis import analyse
from kleene.oracle._nfa import nfa_matches
from kleene.oracle._output import match_order
from kleene.oracle._partition import infer_key
from kleene.oracle._selections import is_valid, valid_selections
from kleene.oracle._stream import load_stream
from tests.oracle.build import agg, cur, equiv, first, last, length, op, prev, ref

TYPES = ("A", "B", "C")


@st.composite
def patterns(draw: Any) -> tuple[ast.Component, ...]:
    n = draw(st.integers(1, 3))
    return tuple(
        ast.Component(draw(st.sampled_from(TYPES)), f"v{k}", kleene=draw(st.booleans()))
        for k in range(n)
    )


def _whole(component: ast.Component, attr: str, choice: int) -> ast.Expr:
    """A value of a variable that is complete (any reference form)."""
    var = component.var
    if not component.kleene:
        return ref(var, attr)
    return [first(var, attr), last(var, attr), agg("max", var, attr), length(var)][choice % 4]


@st.composite
def conjuncts(draw: Any, components: tuple[ast.Component, ...]) -> tuple[ast.Expr, ...]:
    out: list[ast.Expr] = []
    for _ in range(draw(st.integers(0, 2))):
        k = draw(st.integers(0, len(components) - 1))
        component = components[k]
        var, attr = component.var, draw(st.sampled_from(("x", "y")))
        symbol = draw(st.sampled_from(("==", "!=", "<", ">=")))
        kind = draw(st.integers(0, 4))
        earlier = components[:k]
        if component.kleene and kind == 0:
            out.append(op(symbol, cur(var, attr), prev(var, attr)))
        elif component.kleene and kind == 1:
            out.append(op(symbol, cur(var, attr), agg("avg", var, attr, before=True)))
        elif component.kleene and kind == 2 and earlier:
            other = draw(st.sampled_from(earlier))
            out.append(op(symbol, cur(var, attr), _whole(other, attr, draw(st.integers(0, 3)))))
        elif kind == 3 and earlier:
            other = draw(st.sampled_from(earlier))
            mine = _whole(component, attr, draw(st.integers(0, 3)))
            out.append(op(symbol, mine, _whole(other, attr, draw(st.integers(0, 3)))))
        else:
            out.append(
                op(
                    symbol,
                    _whole(component, attr, draw(st.integers(0, 3))),
                    draw(st.integers(0, 2)),
                )
            )
    if draw(st.booleans()):
        out.append(equiv("y"))
    return tuple(out)


@st.composite
def queries(draw: Any) -> ast.Query:
    components = draw(patterns())
    window = draw(st.one_of(st.none(), st.integers(1, 6)))
    return ast.Query(
        pattern=ast.Seq(components),
        where=draw(conjuncts(components)),
        within=None if window is None else ast.Window(window),
    )


@st.composite
def streams(draw: Any) -> list[dict[str, Any]]:
    events, time = [], 0
    for i in range(draw(st.integers(2, 8))):
        time += draw(st.integers(0, 2))
        events.append(
            {
                "type": draw(st.sampled_from((*TYPES, *TYPES, "D"))),
                "timestamp": time,
                "id": f"e{i}",
                "x": draw(st.integers(0, 2)),
                "y": draw(st.integers(0, 1)),
            }
        )
    return events


def _keys(selections: Any) -> set[Any]:
    return {match_order(s)[3] for s in selections}


@given(query=queries(), events=streams())
def test_nfa_under_skip_till_any_accepts_exactly_the_valid_selections(
    query: ast.Query, events: list[dict[str, Any]]
) -> None:
    plan = analyse(query)
    stream = load_stream(events, type_field="type", time_field="timestamp", id_field="id")
    runs = nfa_matches(plan, stream, ast.Strategy.SKIP_TILL_ANY_MATCH, infer_key(query))
    assert len(runs) == len(_keys(runs)), "two runs accepted the same selection"
    assert _keys(runs) == _keys(valid_selections(plan, stream))


@given(query=queries(), events=streams())
def test_every_strategy_returns_valid_selections(
    query: ast.Query, events: list[dict[str, Any]]
) -> None:
    plan = analyse(query)
    stream = load_stream(events, type_field="type", time_field="timestamp", id_field="id")
    everything = _keys(valid_selections(plan, stream))
    for strategy in ast.Strategy:
        found = nfa_matches(plan, stream, strategy, infer_key(query))
        assert all(is_valid(plan, s) for s in found)
        assert _keys(found) <= everything
        if strategy is ast.Strategy.STRICT_CONTIGUITY:
            for selection in found:
                spots = [e.position for chosen in selection for e in chosen]
                assert spots == list(range(spots[0], spots[-1] + 1))


@given(query=queries(), events=streams())
def test_non_overlap_keeps_disjoint_matches_of_each_partition(
    query: ast.Query, events: list[dict[str, Any]]
) -> None:
    every = evaluate(query, events, strategy=ast.Strategy.SKIP_TILL_ANY_MATCH)
    kept = evaluate(
        query,
        events,
        strategy=ast.Strategy.SKIP_TILL_ANY_MATCH,
        output=ast.OutputFormat.NON_OVERLAP,
    )
    assert all(m in every for m in kept)
    assert bool(kept) == bool(every)
    if not infer_key(query).classes:
        spans = [
            (
                min(p for ps in m.positions.values() for p in ps),
                max(p for ps in m.positions.values() for p in ps),
            )
            for m in kept
        ]
        assert all(later[0] > earlier[1] for earlier, later in pairwise(spans))
