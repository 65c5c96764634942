"""The Spark Column backend agrees with the scalar backend and with the oracle.

Generated expressions (hypothesis) over one event with a long, an int, a double, a
string and a boolean attribute and a timestamp, on rows holding nulls, zeros, NaN,
infinities, -0.0 and integers beyond 2**53: for every row, the value or error of
:func:`kleene.spark.columns.as_columns` equals what the generated Python code
(:func:`kleene.compiler.codegen.python_code`) and the oracle's interpreter give, and
:func:`~kleene.spark.columns.holds` equals the oracle's ``truth``. An expression the
backend declares not pushable is skipped (and must be rare).
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kleene.compiler import codegen, expr
from kleene.lang import ast
from kleene.oracle._interpret import EvalError, Scope, evaluate, truth
from kleene.oracle._stream import Event
from kleene.spark import columns

pytestmark = pytest.mark.spark

SCHEMA = T.StructType(
    [
        T.StructField("ts", T.TimestampType()),
        T.StructField("i", T.LongType()),
        T.StructField("n", T.IntegerType()),
        T.StructField("f", T.DoubleType()),
        T.StructField("s", T.StringType()),
        T.StructField("b", T.BooleanType()),
    ]
)
ATTRS = ("i", "n", "f", "s", "b")
EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
BIG = 2**62 + 1
ROWS: list[tuple[Any, ...]] = [
    (3, 7, 2.5, "a", True),
    (-7, 0, -0.0, "b", False),
    (0, -3, 0.0, "", True),
    (BIG, 2, float("nan"), "é", False),
    (-BIG, -1, float("inf"), "Z", True),
    (2**53 + 1, 3, -float("inf"), "a", None),
    (None, None, None, None, None),
    (9, None, 1e18, None, True),
    (2**63 - 1, 1, -1.5, "ab", False),
    (-(2**63), 5, 9.3e18, "b", True),
    (12, 4, 0.5, "a", True),
    (-4, -2, 7.0, "c", False),
]
TIMES = [k * 1_000_003 - 5 for k in range(len(ROWS))]  # micros since the epoch


def _ref(attr: str) -> ast.Expr:
    return ast.AttrRef("e", attr)


NUMBERS = st.sampled_from([0, 1, 3, 7, 2**53 + 1, BIG, 0.0, 0.5, 2.5, 1e18, 9.3e18])
LEAVES = st.one_of(
    st.sampled_from([*ATTRS, "timestamp"]).map(_ref),
    NUMBERS.map(ast.Literal),
    st.sampled_from(["a", "b", "é"]).map(ast.Literal),
)
ARITH = [ast.BinOp.ADD, ast.BinOp.SUB, ast.BinOp.MUL, ast.BinOp.DIV, ast.BinOp.MOD]
COMPARE = [ast.BinOp.EQ, ast.BinOp.NE, ast.BinOp.LT, ast.BinOp.LE, ast.BinOp.GT, ast.BinOp.GE]


def _values(inner: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
    return st.one_of(
        st.builds(ast.Binary, st.sampled_from(ARITH), inner, inner),
        st.builds(ast.Unary, st.just(ast.UnOp.NEG), inner),
    )


VALUES = st.recursive(LEAVES, _values, max_leaves=4)


def _booleans(inner: st.SearchStrategy[ast.Expr]) -> st.SearchStrategy[ast.Expr]:
    return st.one_of(
        st.builds(ast.Binary, st.sampled_from([ast.BinOp.AND, ast.BinOp.OR]), inner, inner),
        st.builds(ast.Unary, st.just(ast.UnOp.NOT), inner),
    )


BOOLEANS = st.recursive(
    st.one_of(
        st.builds(ast.Binary, st.sampled_from(COMPARE), VALUES, VALUES),
        st.just(_ref("b")),
        st.sampled_from([True, False]).map(ast.Literal),
    ),
    _booleans,
    max_leaves=4,
)


def _resolve(node: ast.Expr) -> expr.Expr:
    assert isinstance(node, ast.AttrRef)
    if node.attr == "timestamp":
        return expr.Load(expr.EVENT, "timestamp", expr.Kind.NUMBER)
    return expr.Load(expr.EVENT, node.attr, expr.Kind.ANY, nullable=True)


def _load(load: expr.Load) -> tuple[Any, T.DataType]:
    if load.key == "timestamp":
        return F.unix_micros(F.col("ts")), T.LongType()
    return F.col(load.key), SCHEMA[load.key].dataType


ERROR = "error"


def _python(ir: expr.Expr) -> Any:
    """The scalar backend's function of the event tuple (time, *ATTRS)."""
    position = {"timestamp": 0, **{a: k + 1 for k, a in enumerate(ATTRS)}}
    body = codegen.python_code(ir, lambda load: f"e[{position[load.key]}]")
    fn = codegen.build(f"def f(e):\n    return {body}\n", "f")

    def run(e: tuple[Any, ...]) -> Any:
        try:
            return fn(e)
        except (ArithmeticError, TypeError, ValueError):
            return ERROR

    return run


def _oracle(node: ast.Expr, time: int, row: tuple[Any, ...]) -> tuple[Any, bool]:
    record = {a: v for a, v in zip(ATTRS, row, strict=True) if v is not None}
    event = Event(0, 0, 0, "A", time, record)
    scope = Scope({"e": (event,)}, frozenset())
    try:
        value = evaluate(node, scope)
    except EvalError:
        value = ERROR
    return value, truth(node, scope)


def _same(x: Any, y: Any) -> bool:
    if isinstance(x, float) and isinstance(y, float) and math.isnan(x):
        return math.isnan(y)
    return type(x) is type(y) and x == y


@pytest.fixture(scope="module")
def events(spark: SparkSession) -> Any:
    rows = [(EPOCH + dt.timedelta(microseconds=t), *r) for t, r in zip(TIMES, ROWS, strict=True)]
    return spark.createDataFrame(rows, SCHEMA).cache()


@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.one_of(VALUES, BOOLEANS), min_size=24, max_size=24))
def test_spark_columns_agree_with_python_and_the_oracle(events: Any, nodes: list[Any]) -> None:
    checked: list[tuple[ast.Expr, expr.Expr, columns.Value]] = []
    for node in nodes:
        ir = expr.lower(node, _resolve)
        try:
            checked.append((node, ir, columns.as_columns(ir, _load)))
        except columns.NotPushable:
            continue
    if not checked:
        return
    selected = []
    for k, (_node, ir, pair) in enumerate(checked):
        selected += [
            pair.value.alias(f"v{k}"),
            pair.error.alias(f"e{k}"),
            columns.holds(ir, _load).alias(f"h{k}"),
        ]
    rows = events.select(*selected).collect()
    for (time, row), out in zip(zip(TIMES, ROWS, strict=True), rows, strict=True):
        for k, (node, ir, pair) in enumerate(checked):
            spark_value = ERROR if out[f"e{k}"] else out[f"v{k}"]
            python_value = _python(ir)((time, *row))
            oracle_value, holds = _oracle(node, time, row)
            where = f"{node} on {row}"
            assert out[f"e{k}"] is not None, where
            assert _same(spark_value, oracle_value), f"{where}: {spark_value!r} {oracle_value!r}"
            assert _same(python_value, oracle_value), f"{where}: {python_value!r}"
            assert out[f"h{k}"] is holds, where
            assert pair.kind != columns.INT or spark_value == ERROR or type(spark_value) is int
