"""Parsing every construct of the query language into the AST."""

from __future__ import annotations

import pytest

from kleene.lang import ast, parse, validate
from kleene.lang.ast import (
    AggFunc,
    AggRange,
    Aggregate,
    AttrRef,
    Binary,
    BinOp,
    Component,
    Equivalence,
    IndexKind,
    LenRef,
    Literal,
    OutputFormat,
    ReturnItem,
    Strategy,
    TimeUnit,
    Unary,
    UnOp,
    Window,
)
from tests.lang.support import locate

A = Component("A", "a")


def where_of(predicates: str, pattern: str = "SEQ(Stock+ a[], Stock b, Stock c)") -> tuple:
    return parse(f"PATTERN {pattern} WHERE {predicates}").where


def expr(text: str, pattern: str = "SEQ(Stock+ a[], Stock b, Stock c)") -> ast.Expr:
    (only,) = where_of(text, pattern)
    return only


def binary(text: str) -> Binary:
    got = expr(text)
    assert isinstance(got, Binary)
    return got


# --- Figure 1 of SIGMOD 2008 and the flat SASE form --------------------------------

FIGURE_1_QUERY_1 = """
PATTERN SEQ(Shelf a, ~(Register b), Exit c)
WHERE skip_till_next_match(a, b, c) {
        a.tag_id = b.tag_id
    and a.tag_id = c.tag_id
    /* equivalently, [tag_id] */ }
WITHIN 12 hours
"""

FIGURE_1_QUERY_2 = """
PATTERN SEQ(Alert a, Shipment+ b[])
WHERE skip_till_any_match(a, b[]) {
        a.type = 'contaminated'
    and b[1].from = a.site
    and b[i].from = b[i-1].to }
WITHIN 3 hours
"""

FIGURE_1_QUERY_3 = """
PATTERN SEQ(Stock+ a[], Stock b)
WHERE skip_till_next_match(a[], b) {
        [symbol]
    and a[1].volume > 1000
    and a[i].price > avg(a[..i-1].price)
    and b.volume < 0.8*a[a.LEN].volume }
WITHIN 1 hour
"""

SASE_FLAT = (
    "PATTERN SEQ(Stock+ a[], Stock b)\n"
    "WHERE partition-contiguity AND [symbol] AND a[1].price % 500 = 0\n"
    "  AND a[i].price > a[i-1].price AND b.volume < 150\n"
    "WITHIN 500"
)

# SIGMOD 2014, Table 1 (Hadoop monitoring), written in this syntax.
TABLE_1_Q1 = """
Pattern seq(JobStart a, Mapper+ b[], JobEnd c)
Where a.job_id = b[i].job_id ∧ a.job_id = c.job_id
Within 1 day
Return avg(b[].period), max(b[].period)
"""

TABLE_1_Q6_OPTION_1 = """
Pattern seq(ReducerStart a, LoadStd+ b[], ReducerEnd c)
Where [task_id] ∧ b[i].val >= b[i-1].val
Within 10 minutes
Return a.task_id
"""

TABLE_1_Q6_OPTION_2 = """
Pattern seq(ReducerStart a, LoadStd+ b[], ReducerEnd c)
Where [task_id] ∧ b[i].val >= max(b[1..i-1].val)
Within 10 minutes
Return a.task_id
"""


def test_figure_1_query_1() -> None:
    q = parse(FIGURE_1_QUERY_1)
    assert q.pattern.components == (
        Component("Shelf", "a"),
        Component("Register", "b", negated=True),
        Component("Exit", "c"),
    )
    assert q.strategy is Strategy.SKIP_TILL_NEXT_MATCH
    assert q.strategy_vars == ("a", "b", "c")
    assert q.where == (
        Binary(BinOp.EQ, AttrRef("a", "tag_id"), AttrRef("b", "tag_id")),
        Binary(BinOp.EQ, AttrRef("a", "tag_id"), AttrRef("c", "tag_id")),
    )
    assert q.within == Window(12, TimeUnit.HOURS)
    assert q.returns == () and q.output is None
    validate(q, FIGURE_1_QUERY_1)


