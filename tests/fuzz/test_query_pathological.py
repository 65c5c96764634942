"""Each pathological query of issue 9 raises QueryError at a spot inside the text, from
``kleene.compile``, ``kleene.compile_program`` and the CLI (``kleene explain`` and
``kleene run`` print it and exit 2); never another exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kleene
from kleene import cli
from kleene.errors import QueryError
from kleene.lang._limits import MAX_DEPTH, MAX_NUMBER_LENGTH, MAX_STRING_LENGTH
from tests.fuzz.test_query_fuzz import assert_inside

P = "PATTERN SEQ(A a, B b) WHERE "

# (name, text, a fragment of the message); the error points inside the text
PATHOLOGICAL = [
    ("infinite float", P + "a.x < 1e999", "must be finite"),
    ("infinite window", "PATTERN SEQ(A a, B b) WITHIN 1e999", "must be finite"),
    ("nested parentheses", P + "b.x > " + "(" * 1000 + "a.x" + ")" * 1000, "levels deep"),
    ("nested not", P + "not " * 500 + "a.x > 1", "levels deep"),
    ("unary minus chain", P + "b.x > " + "-(" * 300 + "a.x" + ")" * 300, "levels deep"),
    ("long sum", P + "b.x > " + " + ".join(["a.x"] * 500), "levels deep"),
    ("hundreds of or terms", P + " or ".join(f"b.x = {k}" for k in range(300)), "terms"),
    ("or chain in RETURN", "PATTERN A a RETURN " + " or ".join(["a.x > 1"] * 300), "terms"),
    ("5,000-digit integer", P + "a.x < " + "9" * 5000, "at most"),
    ("long string", P + "a.s = '" + "x" * (MAX_STRING_LENGTH + 1) + "'", "at most"),
    ("number as a condition", P + "skip_till_next_match(a, b) { a.v }", "must be a condition"),
    ("arithmetic as a condition", P + "a.x + 1", "must be a condition"),
    ("ordering conditions", P + "(a.x > 1) < (b.x > 1)", "orders numbers, strings or"),
    ("condition against a number", P + "(a.x > 1) = 1", "compares values of one kind"),
    ("or of a value", P + "a.ok or b.x > 1", "must be a condition"),
    (
        "misspelled strategy",
        P + "skip_till_nxt_match(a, b) { a.x < b.x }",
        "did you mean skip_till_next_match?",
    ),
    ("misspelled hyphenated strategy", P + "skip-till-any-mtch", "skip_till_any_match"),
    ("misspelled keyword", "PATTERN SEQ(A a, B b) WHRE a.x < b.x", "did you mean WHERE?"),
    ("misspelled function", "PATTERN SEQ(A a, B+ b[]) WHERE agv(b[].x) > a.x", "avg"),
    ("misspelled unit", "PATTERN SEQ(A a, B b) WITHIN 5 secnds", "did you mean seconds?"),
    ("not after an operator", P + "a.ok = not b.ok", "parentheses"),
    ("NUL byte", P + "a.x\x00 > 1", "unexpected character"),
    ("unterminated comment", P + "a.x > 1 /* no end", "unterminated comment"),
    ("empty text", "", "unexpected end"),
    ("blank text", " \r\n\u2028\x0c ", "unexpected end"),
]


@pytest.mark.parametrize(("name", "text", "words"), PATHOLOGICAL, ids=[c[0] for c in PATHOLOGICAL])
def test_pathological_query_fails_in_place(name: str, text: str, words: str) -> None:
    for compile_text in (kleene.compile, kleene.compile_program):
        with pytest.raises(QueryError) as caught:
            compile_text(text)
        assert words in caught.value.message, str(caught.value)
        assert_inside(caught.value, text)


@pytest.mark.parametrize("name", ["nested parentheses", "hundreds of or terms", "infinite float"])
def test_cli_prints_the_query_error_and_exits_2(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = next(t for n, t, _ in PATHOLOGICAL if n == name)
    query = tmp_path / "q.sase"
    query.write_text(text, encoding="utf-8")
    events = tmp_path / "events.jsonl"
    events.write_text(json.dumps({"type": "A", "timestamp": 1, "x": 1}) + "\n")
    out = str(tmp_path / "out.jsonl")
    for argv in (["explain", str(query)], ["run", str(query), "-i", str(events), "-o", out]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"kleene: error: {query}: line 1, column "), err
        assert "^" in err


def test_limits_themselves_compile_and_run_like_the_oracle() -> None:
    """Expressions exactly at the limits compile (the generated code stays within
    Python's parser limits) on every engine and agree with the oracle."""
    from kleene import oracle

    deep = "b.x > " + "(" * (MAX_DEPTH - 1) + "a.x" + ")" * (MAX_DEPTH - 1)
    # n terms add n - 1 levels, each comparison and the parentheses one more
    wide = "(" + " or ".join(f"b.y = {k}" for k in range(MAX_DEPTH - 1)) + ")"
    nested = "not " * (MAX_DEPTH - 2) + "a.x >= 0"  # an even number: true
    number = "1" * MAX_NUMBER_LENGTH
    events = [
        {"type": t, "timestamp": k, "id": f"e{k}", "x": k % 3, "y": k % 5}
        for k, t in enumerate("ABABBA")
    ]
    for condition in (deep, wide, nested, f"b.x < {number}"):
        text = f"PATTERN SEQ(A a, B b) WHERE skip_till_any_match(a, b) {{ {condition} }}"
        want = {
            tuple(sorted(m.ids.items())) for m in oracle.evaluate(kleene.lang.parse(text), events)
        }
        assert want, condition[:40]
        for engine in ("nfa", "merge", "backtrack", "postpone"):
            found = kleene.compile(text, engine=engine).run(events)
            got = {tuple(sorted((k, tuple(v)) for k, v in m.ids().items())) for m in found}
            assert got == {tuple((k, tuple(v)) for k, v in ids) for ids in want}, engine
