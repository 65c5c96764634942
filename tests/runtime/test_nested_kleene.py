"""Kleene closure of a nested sequence, SEQ(B b, C c)+ (SIGMOD 2014, section 2.1):
hand-computed matches, the printer, validation errors and the engine choice."""

from __future__ import annotations

from typing import Any

import pytest

import kleene
from kleene.errors import QueryError, QuerySyntaxError
from kleene.lang import parse, to_text

EXAMPLE = """PATTERN SEQ(A a, SEQ(B b, C c)+, D d)
WHERE skip_till_any_match AND c[i].x > b[i].x AND b[i].x > c[i-1].x
WITHIN 20"""


def _events(spec: str) -> list[dict[str, Any]]:
    """``"a1:0 b1:1"``: id (its first letter, upper-cased, is the type) and x; the
    timestamp is the position."""
    out = []
    for t, item in enumerate(spec.split()):
        name, x = item.split(":")
        out.append({"type": name[0].upper(), "id": name, "timestamp": t, "x": int(x), "k": 0})
    return out


def _ids(text: str, events: list[dict[str, Any]], **options: Any) -> set[tuple[Any, ...]]:
    matches = kleene.compile(text, **options).run(events)
    found = {tuple(sorted((v, tuple(ids)) for v, ids in m.ids().items())) for m in matches}
    assert len(found) == len(matches)
    return found


def _match(**ids: str) -> tuple[Any, ...]:
    return tuple(sorted((v, tuple(x.split())) for v, x in ids.items()))


STREAM = _events("a1:0 b1:1 c1:2 b2:3 c2:4 b3:2 c3:9 d1:0")


@pytest.mark.parametrize("engine", ["nfa", "merge"])
def test_the_example_query(engine: str) -> None:
    # pairs (b, c) with c.x > b.x: b1c1 b1c2 b1c3 b2c2 b2c3 b3c3; a next pair needs
    # b.x > the previous c.x: after c1 (2) only b2 (3) qualifies; after c2 (4) none
    expected = {
        _match(a="a1", b="b1", c="c1", d="d1"),
        _match(a="a1", b="b1", c="c2", d="d1"),
        _match(a="a1", b="b1", c="c3", d="d1"),
        _match(a="a1", b="b2", c="c2", d="d1"),
        _match(a="a1", b="b2", c="c3", d="d1"),
        _match(a="a1", b="b3", c="c3", d="d1"),
        _match(a="a1", b="b1 b2", c="c1 c2", d="d1"),
        _match(a="a1", b="b1 b2", c="c1 c3", d="d1"),
    }
    assert _ids(EXAMPLE, STREAM, engine=engine) == expected


def test_the_window_bounds_the_whole_match() -> None:
    assert _ids(EXAMPLE.replace("WITHIN 20", "WITHIN 6"), STREAM) == set()


def test_a_trailing_group_reports_every_completed_iteration() -> None:
    text = "PATTERN SEQ(A a, SEQ(B b, C c)+) WHERE skip_till_any_match"
    assert _ids(text, _events("a1:0 b1:0 c1:0 b2:0 c2:0")) == {
        _match(a="a1", b="b1", c="c1"),
        _match(a="a1", b="b1", c="c2"),
        _match(a="a1", b="b2", c="c2"),
        _match(a="a1", b="b1 b2", c="c1 c2"),
    }


def test_members_equated_per_iteration_are_no_partition_key() -> None:
    text = "PATTERN SEQ(SEQ(B b, C c)+, D d) WHERE skip_till_any_match AND b[i].x = c[i].x"
    q = kleene.compile(text)
    assert q.plan.key is None  # b[i].x = c[i].x does not make all events share x
    assert _ids(text, _events("b1:1 c1:1 b2:2 c2:2 d1:9")) == {
        _match(b="b1", c="c1", d="d1"),
        _match(b="b2", c="c2", d="d1"),
        _match(b="b1 b2", c="c1 c2", d="d1"),
    }


def test_lengths_aggregates_and_return() -> None:
    text = """PATTERN SEQ(A a, SEQ(B b, C c)+)
    WHERE skip_till_any_match AND b.LEN >= 2 AND c[i].x > max(c[..i-1].x)
    RETURN sum(c[].x) AS s, b[b.LEN].x AS last_b, c.LEN AS n, b[1].x AS first_b"""
    events = _events("a1:0 b1:1 c1:5 b2:2 c2:3 b3:4 c3:7")
    found = {tuple(sorted(m.ids().items())): m.values() for m in kleene.compile(text).run(events)}
    # two iterations whose c's increase: (c1, c3), (c2, c3); three: c1 5 > c2 3 fails
    assert found == {
        _match(a="a1", b="b1 b2", c="c1 c3"): {"s": 12, "last_b": 2, "n": 2, "first_b": 1},
        _match(a="a1", b="b1 b3", c="c1 c3"): {"s": 12, "last_b": 4, "n": 2, "first_b": 1},
        _match(a="a1", b="b1 b3", c="c2 c3"): {"s": 10, "last_b": 4, "n": 2, "first_b": 1},
        _match(a="a1", b="b2 b3", c="c2 c3"): {"s": 10, "last_b": 4, "n": 2, "first_b": 2},
    }