def test_figure_1_query_2() -> None:
    q = parse(FIGURE_1_QUERY_2)
    assert q.pattern.components == (
        Component("Alert", "a"),
        Component("Shipment", "b", kleene=True),
    )
    assert q.strategy is Strategy.SKIP_TILL_ANY_MATCH
    assert q.strategy_vars == ("a", "b")
    assert q.where == (
        Binary(BinOp.EQ, AttrRef("a", "type"), Literal("contaminated")),
        Binary(BinOp.EQ, AttrRef("b", "from", IndexKind.FIRST), AttrRef("a", "site")),
        Binary(
            BinOp.EQ,
            AttrRef("b", "from", IndexKind.CURRENT),
            AttrRef("b", "to", IndexKind.PREVIOUS),
        ),
    )
    assert q.within == Window(3, TimeUnit.HOURS)
    validate(q, FIGURE_1_QUERY_2)


def test_figure_1_query_3() -> None:
    q = parse(FIGURE_1_QUERY_3)
    assert q.strategy_vars == ("a", "b")
    assert q.where == (
        Equivalence(("symbol",)),
        Binary(BinOp.GT, AttrRef("a", "volume", IndexKind.FIRST), Literal(1000)),
        Binary(
            BinOp.GT,
            AttrRef("a", "price", IndexKind.CURRENT),
            Aggregate(AggFunc.AVG, "a", AggRange.BEFORE_CURRENT, "price"),
        ),
        Binary(
            BinOp.LT,
            AttrRef("b", "volume"),
            Binary(BinOp.MUL, Literal(0.8), AttrRef("a", "volume", IndexKind.LAST)),
        ),
    )
    assert q.within == Window(1, TimeUnit.HOURS)
    validate(q, FIGURE_1_QUERY_3)


def test_flat_sase_form() -> None:
    q = parse(SASE_FLAT)
    assert q.strategy is Strategy.PARTITION_CONTIGUITY
    assert q.strategy_vars is None
    assert q.where == (
        Equivalence(("symbol",)),
        Binary(
            BinOp.EQ,
            Binary(BinOp.MOD, AttrRef("a", "price", IndexKind.FIRST), Literal(500)),
            Literal(0),
        ),
        Binary(
            BinOp.GT,
            AttrRef("a", "price", IndexKind.CURRENT),
            AttrRef("a", "price", IndexKind.PREVIOUS),
        ),
        Binary(BinOp.LT, AttrRef("b", "volume"), Literal(150)),
    )
    assert q.within == Window(500)
    validate(q, SASE_FLAT)


def test_table_1_query_1() -> None:
    q = parse(TABLE_1_Q1)
    assert [c.var for c in q.pattern.positive] == ["a", "b", "c"]
    assert q.pattern.components[1] == Component("Mapper", "b", kleene=True)
    assert q.where == (
        Binary(BinOp.EQ, AttrRef("a", "job_id"), AttrRef("b", "job_id", IndexKind.CURRENT)),
        Binary(BinOp.EQ, AttrRef("a", "job_id"), AttrRef("c", "job_id")),
    )
    assert q.within == Window(1, TimeUnit.DAYS)
    assert q.returns == (
        ReturnItem(Aggregate(AggFunc.AVG, "b", AggRange.ALL, "period")),
        ReturnItem(Aggregate(AggFunc.MAX, "b", AggRange.ALL, "period")),
    )
    validate(q, TABLE_1_Q1)


@pytest.mark.parametrize(
    ("text", "iterator"),
    [
        (TABLE_1_Q6_OPTION_1, AttrRef("b", "val", IndexKind.PREVIOUS)),
        (TABLE_1_Q6_OPTION_2, Aggregate(AggFunc.MAX, "b", AggRange.BEFORE_CURRENT, "val")),
    ],
)
def test_table_1_query_6(text: str, iterator: ast.Expr) -> None:
    q = parse(text)
    assert q.where == (
        Equivalence(("task_id",)),
        Binary(BinOp.GE, AttrRef("b", "val", IndexKind.CURRENT), iterator),
    )
    assert q.within == Window(10, TimeUnit.MINUTES)
    assert q.returns == (ReturnItem(AttrRef("a", "task_id")),)
    validate(q, text)


# --- PATTERN -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "component"),
    [
        ("Stock a", Component("Stock", "a")),
        ("Stock+ a[]", Component("Stock", "a", kleene=True)),
        ("Stock + a [ ]", Component("Stock", "a", kleene=True)),
        ("~(Stock a)", Component("Stock", "a", negated=True)),
        ("!(Stock a)", Component("Stock", "a", negated=True)),
        ("!Stock a", Component("Stock", "a", negated=True)),
        ("~Stock a", Component("Stock", "a", negated=True)),
    ],
)
def test_components(source: str, component: Component) -> None:
    assert parse(f"PATTERN SEQ(X x, {source})").pattern.components[1] == component
    assert parse(f"PATTERN {source}").pattern.components == (component,)


