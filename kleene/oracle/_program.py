"""Programs by brute force (docs/semantics.md, "Programs"; SIGMOD 2014, section 2.1).

Each statement is evaluated over its whole stream with :func:`evaluate`: the raw events
plus one event per match of each definition it uses, typed by the definition's name,
timed at the match's last event, carrying the RETURN values, and placed after every raw
event of that time (derived events of one time by definition, then by match order). A
union is the set of its branches' matches, the first branch's values kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kleene.lang import ast

Evaluate = Callable[..., list[Any]]


def evaluate_program(
    program: ast.Program,
    events: Sequence[Mapping[str, Any]],
    evaluate: Evaluate,
    *,
    type_field: str = "type",
    time_field: str = "timestamp",
    id_field: str = "id",
) -> list[Any]:
    """The matches of the program's last statement (OracleMatch objects)."""
    fields = {"type_field": type_field, "time_field": time_field, "id_field": id_field}
    raw = [((e[time_field], 0, k), dict(e)) for k, e in enumerate(events)]
    derived: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {}

    def stream_for(union: ast.Union) -> list[dict[str, Any]]:
        types = {c.event_type for q in union.branches for c in q.pattern.components}
        items = list(raw)
        for name in derived:
            if name in types:
                items += derived[name]
        return [e for _, e in sorted(items, key=lambda item: item[0])]

    def run(union: ast.Union) -> tuple[list[dict[str, Any]], list[Any]]:
        stream = stream_for(union)
        found: dict[Any, Any] = {}
        for q in union.branches:
            for m in evaluate(q, stream, **fields):
                found.setdefault(tuple(sorted(m.ids.items())), m)
        return stream, list(found.values())

    for index, definition in enumerate(program.definitions):
        stream, matches = run(definition.body)
        events_of = []
        for m in matches:
            positions = sorted(p for ps in m.positions.values() for p in ps)
            end = stream[positions[-1]][time_field]
            ids = ";".join(f"{v}={','.join(map(str, xs))}" for v, xs in m.ids.items())
            order = (positions[-1], positions[0], tuple(positions), tuple(m.positions.values()))
            record = {
                **m.values,
                type_field: definition.name,
                time_field: end,
                id_field: f"{definition.name}[{ids}]",
            }
            events_of.append(((end, 1, index, order), record))
        derived[definition.name] = events_of
    return run(program.body)[1]
