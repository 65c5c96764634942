"""Batch matching of a Spark DataFrame: :func:`match`.

The pipeline, end to end:

1. Before any shuffle, every event gets its input position (and, without an id column,
   its id) — :mod:`kleene.spark._prepare`.
2. The events are grouped by the query's partition key (SIGMOD 2008, section 3.2) when
   a matcher per key value finds the same matches as one matcher over everything
   (:func:`kleene.spark._query.splits_by_key`), and/or by time slice
   (:mod:`kleene.spark._slicing`).
3. Each group is fed, in stream order (time, input position), to one kleene matcher in
   a Python worker, and its matches and rejected events come back as Arrow batches.

**Why mapInArrow.** Step 3 has two Spark forms: ``repartition(groups)`` +
``sortWithinPartitions(groups, time, position)`` + ``mapInArrow``, where the worker
walks sorted Arrow batches and starts a new matcher whenever the group changes; and
``groupBy(groups).applyInArrow``, where Spark materialises each whole group as one
table before calling Python. Both shuffle once and sort once. The mapInArrow form
streams: a worker holds one Arrow batch and one matcher at a time, so a group larger
than memory (a query without key and without slicing is a single group) still runs;
applyInArrow holds the whole group. On the measured 10^6-event stock workloads (see
docs/benchmarks_spark.md) mapInArrow was as fast or faster, so it is the default;
``method="group"`` selects the other form.

Results: one Spark operator emits matches and rejected events in one combined layout
(:mod:`kleene.spark._rows`); :class:`MatchResult` splits it with two filters. Reading
both outputs evaluates the pipeline twice unless :meth:`MatchResult.persist` is called.

**Collapsed output** (``OUTPUT COLLAPSED``, SIGMOD 2014 section 5.2): ``matches`` holds
one row per collapsed result (:mod:`kleene.spark._collapsed`: candidates with their
SAFE/UNSAFE labels, the exact ``count``), built by the same grouping, so each is emitted
once. :meth:`MatchResult.expand` runs the matchers again over the same prepared input
and emits every collapsed result's matches in the layout of the ``all`` output.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

import kleene
from kleene.collapsed import Result
from kleene.match import RejectedEvent
from kleene.spark._collapsed import build_collapsed_schema
from kleene.spark._decode import (
    collapsed_from_rows,
    matches_from_rows,
    partition_types,
    rejected_from_rows,
)
from kleene.spark._prepare import (
    POS,
    key_columns,
    time_scale,
    with_key,
    with_numeric_time,
    with_positions,
    with_seen,
)
from kleene.spark._pushdown import pushed_preparation
from kleene.spark._query import (
    KeyRouting,
    QuerySpec,
    key_routing,
    resolve_query,
    slice_blocker,
)
from kleene.spark._rows import RowLayout, combined_schema, split_output
from kleene.spark._schema import EventColumns, MatchSchema, build_match_schema
from kleene.spark._session import use_this_python
from kleene.spark._slicing import SLICE, boundaries, placed_slice_column, with_slices
from kleene.spark._worker import GroupMatcher
from kleene.spark.tpstream import temporal_aware
from kleene.vocabulary import OutputFormat

Method = Literal["map", "group"]


@dataclass(frozen=True)
class Layout:
    """How :func:`match` spread the work (for explanations and tests)."""

    key: tuple[str, ...]  # partition key names; () when not split by key
    cuts: tuple[float, ...]  # time slice boundaries; () when not sliced
    method: str
    note: str = ""  # why slicing was not used, when it was asked for

    @property
    def slices(self) -> int:
        return len(self.cuts) + 1


@dataclass
class MatchResult:
    """Matches and rejected events of :func:`match`, as Spark DataFrames.

    For a collapsed query (``collapsed`` is true) ``matches`` holds the collapsed rows;
    :meth:`expand` gives the matches they stand for.
    """

    matches: DataFrame
    rejected: DataFrame
    combined: DataFrame
    layout: Layout
    query: QuerySpec = field(repr=False)
    collapsed: bool = False
    _expander: Callable[[], DataFrame] | None = field(default=None, repr=False)
    rows: RowLayout | None = field(default=None, repr=False)  # the layout of ``matches``
    input_schema: StructType | None = field(default=None, repr=False)

    def expand(self) -> DataFrame:
        """The matches of a collapsed query, one row each, in the layout of the ``all``
        output (``match_id``, ``partition``, one id array per variable, ``start``,
        ``end``, the RETURN values): exactly ``Query.run`` with ``OUTPUT ALL``. Each
        collapsed result is expanded by :meth:`kleene.CollapsedMatch.expand` in the
        worker that built it, so the matchers run again (the input preparation is
        shared). For other queries this is ``matches``."""
        return self.matches if self._expander is None else self._expander()

    def collect(self) -> tuple[list[Result], list[RejectedEvent]]:
        """The matches (collapsed matches for a collapsed query) and the rejected events
        on the driver, as the kleene objects the local engine gives, sorted as
        :mod:`kleene.io.records` documents: written with :class:`kleene.io.MatchSink`
        and :class:`kleene.io.RejectedSink` they make the local engine's files. Reads
        both outputs: call :meth:`persist` first to run the matchers once."""
        q = self.query.compile()
        names = tuple(q.partition_attributes)
        schema = self.input_schema
        types = partition_types(schema, names) if schema is not None else []
        found = self.matches.toArrow().to_pylist()
        dropped = self.rejected.toArrow().to_pylist()
        results: list[Result]
        if self.collapsed:
            results = list(collapsed_from_rows(found, q, types))
        else:
            assert isinstance(self.rows, MatchSchema)
            results = list(matches_from_rows(found, q, self.rows, types))
        return results, rejected_from_rows(dropped)

    def persist(self) -> MatchResult:
        """Keep the matcher output (memory, then disk) so that reading both
        ``matches`` and ``rejected`` runs the matchers once."""
        self.combined.persist(StorageLevel.MEMORY_AND_DISK)
        return self

    def unpersist(self) -> MatchResult:
        self.combined.unpersist()
        return self


@temporal_aware
def match(
    df: DataFrame,
    query: str | kleene.Query,
    *,
    time_field: str | None = None,
    type_field: str | None = None,
    id_field: str | None = None,
    partition_by: Sequence[str] | str | None = None,
    slice: int | Literal["auto"] | None = None,
    spark: SparkSession | None = None,
    method: Method = "map",
    pushdown: bool = True,
    **compile_options: Any,
) -> MatchResult:
    """Match ``query`` over the events of ``df`` with Spark; see the module docstring.

    ``query`` is query text or a compiled :class:`kleene.Query`; field names default to
    the compiled query's, else ``timestamp``, ``type`` and ``id``; ``compile_options``
    go to :func:`kleene.compile` (strategy, output, max_runs, ...). For a Parquet scan
    as read, the events the query provably ignores are dropped in the scan
    (:mod:`kleene.spark._pushdown`); ``pushdown=False`` reads every event.

    ``partition_by`` overrides the inferred partition key (the caller vouches that no
    match mixes its values). ``slice`` (an int) splits each partition's time line into
    up to that many slices when the query allows it (WITHIN and the ``all`` output
    format); otherwise one slice is used and ``result.layout.note`` says why.
    ``"auto"`` slices only queries that are not split by key (the key already spreads
    the work), into two slices per core, each at least four windows wide.

    The result equals ``query.run`` over ``df`` in its order, which is taken as the
    arrival order (an event more than the allowed lateness behind the latest time before
    it is rejected as late, as the local engine does): the same matches (compare
    ``Match.ids()`` with the variable columns) and the same rejected events;
    :meth:`MatchResult.collect` gives them as the local engine's objects.

    Every variable column is an ``array`` of event ids, also for single variables. With
    ``OUTPUT COLLAPSED`` the rows are collapsed results (see :meth:`MatchResult.expand`);
    their ``count`` column sums to the number of matches.
    """
    if method not in ("map", "group"):
        raise ValueError(f"unknown method {method!r}; expected 'map' or 'group'")
    spark = spark if spark is not None else df.sparkSession
    use_this_python(spark)
    spec, q = resolve_query(query, time_field, type_field, id_field, compile_options)
    columns, added_id = spec.columns, spec.columns.id_field not in df.columns
    prepared, routing, group_cols = _prepared(df, q, spec, partition_by, pushdown)
    keyed = routing is not None
    prepared, cuts, note = _time_slices(df, prepared, q, columns, slice, spark, keyed)
    group_cols += [SLICE] if cuts else []

    schema = build_match_schema(q.plan, prepared.schema, columns)
    collapsed = q.output is OutputFormat.COLLAPSED
    rows: RowLayout = (
        build_collapsed_schema(q.plan, prepared.schema, columns) if collapsed else schema
    )
    order = [columns.time_field, POS] if columns.time_field in df.columns else [POS]

    def run(worker: GroupMatcher) -> DataFrame:
        return run_groups(spark, prepared, worker, routing is not None, cuts, order, method)

    groups, sliced = tuple(group_cols), tuple(cuts)
    combined = run(GroupMatcher(spec, rows, groups, sliced, added_id=added_id))
    matches, rejected = split_output(combined, rows)
    layout = Layout(routing.names if routing else (), tuple(cuts), method, note)
    expanding = GroupMatcher(spec, schema, groups, sliced, expand=True, added_id=added_id)

    def expander() -> DataFrame:
        return split_output(run(expanding), schema)[0]

    return MatchResult(
        matches,
        rejected,
        combined,
        layout,
        spec,
        collapsed,
        expander if collapsed else None,
        rows,
        df.schema,
    )


def _prepared(
    df: DataFrame,
    q: kleene.Query,
    spec: QuerySpec,
    partition_by: Sequence[str] | str | None,
    pushdown: bool,
) -> tuple[DataFrame, KeyRouting | None, list[str]]:
    """The input with stream positions, the seen flags and the key columns (the events
    the query provably ignores dropped in the scan where ``pushdown`` allows it), how
    events are routed by key, and the columns the groups are formed by."""
    columns = spec.columns
    if columns.time_field in df.columns:  # a window's unit needs a known time unit
        q.window_size(datetime=time_scale(df, columns.time_field) != 1.0)
    prepared = pushed_preparation(df, spec) if pushdown else None
    if prepared is None:
        prepared = with_seen(with_positions(df, columns), columns, q.plan.required)
    routing = key_routing(q, partition_by)
    if routing is None:
        return prepared, None, []
    return with_key(prepared, routing, columns), routing, key_columns(routing.width)


def _time_slices(
    df: DataFrame,
    prepared: DataFrame,
    q: kleene.Query,
    columns: EventColumns,
    slice: int | Literal["auto"] | None,
    spark: SparkSession,
    keyed: bool,
) -> tuple[DataFrame, list[float], str]:
    """Cut each partition's time line into slices when asked and the query allows it:
    the rows with their slice column, the cuts, and a note saying why there are none."""
    if slice is None:
        return prepared, [], ""
    blocker = slice_blocker(q)
    if blocker is not None:
        return prepared, [], f"not sliced: {blocker}"
    if columns.time_field not in df.columns:
        return prepared, [], "not sliced: the input has no time column"
    if slice == "auto" and keyed:
        return prepared, [], "not sliced: the partition key already spreads the work (auto)"
    window = q.window_size(datetime=time_scale(df, columns.time_field) != 1.0)
    assert window is not None
    prepared = with_numeric_time(prepared, columns)
    if slice == "auto":
        cuts = boundaries(prepared, 2 * spark.sparkContext.defaultParallelism, 4 * window)
    else:
        cuts = boundaries(prepared, int(slice), window)
    if not cuts:
        return prepared, [], "not sliced: the time span is too short for more than one slice"
    return with_slices(prepared, cuts, window), cuts, ""


def run_groups(
    spark: SparkSession,
    prepared: DataFrame,
    worker: GroupMatcher,
    keyed: bool,
    cuts: Sequence[float],
    order: Sequence[str],
    method: Method,
) -> DataFrame:
    """Step 3 of the pipeline: group, sort into stream order, run ``worker``."""
    group_cols = list(worker.group_columns)
    out_schema = combined_schema(worker.schema)
    parallelism = spark.sparkContext.defaultParallelism
    if method == "map":
        if keyed:
            # several partitions per core: tasks are scheduled as cores free up, so a
            # few large keys do not leave a core idle
            partitions = max(
                int(spark.conf.get("spark.sql.shuffle.partitions") or 1), 4 * parallelism
            )
            shuffled = prepared.repartition(partitions, *group_cols)
        elif cuts:
            shuffled = prepared.repartition(
                len(cuts) + 1, placed_slice_column(spark, len(cuts) + 1)
            )
        else:
            shuffled = prepared.repartition(1)
        shuffled = shuffled.sortWithinPartitions(*group_cols, *order)
        return shuffled.mapInArrow(worker.map_batches, out_schema)
    if not group_cols:
        prepared = prepared.withColumn("kleene__all", F.lit(0))
        group_cols = ["kleene__all"]
    return prepared.groupBy(*group_cols).applyInArrow(_group_function(worker), out_schema)


def _group_function(worker: GroupMatcher) -> Any:
    """A one-argument function (Spark passes the key too when the function takes two)."""

    def apply(table):  # no annotations: Spark infers the UDF kind from them
        return worker.apply_group(table)

    return apply