def test_single_component_without_seq() -> None:
    q = parse("PATTERN Stock a")
    assert q.pattern == ast.Seq((Component("Stock", "a"),))
    assert q.strategy is None and q.where == () and q.within is None


def test_keywords_are_case_insensitive() -> None:
    lower = parse("pattern seq(A a, B+ b[]) where skip_till_any_match { a.x > 1 } within 2 hours")
    upper = parse("PATTERN SEQ(A a, B+ b[]) WHERE SKIP_TILL_ANY_MATCH { a.x > 1 } WITHIN 2 HOURS")
    mixed = parse("Pattern Seq(A a, B+ b[]) Where Skip-Till-Any-Match { a.x > 1 } Within 2 Hours")
    assert lower == upper == mixed


def test_keywords_are_ordinary_names_where_no_keyword_fits() -> None:
    q = parse(
        "PATTERN SEQ(Count where, Within+ seq[]) "
        "WHERE where.count = 1 and seq[i].type = where.from and seq[1].len > 0 "
        "RETURN where.and AS max, seq.LEN AS within"
    )
    assert q.pattern.components == (
        Component("Count", "where"),
        Component("Within", "seq", kleene=True),
    )
    assert q.where[0] == Binary(BinOp.EQ, AttrRef("where", "count"), Literal(1))
    assert q.where[2] == Binary(BinOp.GT, AttrRef("seq", "len", IndexKind.FIRST), Literal(0))
    assert q.returns == (
        ReturnItem(AttrRef("where", "and"), "max"),
        ReturnItem(LenRef("seq"), "within"),
    )


# --- WHERE -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "strategy"),
    [
        ("strict_contiguity", Strategy.STRICT_CONTIGUITY),
        ("Strict-Contiguity", Strategy.STRICT_CONTIGUITY),
        ("partition_contiguity", Strategy.PARTITION_CONTIGUITY),
        ("PARTITION-CONTIGUITY", Strategy.PARTITION_CONTIGUITY),
        ("skip_till_next_match", Strategy.SKIP_TILL_NEXT_MATCH),
        ("skip-till-next-match", Strategy.SKIP_TILL_NEXT_MATCH),
        ("skip_till_any_match", Strategy.SKIP_TILL_ANY_MATCH),
        ("SKIP-till_ANY-match", Strategy.SKIP_TILL_ANY_MATCH),
    ],
)
def test_strategy_names(name: str, strategy: Strategy) -> None:
    for where in (
        f"{name}(a, b) {{ a.x = b.x }}",
        f"{name} {{ a.x = b.x }}",
        f"{name} AND a.x = b.x",
    ):
        q = parse(f"PATTERN SEQ(A a, B b) WHERE {where}")
        assert q.strategy is strategy
        assert q.where == (Binary(BinOp.EQ, AttrRef("a", "x"), AttrRef("b", "x")),)


def test_function_form_variants() -> None:
    listed = parse("PATTERN SEQ(A+ a[], B b) WHERE skip_till_next_match(a[], b) { }")
    assert listed.strategy_vars == ("a", "b") and listed.where == ()
    unlisted = parse("PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match {}")
    assert unlisted.strategy is Strategy.SKIP_TILL_ANY_MATCH
    assert unlisted.strategy_vars is None and unlisted.where == ()
    partial = parse("PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match(b) { [x] }")
    assert partial.strategy_vars == ("b",)
    assert partial.where == (Equivalence(("x",)),)


def test_flat_form_variants() -> None:
    alone = parse("PATTERN SEQ(A a, B b) WHERE skip-till-any-match")
    assert alone.strategy is Strategy.SKIP_TILL_ANY_MATCH and alone.where == ()
    no_strategy = parse("PATTERN SEQ(A a, B b) WHERE [symbol] AND a.x > 3")
    assert no_strategy.strategy is None and no_strategy.strategy_vars is None
    assert no_strategy.where == (
        Equivalence(("symbol",)),
        Binary(BinOp.GT, AttrRef("a", "x"), Literal(3)),
    )


def test_conjunction_spellings_split_top_level_conjuncts_in_order() -> None:
    conjuncts = where_of("a[1].x = 1 and b.x = 2 AND c.x = 3 && b.y = 4 ∧ c.y = 5")
    assert [c.right for c in conjuncts] == [Literal(v) for v in (1, 2, 3, 4, 5)]


