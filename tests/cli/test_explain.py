"""``kleene explain``: the text of ``Query.explain()`` and a picture of the automaton."""

from __future__ import annotations

from pathlib import Path

import pytest

import kleene
from kleene.io.automaton import Diagram, diagram_from_query, diagram_from_states, draw_png
from kleene.lang import ast, parse
from tests.cli.support import EXAMPLES
from tests.cli.support import kleene as run_kleene

RISING = EXAMPLES / "stock_rising.sase"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_explain_prints_the_compiled_plan() -> None:
    done = run_kleene("explain", RISING)
    assert done.returncode == 0, done.stderr
    assert done.stdout == kleene.compile(RISING.read_text()).explain() + "\n"


def test_explain_applies_the_strategy_override() -> None:
    done = run_kleene("explain", RISING, "--strategy", "skip-till-any-match", "--non-overlap")
    assert done.returncode == 0, done.stderr
    query = kleene.compile(RISING.read_text(), strategy="skip_till_any_match", output="non_overlap")
    assert done.stdout == query.explain() + "\n"
    assert done.stdout != kleene.compile(RISING.read_text()).explain() + "\n"


def test_explain_png_draws_the_automaton(tmp_path: Path) -> None:
    picture = tmp_path / "pictures" / "rising.png"
    done = run_kleene("explain", RISING, "--png", picture)
    assert done.returncode == 0, done.stderr
    data = picture.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 5_000


def _kinds(diagram: Diagram) -> list[tuple[str, str, str]]:
    names = diagram.states
    return [(e.kind, names[e.source], names[e.target]) for e in diagram.edges]


def test_diagram_of_the_compiled_plan() -> None:
    diagram = diagram_from_query(kleene.compile(RISING.read_text()))
    assert diagram.states == ("a[1]", "a[i]", "b", "F")
    assert _kinds(diagram) == [
        ("begin", "a[1]", "a[i]"),
        ("take", "a[i]", "a[i]"),
        ("proceed", "a[i]", "b"),
        ("ignore", "a[i]", "a[i]"),
        ("begin", "b", "F"),
        ("ignore", "b", "b"),
    ]
    labels = {(e.kind, diagram.states[e.source]): e.label for e in diagram.edges}
    assert "a[i].price > a[i-1].price" in labels[("take", "a[i]")]
    assert "b.volume < 150" in labels[("begin", "b")]
    assert labels[("ignore", "b")] == "not in partition"


@pytest.mark.parametrize(
    "text",
    [
        "PATTERN SEQ(A a, B+ b[], C c) WHERE skip-till-any-match",
        "PATTERN SEQ(A+ x[], B y, ~(C z), D w) WHERE strict-contiguity",
        "PATTERN SEQ(A a, B b)",
    ],
)
def test_ast_layout_matches_the_plan_layout(text: str) -> None:
    from_plan = diagram_from_query(kleene.compile(text))
    from_ast = diagram_from_query(parse(text))
    assert from_ast.states == from_plan.states
    assert _kinds(from_ast) == _kinds(from_plan)


def test_strict_contiguity_has_no_ignore_edges() -> None:
    diagram = diagram_from_query(parse("PATTERN SEQ(A a, B+ b[]) WHERE strict-contiguity"))
    assert "ignore" not in {e.kind for e in diagram.edges}
    assert diagram.states == ("a", "b[1]", "b[i]", "F")


def test_draw_png_of_a_hand_made_diagram(tmp_path: Path) -> None:
    diagram = diagram_from_states(
        [("x", "single", ("x.v > 1",), ())], ast.Strategy.SKIP_TILL_ANY_MATCH, "one state"
    )
    path = draw_png(diagram, tmp_path / "one.png")
    assert path.read_bytes().startswith(PNG_MAGIC)
