"""``kleene explain``: the text of ``Query.explain()`` and a picture of the automaton."""

from __future__ import annotations

from pathlib import Path

import pytest

import kleene
from kleene.cli import CliError, picture_paths
from kleene.io.automaton import Diagram, diagram_from_query, diagram_from_states, draw_png
from kleene.lang import ast, parse
from tests.cli.inprocess import run_main
from tests.cli.support import EXAMPLES
from tests.cli.support import kleene as run_kleene

RISING = EXAMPLES / "stock_rising.sase"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_explain_prints_the_compiled_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    done = run_main(monkeypatch, "explain", RISING)
    assert done.code == 0, done.stderr
    assert done.stdout.decode() == kleene.compile(RISING.read_text()).explain() + "\n"


def test_explain_applies_the_strategy_override(monkeypatch: pytest.MonkeyPatch) -> None:
    done = run_main(
        monkeypatch, "explain", RISING, "--strategy", "skip-till-any-match", "--non-overlap"
    )
    assert done.code == 0, done.stderr
    query = kleene.compile(RISING.read_text(), strategy="skip_till_any_match", output="non_overlap")
    assert done.stdout.decode() == query.explain() + "\n"
    assert done.stdout.decode() != kleene.compile(RISING.read_text()).explain() + "\n"


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


# --- several files, programs, and what the picture holds -----------------------------

RISES = EXAMPLES / "stock_rises.sase"
NEGATED = """
PATTERN SEQ(~(Alert x), Stock a, ~(Stock n), Stock+ b[], Stock c, ~SEQ(Halt h, Resume r))
WHERE skip_till_next_match AND [symbol] AND a.volume < 100 AND n.price > a.price
  AND b[i].price > b[i-1].price AND c.price < a.price AND h.reason = 'audit'
WITHIN 60 seconds
RETURN a.price AS opening
"""


def test_explain_of_several_files_prints_each_under_its_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    done = run_main(monkeypatch, "explain", RISING, RISES)
    assert done.code == 0, done.stderr
    expected = (
        f"# {RISING}\n{kleene.compile(RISING.read_text()).explain()}\n\n"
        f"# {RISES}\n{kleene.compile_program(RISES.read_text()).explain()}\n"
    )
    assert done.stdout.decode() == expected


def test_explain_png_of_programs_and_several_files(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "pictures"
    done = run_main(monkeypatch, "explain", RISES, RISING, "--png", folder)
    assert done.code == 0, done.stderr
    names = ["stock_rises.Rise", "stock_rises.returned", "stock_rises.returned-2", "stock_rising"]
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{n}.png" for n in names)
    for name in names:
        assert (folder / f"{name}.png").read_bytes().startswith(PNG_MAGIC)
        assert f"automaton drawn to {folder / name}.png" in done.stdout.decode()
    single = tmp_path / "one.png"
    done = run_main(monkeypatch, "explain", RISES, "--png", single)
    assert done.code == 0, done.stderr
    assert not single.exists()
    assert sorted(p.name for p in tmp_path.glob("one.*.png")) == [
        "one.Rise.png",
        "one.returned-2.png",
        "one.returned.png",
    ]


def test_picture_paths() -> None:
    one = [("q", None)]
    assert picture_paths("a/q.png", one) == [Path("a/q.png")]
    assert picture_paths("out", one) == [Path("out/q.png")]
    program = [("p", "Rise"), ("p", "returned")]
    assert picture_paths("x.PNG", program) == [Path("x.Rise.png"), Path("x.returned.png")]
    files = [("p", None), ("q", "Rise")]
    assert picture_paths("x.png", files) == [Path("x.p.png"), Path("x.q.Rise.png")]
    assert picture_paths("d", files) == [Path("d/p.png"), Path("d/q.Rise.png")]
    with pytest.raises(CliError, match=r"two automata would be drawn to d/p\.png"):
        picture_paths("d", [("p", None), ("p", None)])


def test_explain_png_refuses_a_file_that_is_not_a_folder_or_png(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("keep")
    done = run_main(monkeypatch, "explain", RISING, "--png", target)
    assert done.code == 2 and "neither a .png file name nor a folder" in done.stderr
    assert target.read_text() == "keep"


def test_diagram_shows_types_negations_window_key_and_strategy() -> None:
    diagram = diagram_from_query(kleene.compile(NEGATED), title="neg.sase")
    assert diagram.states == ("a", "b[1]", "b[i]", "c", "F")
    assert diagram.types == ("Stock", "Stock", "Stock", "Stock", "")
    where = {m.label.split(":")[0]: diagram.states[m.state] for m in diagram.negations}
    # ~(Alert x) before a: checked on a's begin edge; ~(Stock n) between a and b: on the
    # begin edge of b[1]; the trailing ~SEQ(Halt h, Resume r): at F, when the window closes
    assert where == {
        "no Alert x": "a",
        "no Stock n": "b[1]",
        "no Halt h": "F",
        "then no Resume r": "F",
    }
    labels = {m.label.split(":")[0]: m.label for m in diagram.negations}
    assert "n.price > a.price" in labels["no Stock n"]
    assert "h.reason = 'audit'" in labels["no Halt h"]
    assert diagram.notes == (
        "strategy: skip_till_next_match",
        "window: 60 seconds",
        "partition key: [symbol] (runs indexed by key)",
        "output: all",
        "return: opening",
    )
    assert diagram.title == "neg.sase: NFA^b (skip-till-next-match)"


def test_diagram_from_the_ast_places_negations_alike() -> None:
    from_plan = diagram_from_query(kleene.compile(NEGATED))
    from_ast = diagram_from_query(parse(NEGATED))
    assert from_ast.types == from_plan.types
    assert [(m.label.split(":")[0], m.state) for m in from_ast.negations] == [
        (m.label.split(":")[0], m.state) for m in from_plan.negations
    ]


def test_draw_png_with_every_part(tmp_path: Path) -> None:
    path = draw_png(diagram_from_query(kleene.compile(NEGATED)), tmp_path / "neg.png")
    assert path.read_bytes().startswith(PNG_MAGIC)
    assert [p.name for p in tmp_path.iterdir()] == ["neg.png"]  # no temporary file left