def test_first_member_element_in_a_condition_on_a_later_member() -> None:
    text = "PATTERN SEQ(SEQ(B b, C c)+) WHERE skip_till_any_match AND c[i].x = b[1].x"
    assert _ids(text, _events("b1:1 c1:1 b2:5 c2:1 c3:5")) == {
        _match(b="b1", c="c1"),
        _match(b="b1", c="c2"),
        _match(b="b2", c="c3"),
        _match(b="b1 b2", c="c1 c2"),
    }


def test_a_group_of_one_is_a_kleene_variable() -> None:
    events = _events("a1:0 b1:3 b2:1 b3:4")
    group = "PATTERN SEQ(A a, SEQ(B b)+) WHERE skip_till_any_match AND b[i].x > b[i-1].x"
    plain = "PATTERN SEQ(A a, B+ b[]) WHERE skip_till_any_match AND b[i].x > b[i-1].x"
    assert _ids(group, events) == _ids(plain, events)
    assert _ids(group, events, strategy="skip_till_next_match") == _ids(
        plain, events, strategy="skip_till_next_match"
    )


def test_printer_round_trip() -> None:
    query = parse(EXAMPLE)
    text = to_text(query)
    assert "SEQ(A a, SEQ(B b, C c)+, D d)" in text
    assert parse(text) == query


def test_explain_names_the_engine_and_the_loop() -> None:
    q = kleene.compile(EXAMPLE)
    assert q.config.engine == "nfa"
    shown = q.explain()
    assert "SEQ(...)+" in shown.splitlines()[0]
    assert "take -> [3]" in shown  # c[i] loops back to b[i]


SYNTAX_ERRORS = [
    ("PATTERN SEQ(A a, SEQ(B+ b[], C c)+)", 1, 22),
    ("PATTERN SEQ(A a,\n  SEQ(B b, ~(C c))+)", 2, 12),
    ("PATTERN SEQ(A a, SEQ(B b, SEQ(C c, D d)+)+)", 1, 27),
    ("PATTERN SEQ(A a, SEQ(B b, C c))", 1, 31),
]


@pytest.mark.parametrize(("text", "line", "column"), SYNTAX_ERRORS)
def test_syntax_errors(text: str, line: int, column: int) -> None:
    with pytest.raises(QuerySyntaxError) as error:
        parse(text)
    assert (error.value.line, error.value.column) == (line, column)


VALIDATION_ERRORS = [
    ("AND c[i].x > b[i-1].x", 14, "b[i-1].x cannot be used in a condition checked at c[i]"),
    ("AND c[i].x > avg(b[..i-1].x)", 14, "may refer only to c and the members after it"),
    ("AND c[i].x > d.x", 14, "may only use variables before SEQ(b, c)+"),
    ("AND c[i].x > b.LEN", 14, "b.LEN is known only when SEQ(b, c)+ has ended"),
    ("AND b[i].x > e[i].x", 14, "one Kleene variable only (or one SEQ(...)+ group)"),
    ("AND c.x > 1", 5, "c is a Kleene variable"),
]


@pytest.mark.parametrize(("where", "column", "message"), VALIDATION_ERRORS)
def test_validation_errors(where: str, column: int, message: str) -> None:
    text = f"PATTERN SEQ(A a, SEQ(B b, C c)+, D d, E+ e[])\nWHERE skip_till_any_match\n{where}"
    with pytest.raises(QueryError) as error:
        kleene.compile(text)
    assert (error.value.line, error.value.column) == (3, column)
    assert message in str(error.value)


@pytest.mark.parametrize(
    "strategy", ["strict_contiguity", "partition_contiguity", "skip_till_next_match"]
)
def test_other_strategies_are_refused(strategy: str) -> None:
    with pytest.raises(QueryError, match="skip_till_any_match only") as error:
        kleene.compile(EXAMPLE, strategy=strategy)
    assert (error.value.line, error.value.column) == (1, 22)


@pytest.mark.parametrize("engine", ["postpone", "postpone-late", "backtrack", "vector"])
def test_other_engines_are_refused(engine: str) -> None:
    with pytest.raises(QueryError, match="'nfa' or 'merge' only"):
        kleene.compile(EXAMPLE, engine=engine)
    with pytest.raises(QueryError, match="without collapsed output"):
        kleene.compile(EXAMPLE, output="collapsed")


def test_the_diagram_draws_the_loop(tmp_path: Any) -> None:
    from kleene.io.automaton import Edge, diagram_from_query, draw_png

    diagram = diagram_from_query(kleene.compile(EXAMPLE))
    moves = {(e.kind, e.source, e.target) for e in diagram.edges if e.kind != "ignore"}
    assert moves == {
        ("begin", 0, 1),
        ("begin", 1, 2),
        ("begin", 2, 3),
        ("take", 3, 4),
        ("take", 4, 3),  # c[i] -> b[i]: the next iteration
        ("proceed", 3, 5),
        ("begin", 5, 6),
    }
    assert Edge("proceed", 4, 5, "") not in diagram.edges
    assert draw_png(diagram, tmp_path / "loop.png").stat().st_size > 0