def test_parenthesised_and_is_one_conjunct() -> None:
    conjuncts = where_of("(b.x = 1 and c.x = 2) and b.y = 3")
    assert conjuncts == (
        Binary(
            BinOp.AND,
            Binary(BinOp.EQ, AttrRef("b", "x"), Literal(1)),
            Binary(BinOp.EQ, AttrRef("c", "x"), Literal(2)),
        ),
        Binary(BinOp.EQ, AttrRef("b", "y"), Literal(3)),
    )


def test_or_binds_looser_than_the_conjunct_split() -> None:
    (only,) = where_of("b.x = 1 and c.x = 2 or b.y = 3")
    assert isinstance(only, Binary) and only.op is BinOp.OR
    assert only.left == Binary(
        BinOp.AND,
        Binary(BinOp.EQ, AttrRef("b", "x"), Literal(1)),
        Binary(BinOp.EQ, AttrRef("c", "x"), Literal(2)),
    )


def test_equivalence_with_several_attributes() -> None:
    assert where_of("[symbol, exchange]") == (Equivalence(("symbol", "exchange")),)


def test_parenthesised_equivalence_is_still_a_top_level_conjunct() -> None:
    assert where_of("([symbol]) and b.x = 1")[0] == Equivalence(("symbol",))


# --- expressions -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "binop"),
    [
        ("=", BinOp.EQ),
        ("==", BinOp.EQ),
        ("!=", BinOp.NE),
        ("<>", BinOp.NE),
        ("<", BinOp.LT),
        ("<=", BinOp.LE),
        (">", BinOp.GT),
        (">=", BinOp.GE),
    ],
)
def test_comparison_operators(op: str, binop: BinOp) -> None:
    assert expr(f"b.x {op} c.x") == Binary(binop, AttrRef("b", "x"), AttrRef("c", "x"))


@pytest.mark.parametrize(
    ("op", "binop"),
    [("+", BinOp.ADD), ("-", BinOp.SUB), ("*", BinOp.MUL), ("/", BinOp.DIV), ("%", BinOp.MOD)],
)
def test_arithmetic_operators(op: str, binop: BinOp) -> None:
    assert expr(f"b.x {op} 2 > 0") == Binary(
        BinOp.GT, Binary(binop, AttrRef("b", "x"), Literal(2)), Literal(0)
    )


def test_precedence_ladder() -> None:
    bx, cx, by = AttrRef("b", "x"), AttrRef("c", "x"), AttrRef("b", "y")
    # or < and < not < comparison < additive < multiplicative < unary minus
    got = expr("not b.x > 1 or b.y + c.x * -b.x = 2 and c.x")
    assert got == Binary(
        BinOp.OR,
        Unary(UnOp.NOT, Binary(BinOp.GT, bx, Literal(1))),
        Binary(
            BinOp.AND,
            Binary(
                BinOp.EQ,
                Binary(BinOp.ADD, by, Binary(BinOp.MUL, cx, Unary(UnOp.NEG, bx))),
                Literal(2),
            ),
            cx,
        ),
    )


def test_arithmetic_is_left_associative_and_parentheses_group() -> None:
    bx, cx = AttrRef("b", "x"), AttrRef("c", "x")
    assert binary("b.x - c.x - 1 > 0").left == Binary(
        BinOp.SUB, Binary(BinOp.SUB, bx, cx), Literal(1)
    )
    assert binary("b.x - (c.x - 1) > 0").left == Binary(
        BinOp.SUB, bx, Binary(BinOp.SUB, cx, Literal(1))
    )
    assert binary("b.x / c.x * 2 > 0").left == Binary(
        BinOp.MUL, Binary(BinOp.DIV, bx, cx), Literal(2)
    )


def test_logical_operators_any_case() -> None:
    bx = Binary(BinOp.GT, AttrRef("b", "x"), Literal(0))
    assert expr("(b.x > 0 OR b.x > 0)") == Binary(BinOp.OR, bx, bx)
    assert expr("NOT b.x > 0") == Unary(UnOp.NOT, bx)
    assert expr("(b.x > 0 And b.x > 0)") == Binary(BinOp.AND, bx, bx)


