"""The Python-worker side of the batch pipeline, run without Spark."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyspark.sql.pandas.types import from_arrow_schema

import kleene
from kleene.datagen import stock
from kleene.io.schema import match_id
from kleene.spark._collapsed import ExpandedSchema, build_collapsed_schema
from kleene.spark._kind import query_spec, resolve
from kleene.spark._prepare import POS
from kleene.spark._query import QuerySpec
from kleene.spark._rows import KIND, MATCH_KIND
from kleene.spark._schema import build_match_schema
from kleene.spark._slicing import SLICE, home_slice
from kleene.spark._worker import GroupWorker, group_starts, time_number
from tests.spark.support import local_keys

pytestmark = pytest.mark.spark

QUERY = """PATTERN SEQ(Stock+ a[], Stock b)
WHERE skip_till_next_match(a[], b) {
    [symbol] and a[i].price > a[i-1].price and b.price < a[a.LEN].price }
WITHIN 20"""


def test_group_starts_split_on_any_column_and_on_nulls() -> None:
    table = pa.table({"k": [1, 1, None, None, 2, 2], "s": [0, 1, 1, 1, 1, 1]})
    assert group_starts(table, ["k", "s"]) == [0, 1, 2, 4]
    assert group_starts(table, []) == [0]


def resolve_query(query: object, **fields: str | None) -> tuple[QuerySpec, kleene.Query]:
    """The spec workers compile and the compiled query, as kleene.spark.match gets them."""
    kind, part = resolve(query, {})
    return query_spec(kind, part, query, fields, {})


def test_map_batches_carries_a_group_across_batches() -> None:
    events = stock.generate(3000, symbols=3, seed=5)
    spec, q = resolve_query(QUERY)
    table = events.append_column(POS, events["id"]).append_column("kleene__k0", events["symbol"])
    ordered = table.sort_by([("kleene__k0", "ascending"), ("timestamp", "ascending")])
    schema = build_match_schema(q.plan, from_arrow_schema(table.schema), spec.columns)
    worker = GroupWorker(spec, schema, ("kleene__k0",), ())
    # batches of 700 rows: every symbol's rows span several batches
    out = pa.Table.from_batches(list(worker.map_batches(iter(ordered.to_batches(700)))))
    rows = [r for r in out.to_pylist() if r[KIND] == MATCH_KIND]
    got = [frozenset((v, tuple(r[v])) for v in q.variables) for r in rows]
    assert len(got) == len(set(got))
    assert set(got) == local_keys(q.run(events))
    assert all(r["match_id"] == match_id({v: r[v] for v in q.variables}) for r in rows)


def test_match_id_depends_on_variables_and_ids_only() -> None:
    assert match_id({"a": (1, 2), "b": (3,)}) == match_id({"b": [3], "a": [1, 2]})
    assert match_id({"a": (1, 2), "b": (3,)}) != match_id({"a": (1,), "b": (2, 3)})


def test_time_numbers_follow_the_slice_cuts() -> None:
    moment = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    micros = time_number(moment)
    assert micros == moment.timestamp() * 1e6
    cuts = [10.0, 20.0]
    assert [home_slice(time_number(t), cuts) for t in (5, 10, 19.5, 20, None)] == [0, 1, 1, 2, 0]
    assert time_number(float("nan")) is None and time_number(True) is None


def test_compiled_query_keeps_its_options() -> None:
    q = kleene.compile(QUERY, output="non-overlap", time_field="ts")
    spec, again = resolve_query(q)
    assert again is q and spec.columns.time_field == "ts"
    spec2, other = resolve_query(q, time_field="t2")
    assert spec2.columns.time_field == "t2" and spec2 != spec
    assert other.output is q.output and other.fields.time_field == "t2"


COLLAPSED = """PATTERN SEQ(Stock a, Stock+ b[], Stock c)
WHERE skip_till_any_match(a, b[], c) {
    b[i].price > a.price and b[i].volume > b[i-1].volume and c.price < a.price }
WITHIN 4
OUTPUT COLLAPSED"""


@pytest.mark.parametrize("expand", [False, True], ids=["collapsed", "expanded"])
def test_collapsed_results_are_owned_by_one_slice(expand: bool) -> None:
    """Narrow slices (every few windows a cut): each collapsed result, or each match of
    its expansion, comes out of exactly one slice."""
    events = stock.generate(1500, symbols=2, seed=3)
    spec, q = resolve_query(COLLAPSED)
    window = q.window
    assert window is not None
    cuts = tuple(float(t) for t in range(100, 1500, 97))
    table = events.append_column(POS, events["id"])
    arrow_schema = from_arrow_schema(table.schema)
    schema = build_match_schema(q.plan, arrow_schema, spec.columns)
    rows_layout = build_collapsed_schema(q.plan, arrow_schema, spec.columns)
    layout = ExpandedSchema(*schema.__dict__.values()) if expand else rows_layout
    worker = GroupWorker(spec, layout, (SLICE,), cuts)
    bounds = [float("-inf"), *cuts, float("inf")]
    rows = []
    for k in range(len(cuts) + 1):
        t = pc.cast(table["timestamp"], pa.float64())
        keep = pc.and_(
            pc.greater_equal(t, bounds[k] - window), pc.less_equal(t, bounds[k + 1] + window)
        )
        part = table.filter(keep)
        part = part.append_column(SLICE, pa.array([k] * part.num_rows, pa.int64()))
        ordered = worker.apply_group(part, ("timestamp", POS))
        rows += [r for r in ordered.to_pylist() if r[KIND] == MATCH_KIND]
    local = q.run_collapsed(events)
    if expand:
        got = [frozenset((v, tuple(r[v])) for v in q.variables) for r in rows]
        assert len(got) == len(set(got))
        assert set(got) == local_keys(m for c in local for m in c.expand())
    else:
        ids = [r["collapsed_id"] for r in rows]
        assert len(ids) == len(set(ids)) == len(local)
        assert sorted((r["start"], r["end"], r["count"]) for r in rows) == sorted(
            (c.start, c.end, c.count()) for c in local
        )


def test_programs_are_refused_with_a_pointer_to_the_local_engine() -> None:
    program = kleene.compile_program("PATTERN SEQ(A a) UNION PATTERN SEQ(B b)")
    with pytest.raises(kleene.QueryError, match="SASE\\+ program runs on the local engine"):
        resolve(program, {})
    with pytest.raises(kleene.QueryError, match="runs on the local engine"):
        resolve("PATTERN SEQ(A a) UNION PATTERN SEQ(B b)", {})
