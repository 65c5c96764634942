"""``to_text`` prints canonical text that parses back to an equal AST."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.lang import ast, expr_to_text, parse, parse_program, to_text
from kleene.lang.ast import (
    AggFunc,
    AggRange,
    Aggregate,
    AttrRef,
    Binary,
    BinOp,
    IndexKind,
    LenRef,
    Literal,
    Unary,
    UnOp,
)
from tests.lang.test_parser import (
    FIGURE_1_QUERY_1,
    FIGURE_1_QUERY_2,
    FIGURE_1_QUERY_3,
    SASE_FLAT,
    TABLE_1_Q1,
    TABLE_1_Q6_OPTION_2,
)


@pytest.mark.parametrize(
    ("node", "text"),
    [
        (AttrRef("a", "symbol"), "a.symbol"),
        (Aggregate(AggFunc.AVG, "b", AggRange.ALL, "period"), "avg(b[].period)"),
        (Aggregate(AggFunc.COUNT, "b", AggRange.ALL, None), "count(b[])"),
        (Aggregate(AggFunc.MAX, "b", AggRange.BEFORE_CURRENT, "val"), "max(b[..i-1].val)"),
        (AttrRef("b", "x", IndexKind.FIRST), "b[1].x"),
        (AttrRef("b", "x", IndexKind.CURRENT), "b[i].x"),
        (AttrRef("b", "x", IndexKind.PREVIOUS), "b[i-1].x"),
        (AttrRef("b", "x", IndexKind.LAST), "b[b.LEN].x"),
        (LenRef("b"), "b.LEN"),
        (Literal("it's"), "'it\\'s'"),
        (Literal(True), "true"),
        (Literal(-2.5), "-2.5"),
        (Unary(UnOp.NEG, Literal(5)), "-(5)"),
        (Binary(BinOp.EQ, AttrRef("a", "x"), Literal(1)), "a.x = 1"),
        (Binary(BinOp.NE, AttrRef("a", "x"), Literal(1)), "a.x != 1"),
        (
            Binary(BinOp.MUL, Binary(BinOp.ADD, AttrRef("a", "x"), Literal(1)), Literal(2)),
            "(a.x + 1) * 2",
        ),
        (
            Binary(BinOp.SUB, AttrRef("a", "x"), Binary(BinOp.SUB, Literal(1), Literal(2))),
            "a.x - (1 - 2)",
        ),
        (
            Unary(UnOp.NOT, Binary(BinOp.OR, AttrRef("a", "p"), AttrRef("a", "q"))),
            "not (a.p or a.q)",
        ),
        (
            Binary(BinOp.LT, Binary(BinOp.LT, AttrRef("a", "x"), Literal(1)), Literal(True)),
            "(a.x < 1) < true",
        ),
    ],
)
def test_expression_text(node: ast.Expr, text: str) -> None:
    assert expr_to_text(node) == text
    assert to_text(node) == text


def test_canonical_query_text() -> None:
    assert to_text(parse(FIGURE_1_QUERY_3)) == (
        "PATTERN SEQ(Stock+ a[], Stock b)\n"
        "WHERE skip_till_next_match(a[], b) {\n"
        "    [symbol]\n"
        "    and a[1].volume > 1000\n"
        "    and a[i].price > avg(a[..i-1].price)\n"
        "    and b.volume < 0.8 * a[a.LEN].volume\n"
        "}\n"
        "WITHIN 1 hour"
    )
    flat = "PATTERN Stock a where [s] && (a.x > 1 or a.y > 2) within 2 days output non_overlap"
    assert to_text(parse(flat)) == (
        "PATTERN SEQ(Stock a)\n"
        "WHERE [s]\n"
        "  and (a.x > 1 or a.y > 2)\n"
        "WITHIN 2 days\n"
        "OUTPUT NON-OVERLAP"
    )
    assert to_text(parse("PATTERN SEQ(A a, !B b) WHERE skip-till-any-match")) == (
        "PATTERN SEQ(A a, ~(B b))\nWHERE skip_till_any_match { }"
    )


@pytest.mark.parametrize(
    "text",
    [
        FIGURE_1_QUERY_1,
        FIGURE_1_QUERY_2,
        FIGURE_1_QUERY_3,
        SASE_FLAT,
        TABLE_1_Q1,
        TABLE_1_Q6_OPTION_2,
        "PATTERN A a WHERE (a.x > 1 and a.y > 1) RETURN a.x AS x, a.x > 1 and a.y OUTPUT ALL",
        "PATTERN A a WHERE a.x > 1 or a.y < 2",
        "PATTERN A a WHERE strict_contiguity(a) { (a.p or a.q) and not a.r }",
    ],
)
def test_printed_examples_parse_back(text: str) -> None:
    query = parse(text)
    printed = to_text(query)
    assert parse(printed) == query
    assert to_text(parse(printed)) == printed


def test_unprintable_nodes_are_refused() -> None:
    with pytest.raises(ValueError, match="LEN"):
        to_text(AttrRef("a", "len"))
    with pytest.raises(ValueError, match="literal"):
        to_text(Literal(float("nan")))
    with pytest.raises(ValueError, match="needs a strategy"):
        to_text(ast.Query(pattern=ast.Seq((ast.Component("A", "a"),)), strategy_vars=("a",)))


# --- round trip over random ASTs ---------------------------------------------------

# Names include words that are keywords elsewhere in the grammar: the contextual lexer
# must read them as names where only a name fits.
VARS = st.sampled_from(["a", "b", "c", "d7", "_x", "len", "seq", "where", "as", "Stock"])
TYPES = st.sampled_from(["Stock", "A", "count", "where", "SEQ", "pattern", "Len"])
ATTRS = st.sampled_from(
    ["price", "volume", "type", "id", "timestamp", "from", "count", "and", "i", "LEN_x", "within"]
)
ALIASES = st.sampled_from(["v", "total", "count", "max", "within", "as", "and", "LEN"])

numbers = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
)
literals = st.builds(
    Literal,
    st.one_of(
        numbers, st.booleans(), st.text(st.characters(exclude_categories=["Cs"]), max_size=6)
    ),
)
attr_refs = st.builds(AttrRef, VARS, ATTRS, st.one_of(st.none(), st.sampled_from(IndexKind)))
aggregates = st.one_of(
    st.builds(Aggregate, st.sampled_from(AggFunc), VARS, st.sampled_from(AggRange), ATTRS),
    st.builds(Aggregate, st.just(AggFunc.COUNT), VARS, st.just(AggRange.ALL), st.none()),
)
leaves = st.one_of(literals, attr_refs, st.builds(LenRef, VARS), aggregates)
exprs = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(Binary, st.sampled_from(BinOp), inner, inner),
        st.builds(Unary, st.sampled_from(UnOp), inner),
    ),
    max_leaves=10,
)
equivalences = st.builds(ast.Equivalence, st.lists(ATTRS, min_size=1, max_size=3).map(tuple))
components = st.builds(
    lambda event_type, var, kind: ast.Component(
        event_type, var, kleene=kind == "kleene", negated=kind == "negated"
    ),
    TYPES,
    VARS,
    st.sampled_from(["single", "kleene", "negated"]),
)


singles = st.builds(ast.Component, TYPES, VARS)
# a nested sequence: ~SEQ(...) or SEQ(...)+ (SIGMOD 2014, section 2.1)
nested = st.tuples(st.booleans(), st.lists(singles, min_size=1, max_size=3))


def _flatten(parts: list[ast.Component | tuple[bool, list[ast.Component]]]) -> ast.Seq:
    out: list[ast.Component] = []
    for part in parts:
        if isinstance(part, ast.Component):
            out.append(part)
            continue
        negated, members = part
        group = len(out)
        out += [ast.Component(m.event_type, m.var, not negated, negated, group) for m in members]
    return ast.Seq(tuple(out))


@st.composite
def queries(draw: st.DrawFn) -> ast.Query:
    pattern = _flatten(draw(st.lists(st.one_of(components, nested), min_size=1, max_size=4)))
    strategy = draw(st.one_of(st.none(), st.sampled_from(ast.Strategy)))
    strategy_vars = None
    if strategy is not None:
        strategy_vars = draw(
            st.one_of(st.none(), st.lists(VARS, min_size=1, max_size=3).map(tuple))
        )
    window = draw(
        st.one_of(
            st.none(),
            st.builds(ast.Window, numbers, st.one_of(st.none(), st.sampled_from(ast.TimeUnit))),
        )
    )
    return ast.Query(
        pattern=pattern,
        strategy=strategy,
        strategy_vars=strategy_vars,
        where=tuple(draw(st.lists(st.one_of(exprs, equivalences), max_size=3))),
        within=window,
        returns=tuple(
            draw(
                st.lists(
                    st.builds(ast.ReturnItem, exprs, st.one_of(st.none(), ALIASES)), max_size=3
                )
            )
        ),
        output=draw(st.one_of(st.none(), st.sampled_from(ast.OutputFormat))),
    )


@settings(max_examples=200)
@given(queries())
def test_round_trip_of_random_queries(query: ast.Query) -> None:
    text = to_text(query)
    parsed = parse(text)
    assert parsed == query
    # repr tells 1, 1.0 and True apart, which dataclass equality does not.
    assert repr(parsed) == repr(query)
    assert to_text(parsed) == text


NAMES = st.sampled_from(["Rise", "Fall", "Spike"])


@st.composite
def programs(draw: st.DrawFn) -> ast.Program:
    unions = st.builds(lambda qs: ast.Union(tuple(qs)), st.lists(queries(), min_size=1, max_size=2))
    names = draw(st.lists(NAMES, unique=True, max_size=2))
    definitions = tuple(ast.Definition(n, draw(unions)) for n in names)
    return ast.Program(definitions, draw(unions))


@settings(max_examples=50)
@given(programs())
def test_round_trip_of_random_programs(program: ast.Program) -> None:
    text = to_text(program)
    parsed = parse_program(text)
    assert parsed == program
    assert to_text(parsed) == text