@pytest.mark.parametrize(
    ("source", "value"),
    [
        ("42", 42),
        ("0.8", 0.8),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("2.5E-2", 0.025),
        ("-7", -7),
        ("-0.25", -0.25),
        ("'IBM'", "IBM"),
        ('"IBM"', "IBM"),
        ("'it\\'s'", "it's"),
        ('"say \\"hi\\""', 'say "hi"'),
        ("'a\\nb\\\\c'", "a\nb\\c"),
        ("true", True),
        ("FALSE", False),
    ],
)
def test_literals(source: str, value: object) -> None:
    got = binary(f"b.x = {source}").right
    assert isinstance(got, Literal)
    assert got.value == value and type(got.value) is type(value)


def test_minus_on_a_parenthesised_number_stays_unary() -> None:
    assert binary("b.x = -(5)").right == Unary(UnOp.NEG, Literal(5))
    assert binary("b.x = --5").right == Unary(UnOp.NEG, Literal(-5))
    assert binary("b.x = 3 - 5").right == Binary(BinOp.SUB, Literal(3), Literal(5))
    assert binary("b.x = 3 -5").right == Binary(BinOp.SUB, Literal(3), Literal(5))


@pytest.mark.parametrize(
    ("source", "node"),
    [
        ("b.price", AttrRef("b", "price")),
        ("a[1].price", AttrRef("a", "price", IndexKind.FIRST)),
        ("a[i].price", AttrRef("a", "price", IndexKind.CURRENT)),
        ("a[ i - 1 ].price", AttrRef("a", "price", IndexKind.PREVIOUS)),
        ("a[a.LEN].price", AttrRef("a", "price", IndexKind.LAST)),
        ("a[a.len].price", AttrRef("a", "price", IndexKind.LAST)),
        ("a[a.Len].price", AttrRef("a", "price", IndexKind.LAST)),
        ("a.LEN", LenRef("a")),
        ("a.len", LenRef("a")),
        ("a.length", AttrRef("a", "length")),
        ("b.timestamp", AttrRef("b", "timestamp")),
        ("avg(a[..i-1].price)", Aggregate(AggFunc.AVG, "a", AggRange.BEFORE_CURRENT, "price")),
        ("MIN(a[..i-1].price)", Aggregate(AggFunc.MIN, "a", AggRange.BEFORE_CURRENT, "price")),
        ("max(a[1..i-1].val)", Aggregate(AggFunc.MAX, "a", AggRange.BEFORE_CURRENT, "val")),
        ("sum(a[ .. i - 1 ].v)", Aggregate(AggFunc.SUM, "a", AggRange.BEFORE_CURRENT, "v")),
        ("count(a[..i-1].v)", Aggregate(AggFunc.COUNT, "a", AggRange.BEFORE_CURRENT, "v")),
        ("avg(a[].period)", Aggregate(AggFunc.AVG, "a", AggRange.ALL, "period")),
        ("Sum(a[].period)", Aggregate(AggFunc.SUM, "a", AggRange.ALL, "period")),
        ("count(a[])", Aggregate(AggFunc.COUNT, "a", AggRange.ALL, None)),
        ("count(a[].x)", Aggregate(AggFunc.COUNT, "a", AggRange.ALL, "x")),
    ],
)
def test_references_and_aggregates(source: str, node: ast.Expr) -> None:
    assert binary(f"{source} = 1").left == node


# --- WITHIN, RETURN, OUTPUT, clause order, comments --------------------------------


@pytest.mark.parametrize(
    ("source", "window"),
    [
        ("500", Window(500)),
        ("2.5", Window(2.5)),
        ("1 second", Window(1, TimeUnit.SECONDS)),
        ("3 seconds", Window(3, TimeUnit.SECONDS)),
        ("3 sec", Window(3, TimeUnit.SECONDS)),
        ("3 s", Window(3, TimeUnit.SECONDS)),
        ("1 minute", Window(1, TimeUnit.MINUTES)),
        ("10 Minutes", Window(10, TimeUnit.MINUTES)),
        ("10 min", Window(10, TimeUnit.MINUTES)),
        ("10 mins", Window(10, TimeUnit.MINUTES)),
        ("4 secs", Window(4, TimeUnit.SECONDS)),
        ("2 hr", Window(2, TimeUnit.HOURS)),
        ("2 hrs", Window(2, TimeUnit.HOURS)),
        ("3 d", Window(3, TimeUnit.DAYS)),
        ("1 hour", Window(1, TimeUnit.HOURS)),
        ("12 HOURS", Window(12, TimeUnit.HOURS)),
        ("1.5 h", Window(1.5, TimeUnit.HOURS)),
        ("1 day", Window(1, TimeUnit.DAYS)),
        ("2 days", Window(2, TimeUnit.DAYS)),
    ],
)
def test_within(source: str, window: Window) -> None:
    got = parse(f"PATTERN A a WITHIN {source}").within
    assert got == window
    assert got is not None and type(got.amount) is type(window.amount)


