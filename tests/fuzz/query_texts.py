"""Hypothesis strategies for query texts that may or may not be valid: texts built from
the grammar (kleene/lang/grammar.lark) with odd literals, spellings and line breaks, and
byte and token mutations of the example queries and of the random valid queries of
tests/property/queries.py."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from tests.property.queries import queries as valid_queries

EXAMPLES = tuple(
    path.read_text(encoding="utf-8")
    for path in sorted((Path(__file__).parents[2] / "examples").glob("*.sase"))
)
TYPES = ("A", "B", "C")
VARS = ("a", "b", "c", "d")
ATTRS = ("x", "y")
BLANKS = (" ", " ", " ", "\n", "\r\n", "\r", "\t", "\x0c", "\x0b", "\u2028", "\x85")
BLANKS += (" /* note */ ", " // note\n")
# Valid spellings several times over, so that most texts get past the odd ones
NUMBERS = ("0", "1", "2", "3", "-1", "1.5", ".5", "2e0") * 3 + ("1e999", "1e-999", "9" * 120)
STRATEGY_WORDS = (
    "skip_till_any_match",
    "skip-till-next-match",
    "STRICT_CONTIGUITY",
    "partition-contiguity",
) * 3 + ("skip_till_nxt_match", "skip-til-any-match", "contiguity")
OPERATORS = ("+", "-", "*", "/", "%", "=", "==", "!=", "<>", "<", "<=", ">", ">=")
LOGICAL = ("and", "AND", "&&", "or", "OR")
UNITS = ("", "", " seconds", " min", " hours", " d", " secnds")


@st.composite
def _blank(draw: Any) -> str:
    return str(draw(st.sampled_from(BLANKS)))


@st.composite
def _pattern(draw: Any) -> list[tuple[str, str, str]]:
    """(type, var, shape) with shape "single", "kleene" or "negated"."""
    n = draw(st.integers(1, 3))
    comps = []
    for k in range(n):
        var = draw(st.sampled_from(VARS)) if draw(st.integers(0, 9)) == 0 else VARS[k]
        shape = draw(st.sampled_from(("single", "single", "kleene", "negated")))
        comps.append((draw(st.sampled_from(TYPES)), var, shape))
    return comps


def _component(comp: tuple[str, str, str]) -> str:
    type_, var, shape = comp
    return {
        "single": f"{type_} {var}",
        "kleene": f"{type_}+ {var}[]",
        "negated": f"!({type_} {var})",
    }[shape]


@st.composite
def _reference(draw: Any, comps: list[tuple[str, str, str]]) -> str:
    var = draw(st.sampled_from([c[1] for c in comps] * 4 + ["z"]))
    attr = draw(st.sampled_from(ATTRS))
    forms = (
        f"{var}.{attr}",
        f"{var}[i].{attr}",
        f"{var}[i-1].{attr}",
        f"{var}[1].{attr}",
        f"{var}[{var}.LEN].{attr}",
        f"{var}.LEN",
        f"avg({var}[].{attr})",
        f"max({var}[..i-1].{attr})",
        f"min({var}[].{attr})",
        f"count({var}[])",
        f"sum({var}[1..i-1].{attr})",
    )
    if draw(st.integers(0, 19)) == 0:
        forms = (f"agv({var}[].{attr})", f"{var}[2].{attr}", f"{var}[i-2].{attr}")
    return str(draw(st.sampled_from(forms)))


def _expressions(comps: list[tuple[str, str, str]]) -> st.SearchStrategy[str]:
    leaves = st.one_of(
        _reference(comps),
        _reference(comps),
        st.sampled_from(NUMBERS),
        st.sampled_from(("'IBM'", '"x"', "true", "false")),
    )

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.one_of(
            st.tuples(inner, st.sampled_from(OPERATORS), inner).map(" ".join),
            st.tuples(inner, st.sampled_from(LOGICAL), inner).map(" ".join),
            inner.map(lambda e: f"not {e}"),
            inner.map(lambda e: f"-({e})"),
            inner.map(lambda e: f"({e})"),
        )

    return st.recursive(leaves, extend, max_leaves=6)


@st.composite
def _condition(draw: Any, comps: list[tuple[str, str, str]]) -> str:
    """Mostly comparisons (which can be valid), sometimes any expression."""
    expr = _expressions(comps)
    shape = draw(st.integers(0, 3))
    if shape == 0:
        return str(draw(expr))
    if shape == 1:
        left, right = draw(_reference(comps)), draw(st.sampled_from(NUMBERS))
    else:
        left, right = draw(expr), draw(expr)
    return f"{left} {draw(st.sampled_from(OPERATORS[5:]))} {right}"


@st.composite
def grammar_queries(draw: Any) -> str:
    """A query text built clause by clause from the grammar."""
    comps = draw(_pattern())
    sep = draw(_blank())
    text = "PATTERN SEQ(" + ", ".join(map(_component, comps)) + ")"
    conds = draw(st.lists(_condition(comps), max_size=3))
    if draw(st.booleans()):
        conds.append("[x]")
    form = draw(st.integers(0, 3))
    strategy = draw(st.sampled_from(STRATEGY_WORDS))
    joined = " and ".join(conds)
    if form == 1:
        variables = ", ".join(v if s != "kleene" else f"{v}[]" for _, v, s in comps)
        text += f"{sep}WHERE {strategy}({variables}) {{ {joined} }}"
    elif form == 2:
        text += f"{sep}WHERE {strategy}" + (f" AND {joined}" if conds else "")
    elif conds:
        text += f"{sep}WHERE {joined}"
    if draw(st.booleans()):
        amount = draw(st.sampled_from(("5", "10", "0", "-1", "1.5", "1e999")))
        text += f"{draw(_blank())}WITHIN {amount}{draw(st.sampled_from(UNITS))}"
    if draw(st.booleans()):
        items = draw(st.lists(_expressions(comps), min_size=1, max_size=2))
        named = [i + (f" AS r{k}" if draw(st.booleans()) else "") for k, i in enumerate(items)]
        text += f"{draw(_blank())}RETURN " + ", ".join(named)
    if draw(st.integers(0, 3)) == 0:
        text += " OUTPUT " + draw(
            st.sampled_from(("ALL", "NON-OVERLAP", "COLLAPSED", "non_ovrlap"))
        )
    return text


_TOKEN = re.compile(r"\w+|[^\w\s]|\s+")
VOCABULARY = (
    "(",
    ")",
    "((((",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    "..",
    "+",
    "-",
    "*",
    "<",
    "=",
    "and",
    "or",
    "not",
    "WHERE",
    "WITHIN",
    "RETURN",
    "PATTERN",
    "SEQ",
    "UNION",
    "DEFINE X AS",
    ";",
    "~",
    "i",
    "LEN",
    "'",
    '"',
    "/*",
    "1e999",
    "9" * 200,
    "\r",
    "\r\n",
    "\x0c",
    "\u2028",
    "\t",
    "skip_till_nxt_match",
    "\x00",
    "é",
)


@st.composite
def mutated_queries(draw: Any) -> str:
    """An example query or a random valid one, with one to three byte or token edits."""
    text = str(draw(st.one_of(st.sampled_from(EXAMPLES), valid_queries())))
    for _ in range(draw(st.integers(1, 3))):
        tokens = _TOKEN.findall(text) or [""]
        k = draw(st.integers(0, len(tokens) - 1))
        edit = draw(st.integers(0, 5))
        if edit == 0:  # delete a token
            del tokens[k]
        elif edit == 1:  # replace a token
            tokens[k] = draw(st.sampled_from(VOCABULARY))
        elif edit == 2:  # insert a token
            tokens.insert(k, draw(st.sampled_from(VOCABULARY)))
        elif edit == 3:  # duplicate a run of tokens
            end = draw(st.integers(k, min(len(tokens), k + 6)))
            tokens[k:k] = tokens[k:end]
        text = "".join(tokens)
        if edit == 4:  # one byte, anywhere
            at = draw(st.integers(0, len(text)))
            text = text[:at] + chr(draw(st.integers(0, 0x2FFF))) + text[at:]
        elif edit == 5 and text:  # drop one character
            at = draw(st.integers(0, len(text) - 1))
            text = text[:at] + text[at + 1 :]
    return text


@st.composite
def respelled_queries(draw: Any) -> str:
    """A random valid query with the same meaning in another spelling: every blank
    replaced by other blanks, line breaks or comments, keywords in another case."""
    text = str(draw(valid_queries()))
    parts = re.split(r"(\s+)", text)
    out = []
    for part in parts:
        if part.isspace():
            out.append(draw(_blank()))
        elif part.upper() in ("PATTERN", "SEQ", "WHERE", "WITHIN", "RETURN", "AS", "AND"):
            out.append(draw(st.sampled_from((part.lower(), part.upper(), part.capitalize()))))
        else:
            out.append(part.replace("_", "-") if "_till_" in part else part)
    return "".join(out)
