"""Events the query provably ignores, dropped in Spark's file scan.

:func:`kleene.compiler.pushdown.pushdown` says which events a query ignores (under the
skip-till strategies: events of other types, and events failing some single-event
property of every state of their type). :func:`keep_filter` turns that into a Spark
filter with :mod:`kleene.spark.columns`, keeping every event the local engine would
reject: a missing (null) type or time, a NaN time, a missing or NaN attribute its type
needs. Kinds are checked from the schema: a type whose attributes the engine could
reject for their kind (a kind group over columns of two kinds, a kind the query does not
allow) is kept whole. For a Parquet input the simple comparisons become the scan's
``PushedFilters`` (row groups whose statistics rule them out are never read) and the
rest a Filter right above it.

Dropping events must not change what the others see. Two facts depend on every event:
its position (the arrival order, and the id of an input without ids) and the latest
time before it (lateness, :mod:`kleene.spark._prepare`). :func:`prepared_with_pushdown`
numbers each event by its file and row index, so positions are those of the whole
input, and first reads the time column once (:func:`order_segments`): only when the
admitted events' times never decrease in input order, so that no event is late and a
dropped one can make no other late, does it drop anything. Otherwise the ordinary
preparation runs (taking the latest time over the dropped events too would cost a
second window over every event: measured slower than no push-down).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kleene.compiler import expr
from kleene.compiler.pushdown import Pushdown, pushdown
from kleene.spark import columns as sc
from kleene.spark._prepare import POS, SEEN, admitted_column, with_ids
from kleene.spark._query import QuerySpec
from kleene.spark._schema import EventColumns

_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)


def _kind(dtype: T.DataType) -> str | None:
    """The kind the local engine gives the values of a Spark column (None: kept)."""
    if isinstance(dtype, (*_INTEGRAL, T.FloatType, T.DoubleType)):
        return "number"
    if isinstance(dtype, T.StringType):
        return "string"
    if isinstance(dtype, T.BooleanType):
        return "boolean"
    if isinstance(dtype, T.TimestampType | T.TimestampNTZType):
        return "datetime"
    return None


def _missing(name: str, dtype: T.DataType) -> Column:
    """Where the local engine finds the value missing (null, or NaN for floats)."""
    c = F.col(name)
    if isinstance(dtype, T.FloatType | T.DoubleType):
        return c.isNull() | F.isnan(c)
    return c.isNull()


def _loader(schema: T.StructType, columns: EventColumns) -> sc.Loader:
    def load(node: expr.Load) -> tuple[Column, T.DataType]:
        name = {"type": columns.type_field, "timestamp": columns.time_field}.get(node.key, node.key)
        if node.key == "id" or name not in schema.fieldNames():
            raise sc.NotPushable(f"{node.key} is not a column of the input")
        dtype = schema[name].dataType
        if node.key == "timestamp" and _kind(dtype) == "datetime":
            return F.unix_micros(F.col(name).cast("timestamp")), T.LongType()
        return F.col(name), dtype

    return load


def keep_filter(pd: Pushdown, schema: T.StructType, columns: EventColumns) -> Column | None:
    """Where an event must stay (never null), or None when nothing can be dropped."""
    present = {f.name: f.dataType for f in schema.fields}
    time_type = present.get(columns.time_field)
    if not isinstance(present.get(columns.type_field), T.StringType) or time_type is None:
        return None
    if _kind(time_type) not in ("number", "datetime"):
        return None
    load = _loader(schema, columns)
    droppable: dict[str, Column] = {}
    for etype, states in pd.states.items():
        drop = _drop_type(pd, etype, states, present, load)
        if drop is not None:
            droppable[etype] = drop
    # one conjunct per droppable type and one for the other types, none null, and with
    # no disjunct in common (Spark would factor it out of them): a file scan takes the
    # conjuncts it can evaluate even when it cannot take all of them
    kind = F.col(columns.type_field)
    no_time = _missing(columns.time_field, time_type)
    keep = no_time | kind.isNull() | kind.isin(sorted(pd.types))
    for etype, accepted in sorted(droppable.items()):
        this = kind.eqNullSafe(F.lit(etype))
        keep = keep & (~this | (this & no_time) | accepted)
    return keep


def _drop_type(
    pd: Pushdown,
    etype: str,
    states: tuple[tuple[expr.Expr, ...], ...],
    present: dict[str, T.DataType],
    load: sc.Loader,
) -> Column | None:
    """For events of ``etype``: where some state may accept them or the engine would
    reject them (None when they must all stay)."""
    attrs = set(pd.required.get(etype, ()))
    accepts: list[Column] = []
    for properties in states:
        held = [_held(p, load) for p in properties]
        conjuncts = [h for h in held if h is not None]
        if not conjuncts:
            return None  # the state may accept any event of its type
        attrs |= {
            n.key
            for p in properties
            for n in expr.loads(p)
            if n.key not in ("type", "timestamp", "id")
        }
        accepts.append(_all(conjuncts))
    if not _kinds_fixed(pd, etype, attrs, present):
        return None
    missing = [_missing(a, present[a]) for a in sorted(attrs)]
    return _any(missing + accepts)


def _held(node: expr.Expr, load: sc.Loader) -> Column | None:
    try:
        return sc.holds(node, load, present=True)
    except sc.NotPushable:
        return None  # leaving a conjunct out keeps more events


def _kinds_fixed(pd: Pushdown, etype: str, attrs: set[str], present: dict[str, T.DataType]) -> bool:
    """Whether no present value of these attributes can be rejected for its kind: each
    is a column of a usable kind, the kind its group demands, and every column of its
    group (over all types) has that kind."""
    for attr in attrs:
        if attr not in present or _kind(present[attr]) is None:
            return False
        group = pd.kind_groups.get((etype, attr))
        if group is None:
            continue
        members = [a for (_t, a), g in pd.kind_groups.items() if g == group]
        kinds = {_kind(present[a]) if a in present else None for a in members}
        demanded = pd.group_kinds.get(group)
        if len(kinds) != 1 or (demanded is not None and kinds != {demanded}):
            return False
    return True


def _all(parts: list[Column]) -> Column:
    out = parts[0]
    for p in parts[1:]:
        out = out & p
    return out


def _any(parts: list[Column]) -> Column:
    out = parts[0]
    for p in parts[1:]:
        out = out | p
    return out


def pushed_preparation(df: DataFrame, spec: QuerySpec) -> DataFrame | None:
    """The prepared input (positions, ids, ``kleene__seen``) of the events the query
    may select, or None when push-down does not apply: the query ignores nothing, its
    backtrack core sees every event, ``df`` is not a Parquet scan as read, or its events
    are not in time order."""
    q = spec.compile()
    pd = pushdown(q.plan)
    if pd is None or q.config.engine == "backtrack" or not is_parquet_scan(df):
        return None
    columns = spec.columns
    keep = keep_filter(pd, df.schema, columns)
    if keep is None:
        return None
    return prepared_with_pushdown(df, keep, columns, q.plan.required)


def is_parquet_scan(df: DataFrame) -> bool:
    """Whether ``df`` is a file scan as read (no transformation) whose rows carry
    their index within their file (Parquet)."""
    try:
        relation = df._jdf.queryExecution().analyzed().getClass().getSimpleName()
        if relation != "LogicalRelation":
            return False
        df.select(F.col("_metadata.row_index")).schema  # noqa: B018 (resolves or raises)
    except Exception:  # no JVM plan (Spark Connect) or no row index: not for us
        return False
    return True


def prepared_with_pushdown(
    df: DataFrame,
    keep: Column,
    columns: EventColumns,
    required: Mapping[str, Sequence[str]],
) -> DataFrame | None:
    """``df`` with positions, ids and ``kleene__seen`` as the ordinary preparation gives
    them, but only the events ``keep`` holds for; None when the input is not in time
    order (a dropped event could make a later one late, or be late itself)."""
    offsets, ordered = _file_order(df, columns, required)
    if not offsets or not ordered:
        return None
    file, row_index = F.input_file_name(), F.col("_metadata.row_index")
    pos = (F.element_at(F.create_map(*offsets), file) + row_index).cast("long")
    no_seen = F.lit(None).cast(df.schema[columns.time_field].dataType)  # no event is late
    kept = df.filter(keep).select("*", pos.alias(POS), no_seen.alias(SEEN))
    return with_ids(kept, df, columns)


def _file_order(
    df: DataFrame, columns: EventColumns, required: Mapping[str, Sequence[str]]
) -> tuple[list[Column], bool]:
    """Each file's first position (as ``create_map`` arguments, files in name order),
    and whether the admitted events' times never decrease in the input order (then no
    event is late), from one scan of the time column."""
    time_type = df.schema[columns.time_field].dataType
    t = F.col(columns.time_field)
    if _kind(time_type) == "datetime":
        number, spark_type = F.unix_micros(t.cast("timestamp")), "long"
    elif isinstance(time_type, _INTEGRAL):
        number, spark_type = t.cast("long"), "long"
    else:
        number, spark_type = t.cast("double"), "double"  # a NaN time is not admitted
    arrow_type = pa.int64() if spark_type == "long" else pa.float64()
    ok = admitted_column(df, columns, required)
    narrow = df.select(
        F.input_file_name().alias("f"),
        F.col("_metadata.row_index").alias("r"),
        F.when(ok, number).alias("t"),
    )
    schema = f"f string, r long, n long, first {spark_type}, top {spark_type}, ordered boolean"
    segments = sorted(
        narrow.mapInArrow(functools.partial(order_segments, arrow_type), schema).collect(),
        key=lambda x: (x.f, x.r),
    )
    offsets: list[Column] = []
    total, top, ordered, files = 0, None, True, set()
    for seg in segments:
        if seg.f not in files:
            files.add(seg.f)
            offsets += [F.lit(seg.f), F.lit(total)]
        total += seg.n
        if seg.first is not None:
            ordered = ordered and seg.ordered and (top is None or seg.first >= top)
            top = seg.top if top is None else max(top, seg.top)
    return offsets, ordered


def order_segments(
    time_type: pa.DataType, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """In a Spark worker, over one input partition's rows (file, row index, time of an
    admitted event or null) in input order: per run of one file, its first row index,
    its row count, its first and largest time, and whether its times never decrease."""
    found: list[dict[str, Any]] = []
    for batch in batches:
        files = batch.column(0).to_numpy(zero_copy_only=False)
        rows = batch.column(1).to_numpy()
        times = batch.column(2)
        valid = times.is_valid().to_numpy(zero_copy_only=False)
        values = pc.fill_null(times, 0).to_numpy()
        cuts = [0, *(np.flatnonzero(files[1:] != files[:-1]) + 1).tolist(), len(files)]
        for a, b in itertools.pairwise(cuts):
            if not found or found[-1]["f"] != files[a]:
                found.append(
                    dict(f=files[a], r=int(rows[a]), n=0, first=None, top=None, ordered=True)
                )
            seg = found[-1]
            seg["n"] += b - a
            held = values[a:b][valid[a:b]]
            if not len(held):
                continue
            first, top = held[0].item(), held.max().item()
            steady = bool(np.all(held[1:] >= held[:-1]))
            seg["ordered"] = (
                seg["ordered"] and steady and (seg["top"] is None or first >= seg["top"])
            )
            seg["first"] = first if seg["first"] is None else seg["first"]
            seg["top"] = top if seg["top"] is None else max(seg["top"], top)
    if found:
        yield pa.RecordBatch.from_pylist(found, schema=_segment_schema(time_type))


def _segment_schema(time_type: pa.DataType) -> pa.Schema:
    return pa.schema(
        [
            ("f", pa.string()),
            ("r", pa.int64()),
            ("n", pa.int64()),
            ("first", time_type),
            ("top", time_type),
            ("ordered", pa.bool_()),
        ]
    )
