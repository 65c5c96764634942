"""Columns added to the input before it is shuffled: position, id, key and time.

* ``kleene__pos`` — the event's 0-based position in the input: files in name order,
  each in its row order (for a DataFrame not read from files, the order of its
  partitions and rows). It is the arrival order, and it breaks ties between equal
  timestamps, so every partition is fed in stream order (time, input position). It is
  computed before any shuffle from ``monotonically_increasing_id`` plus a shift per
  (file, input partition), which one small counting job collects.
* the id column — when the input has none, the position (the local engine's default);
  null ids of an integral id column are filled the same way.
* ``kleene__k0``, ``kleene__k1``, ... — the partition key, read per event type as the
  query's key analysis says (SIGMOD 2008, section 3.2: an event belongs to the
  partition of its key attribute's value).
* ``kleene__t`` — the time as a number (microseconds since the epoch for timestamp
  columns, the value itself for numeric ones), for time slicing.
* ``kleene__seen`` — for an event the local engine would admit (a time, a type, every
  attribute its type needs), the latest time among the admitted events before it in
  input order; null for the first one and for events it would reject anyway. The input
  order is the arrival order, so an event is late, exactly as for
  :meth:`kleene.Matcher.push`, when its time is before ``kleene__seen`` minus the allowed
  lateness (:mod:`kleene.spark._worker` decides and rejects it). Computed before any
  shuffle: the running maximum within each input partition, and the maximum of the
  partitions before it, which one small job collects.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kleene.spark._query import KeyRouting
from kleene.spark._schema import EventColumns

INTERNAL_PREFIX = "kleene__"  # no leading underscore: pandas UDF inputs rename those
POS = "kleene__pos"
TIME = "kleene__t"
SEEN = "kleene__seen"
KEY_PREFIX = "kleene__k"

_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)


def key_columns(width: int) -> list[str]:
    return [f"{KEY_PREFIX}{i}" for i in range(width)]


def _input_part() -> Column:
    """The input file and partition of a row (before any shuffle): the unit of the input
    order. A file's rows keep their order within a partition; files come in name order
    (Spark packs them into partitions by size, so the partition order is not the order
    of the files)."""
    return F.concat_ws("#", F.input_file_name(), F.spark_partition_id().cast("string"))


def with_positions(df: DataFrame, columns: EventColumns, ids: bool = True) -> DataFrame:
    """``df`` with ``kleene__pos`` (the input order: files by name, each in its row
    order) and, with ``ids``, an id for every event (:func:`with_ids`)."""
    tagged = df.withColumn("kleene__part", _input_part()).withColumn(
        "kleene__mid", F.monotonically_increasing_id()
    )
    stats = tagged.groupBy(
        F.input_file_name().alias("file"), F.spark_partition_id().alias("pid"), "kleene__part"
    ).agg(F.count(F.lit(1)).alias("n"), F.min("kleene__mid").alias("first"))
    shifts: list[Column] = []
    total = 0
    for row in sorted(stats.collect(), key=lambda r: (r["file"], r["pid"])):
        shifts += [F.lit(row["kleene__part"]), F.lit(total - row["first"])]
        total += row["n"]
    shift = F.element_at(F.create_map(*shifts), F.col("kleene__part")) if shifts else F.lit(0)
    out = tagged.withColumn(POS, (F.col("kleene__mid") + shift).cast("long")).drop(
        "kleene__part", "kleene__mid"
    )
    return with_ids(out, df, columns) if ids else out


def with_ids(out: DataFrame, df: DataFrame, columns: EventColumns) -> DataFrame:
    """``out`` (``df`` with ``kleene__pos``) with an id for every event: the position
    where ``df`` has no id column or a null integral id."""
    if columns.id_field not in df.columns:
        return out.withColumn(columns.id_field, F.col(POS))
    if _id_nullable_integral(df, columns.id_field):
        return out.withColumn(columns.id_field, F.coalesce(F.col(columns.id_field), F.col(POS)))
    return out


def _id_nullable_integral(df: DataFrame, id_field: str) -> bool:
    field = df.schema[id_field]
    return field.nullable and isinstance(field.dataType, _INTEGRAL)


def keyed(
    df: DataFrame, routing: KeyRouting | None, columns: EventColumns, one_group: str
) -> tuple[DataFrame, list[str]]:
    """``df`` ready to group per key: with its key columns and their names, or, for a
    query without a key, with one constant column ``one_group`` (all events one group)."""
    if routing is not None:
        return with_key(df, routing, columns), key_columns(routing.width)
    return df.withColumn(one_group, F.lit(0)), [one_group]


def with_key(df: DataFrame, routing: KeyRouting, columns: EventColumns) -> DataFrame:
    """``df`` with one ``kleene__k<i>`` column per key component."""
    present = {f.name: f.dataType for f in df.schema.fields}
    out = df
    for i, name in enumerate(key_columns(routing.width)):
        attrs = {t: a[i] for t, a in routing.attrs_by_type.items()}
        default = routing.common[i] if routing.common else None
        used = {*attrs.values(), *([default] if default else [])}
        dtypes = {present[a] for a in used if a in present}
        as_text = len(dtypes) > 1

        def read(attr: str | None, as_text: bool = as_text) -> Column:
            if attr is None or attr not in present:
                return F.lit(None).cast("string" if as_text else "long")
            c = F.col(attr)
            return c.cast("string") if as_text else c

        expr: Column = read(default)
        if attrs:
            chain: Column | None = None
            for event_type, attr in sorted(attrs.items()):
                cond = F.col(columns.type_field) == F.lit(event_type)
                chain = F.when(cond, read(attr)) if chain is None else chain.when(cond, read(attr))
            assert chain is not None
            expr = chain.otherwise(read(default))
        out = out.withColumn(name, expr)
    return out


def with_numeric_time(df: DataFrame, columns: EventColumns) -> DataFrame:
    """``df`` with ``kleene__t``: the time as a double (microseconds for timestamps)."""
    return df.withColumn(TIME, numeric_time(df, columns.time_field))


def numeric_time(df: DataFrame, time_field: str) -> Column:
    dtype = df.schema[time_field].dataType
    c = F.col(time_field)
    if isinstance(dtype, T.TimestampType):
        return F.unix_micros(c).cast("double")
    if isinstance(dtype, T.TimestampNTZType):
        return F.unix_micros(c.cast("timestamp")).cast("double")
    if isinstance(dtype, T.NumericType):
        as_double = c.cast("double")
        return F.when(~F.isnan(as_double), as_double)  # NaN is a missing time
    return F.lit(None).cast("double")  # the engine rejects such times


def time_scale(df: DataFrame, time_field: str) -> float:
    """Numeric time units per window unit: 1e6 for timestamp columns (the window is in
    seconds, ``kleene__t`` in microseconds), 1 for numeric time."""
    dtype = df.schema[time_field].dataType
    return 1e6 if isinstance(dtype, T.TimestampType | T.TimestampNTZType) else 1.0


def with_seen(
    df: DataFrame, columns: EventColumns, required: Mapping[str, Sequence[str]]
) -> DataFrame:
    """``df`` (not yet shuffled, with ``kleene__pos``) with ``kleene__seen``."""
    if columns.time_field not in df.columns:
        return df.withColumn(SEEN, F.lit(None))
    admitted = admitted_column(df, columns, required)
    time = F.col(columns.time_field)
    tagged = df.withColumn("kleene__part", _input_part()).withColumn("kleene__ok", admitted)
    ok_time = F.when(F.col("kleene__ok"), time)
    parts = tagged.groupBy("kleene__part").agg(F.max(ok_time).alias("m"), F.min(POS).alias("first"))
    before: list[Column] = []
    latest = None
    for row in sorted(parts.collect(), key=lambda r: r["first"]):
        if latest is not None:
            before += [F.lit(row["kleene__part"]), F.lit(latest)]
        if row["m"] is not None:
            latest = row["m"] if latest is None else max(latest, row["m"])
    earlier = (
        Window.partitionBy("kleene__part").orderBy(POS).rowsBetween(Window.unboundedPreceding, -1)
    )
    running = F.max(ok_time).over(earlier)
    if before:
        previous = F.element_at(F.create_map(*before), F.col("kleene__part"))
        running = F.greatest(running, previous.cast(df.schema[columns.time_field].dataType))
    seen = F.when(F.col("kleene__ok"), running)
    return tagged.withColumn(SEEN, seen).drop("kleene__part", "kleene__ok")


def admitted_column(
    df: DataFrame, columns: EventColumns, required: Mapping[str, Sequence[str]]
) -> Column:
    """Whether the local engine admits the event apart from lateness (see
    :mod:`kleene.runtime.ingest`): a time, a type, and every attribute its type needs."""
    present = {f.name: f.dataType for f in df.schema.fields}
    ok = numeric_time(df, columns.time_field).isNotNull()
    if columns.type_field not in present:
        return F.lit(False)
    kind = F.col(columns.type_field)
    ok = ok & kind.isNotNull()
    for event_type, attrs in required.items():
        has_all: Column = F.lit(True)
        for attr in attrs:
            has_all = has_all & _present(attr, present)
        ok = ok & (F.when(kind == F.lit(event_type), has_all).otherwise(F.lit(True)))
    return ok


def _present(attr: str, present: Mapping[str, T.DataType]) -> Column:
    if attr not in present:
        return F.lit(False)
    c = F.col(attr)
    if isinstance(present[attr], T.FloatType | T.DoubleType):
        return c.isNotNull() & ~F.isnan(c)
    return c.isNotNull()