def test_window_seconds() -> None:
    assert Window(2, TimeUnit.HOURS).seconds == 7200
    window = parse("PATTERN A a WITHIN 1.5 minutes").within
    assert window is not None and window.seconds == 90.0


def test_return_items_with_and_without_alias() -> None:
    q = parse("PATTERN SEQ(A a, B+ b[]) RETURN a.symbol, avg(b[].price) AS mean, b.LEN as n")
    assert q.returns == (
        ReturnItem(AttrRef("a", "symbol")),
        ReturnItem(Aggregate(AggFunc.AVG, "b", AggRange.ALL, "price"), "mean"),
        ReturnItem(LenRef("b"), "n"),
    )


@pytest.mark.parametrize(
    ("source", "output"),
    [
        ("ALL", OutputFormat.ALL),
        ("all", OutputFormat.ALL),
        ("NON-OVERLAP", OutputFormat.NON_OVERLAP),
        ("non_overlap", OutputFormat.NON_OVERLAP),
        ("Non-Overlap", OutputFormat.NON_OVERLAP),
    ],
)
def test_output(source: str, output: OutputFormat) -> None:
    assert parse(f"PATTERN A a OUTPUT {source}").output is output


def test_clauses_in_any_order() -> None:
    clauses = ["WHERE a.x > 1", "WITHIN 5 s", "RETURN a.x", "OUTPUT NON-OVERLAP"]
    reference = parse("PATTERN A a " + " ".join(clauses))
    for shift in range(1, 4):
        order = clauses[shift:] + clauses[:shift]
        assert parse("PATTERN A a " + " ".join(reversed(order))) == reference
        assert parse("PATTERN A a " + " ".join(order)) == reference


def test_comments_are_ignored() -> None:
    text = """// stock trend
    PATTERN SEQ(A a, /* inline */ B b) // the pattern
    WHERE a.x / b.x > 1 /* a
    multi-line comment */ AND a.y = 2 // end
    """
    q = parse(text)
    assert q == parse("PATTERN SEQ(A a, B b) WHERE a.x / b.x > 1 AND a.y = 2")


# --- spans -------------------------------------------------------------------------


def test_every_node_has_the_span_of_its_first_character() -> None:
    text = FIGURE_1_QUERY_3
    q = parse(text)
    for node in q.walk():
        assert node.span.line >= 1 and node.span.column >= 1, node
    assert q.span == ast.Span(*locate(text, "PATTERN"))
    assert q.pattern.span == ast.Span(*locate(text, "SEQ"))
    assert q.pattern.components[1].span == ast.Span(*locate(text, "Stock b"))
    assert q.where[0].span == ast.Span(*locate(text, "[symbol]"))
    avg = q.where[2]
    assert isinstance(avg, Binary)
    assert avg.span == ast.Span(*locate(text, "a[i].price"))
    assert avg.right.span == ast.Span(*locate(text, "avg("))
    last = q.where[3]
    assert isinstance(last, Binary) and isinstance(last.right, Binary)
    assert last.right.span == ast.Span(*locate(text, "0.8"))
    assert last.right.right.span == ast.Span(*locate(text, "a[a.LEN]"))
    assert q.within is not None and q.within.span == ast.Span(*locate(text, "WITHIN"))


def test_spans_of_unary_parenthesised_and_return_nodes() -> None:
    text = "PATTERN SEQ(A a, !B b)\nRETURN -(a.x + 1) * 2 AS y, not a.f"
    q = parse(text)
    assert q.pattern.components[1].span == ast.Span(*locate(text, "!B"))
    first, second = q.returns
    assert first.span == ast.Span(*locate(text, "-("))
    assert isinstance(first.expr, Binary) and isinstance(first.expr.left, Unary)
    assert first.expr.left.operand.span == ast.Span(*locate(text, "a.x"))
    assert second.expr.span == ast.Span(*locate(text, "not"))
    folded = parse("PATTERN A a WHERE a.x > -3").where[0]
    assert isinstance(folded, Binary)
    assert folded.right == Literal(-3) and folded.right.span == ast.Span(1, 25)
