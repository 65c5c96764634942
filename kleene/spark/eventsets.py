"""Batch matching of an event-set (SES) pattern on Spark: :func:`match_ses`, where
``kleene.spark.match`` sends the queries :func:`is_ses` accepts.

Match windows are computed per partition key (match-window paper, section 4.4): the
key is the pattern's partitioning attributes X of Definition 6, the attributes on which
the equality relationships relate every pair of variables. All events of a match agree
on X (and none has a null there), so the events are grouped by their values of X, each
group is sorted into stream order (time, input position) and fed to one SES matcher,
which runs the two-phase strategy of the query (:mod:`kleene.eventsets.twophase`) over
the group. No match is lost (its events share one group) and none is found twice (an
event is in one group only). Events with a null in X form groups of their own and
match nothing, as in the local engine; they are still admitted or rejected alike.

Without partitioning attributes the whole input is one group. Time slices overlapping
by τ would also lose nothing, but a match found in two slices would then have to be
kept by one of them only (the slice of its first event); one group keeps the matcher's
output as it is, which the local engine's equality needs more than parallelism here.

As for point queries (:mod:`kleene.spark.batch`), the input order is the arrival
order: before any shuffle every event gets its position and the latest admitted time
before it (:mod:`kleene.spark._prepare`), and an event behind it is rejected as late
exactly as :meth:`kleene.eventsets.matcher.SesMatcher.push` rejects it.

Each group is matched at once, when its last row has been read, by
:meth:`~kleene.eventsets.matcher.SesMatcher.run` (the pre-processing computed over the
whole group column-wise, :mod:`kleene.eventsets.batch`): the matches and rejections of
pushing its rows and flushing, at a fraction of the cost.
"""

from __future__ import annotations

from typing import Any, TypeGuard, cast

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kleene import kinds
from kleene.eventsets.partitioning import partition_attributes
from kleene.eventsets.query import SesQuery
from kleene.spark._prepare import POS, with_positions, with_seen
from kleene.spark._query import QuerySpec, merged_options
from kleene.spark._rows import combined_schema, split_output
from kleene.spark._schema import EventColumns, MatchSchema
from kleene.spark._session import use_this_python
from kleene.spark._worker import GroupMatcher
from kleene.spark.batch import Layout, MatchResult

ONE_GROUP = "kleene__one"


def ses_spec(
    query: str | SesQuery,
    time_field: str | None,
    type_field: str | None,
    id_field: str | None,
    options: dict[str, Any],
) -> QuerySpec:
    """The picklable form of the query: its text and every option."""
    base = {"time_field": "timestamp", "type_field": "type", "id_field": "id"}
    if isinstance(query, SesQuery):
        base = {**base, **_options_of(query)}
    merged = merged_options(base, time_field, type_field, id_field, options)
    text = query.text if isinstance(query, SesQuery) else query
    return QuerySpec(text, tuple(sorted(merged.items())))


def _options_of(query: SesQuery) -> dict[str, Any]:
    f = query.fields
    return {
        "output": query.output,
        "time_unit": query.time_unit,
        "max_matches": None,  # the driver applies it (kleene run): a worker error loses all
        "max_runs": query.max_runs,
        "algorithm": "auto" if query.auto else query.algorithm,
        "preprocessing": query.flags.name,
        "time_field": f.time_field,
        "type_field": f.type_field,
        "id_field": f.id_field,
    }


def match_ses(
    df: DataFrame,
    query: str | SesQuery,
    *,
    time_field: str | None = None,
    type_field: str | None = None,
    id_field: str | None = None,
    spark: SparkSession | None = None,
    **options: Any,
) -> MatchResult:
    """Match an SES query over ``df`` with Spark (see the module docstring); the result
    equals ``SesQuery.run`` over ``df`` in its order."""
    spark = spark if spark is not None else df.sparkSession
    use_this_python(spark)
    spec = ses_spec(query, time_field, type_field, id_field, options)
    q = cast(SesQuery, spec.compile())
    columns = spec.columns
    prepared = with_seen(with_positions(df, columns), columns, q.needs.required)
    key = partition_attributes(q.pattern)
    prepared, groups = grouped(prepared, q, df.columns)
    schema = ses_schema(q, df.schema, columns)
    worker = GroupMatcher(
        spec,
        schema,
        tuple(groups),
        (),
        added_id=columns.id_field not in df.columns,
        whole=True,  # each group by SesMatcher.run: the pre-processing column-wise
    )
    order = [columns.time_field, POS] if columns.time_field in df.columns else [POS]
    parallelism = spark.sparkContext.defaultParallelism
    shuffled = (
        prepared.repartition(max(1, 2 * parallelism), *groups)
        if groups != [ONE_GROUP]
        else prepared.repartition(1)
    )
    combined = shuffled.sortWithinPartitions(*groups, *order).mapInArrow(
        worker.map_batches, combined_schema(schema)
    )
    matches, rejected = split_output(combined, schema)
    layout = Layout(tuple(key), (), "map", "" if key else "one group: no partitioning attribute")
    return MatchResult(
        matches, rejected, combined, layout, spec, rows=schema, input_schema=df.schema
    )


def grouped(df: DataFrame, q: SesQuery, columns: list[str]) -> tuple[DataFrame, list[str]]:
    """``df`` and the columns to group it by: the partitioning attributes of Definition 6
    among the input's ``columns`` (a missing one is null: no match), else one constant
    group column added to ``df``."""
    groups = [a for a in partition_attributes(q.pattern) if a in columns]
    if not groups:
        return df.withColumn(ONE_GROUP, F.lit(0)), [ONE_GROUP]
    return df, groups


def ses_schema(q: SesQuery, schema: T.StructType, columns: EventColumns) -> MatchSchema:
    """The match-row layout of ``q`` over input rows of ``schema``: its variables' ids,
    start and end; nothing returned."""
    by_name = {f.name: f.dataType for f in schema.fields}
    return MatchSchema(
        q.variables,
        (),
        by_name.get(columns.id_field, T.LongType()),
        by_name.get(columns.time_field, T.DoubleType()),
        (),
    )


def is_ses(query: Any) -> TypeGuard[str | SesQuery]:
    """Whether ``kleene.spark.match`` sends ``query`` (text or compiled) to
    :func:`match_ses` (grouped by its partitioning attributes; ``partition_by``,
    ``slice``, ``method`` and ``pushdown`` do not apply to it)."""
    return isinstance(query, SesQuery) or (
        isinstance(query, str) and kinds.kind_of_text(query).name == "eventset"
    )
