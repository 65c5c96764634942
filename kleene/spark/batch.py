"""Batch matching of a Spark DataFrame, for every kind of query: :func:`match`.

The pipeline, end to end:

1. The query's kind (:func:`kleene.kinds.kind_of_text` for text, ``kind_of`` for a
   compiled query) gives its Spark part (:class:`kleene.spark._kind.SparkKind`), which
   decides the groups: before any shuffle, every event gets its input position (and,
   without an id column, its id) — :mod:`kleene.spark._prepare`; then the events are
   grouped by the kind's key (the partition key of a SASE+ query, SIGMOD 2008 section
   3.2; the partitioning attributes of an event-set pattern; TPStream's PARTITION BY)
   and/or by time slice (:mod:`kleene.spark._slicing`), after whatever must run first
   (the admission pass of interval events).
2. Each group is fed, in stream order, to one matcher of the kind in a Python worker
   (:mod:`kleene.spark._worker`), and its matches and rejected events come back as
   Arrow batches in one combined layout (:mod:`kleene.spark._rows`), encoded by the
   kind's rows.

**Why mapInArrow.** Step 2 has two Spark forms: ``repartition(groups)`` +
``sortWithinPartitions(groups, order)`` + ``mapInArrow``, where the worker walks sorted
Arrow batches and starts a new matcher whenever the group changes; and
``groupBy(groups).applyInArrow``, where Spark materialises each whole group as one
table before calling Python. Both shuffle once and sort once. The mapInArrow form
streams: a worker holds one Arrow batch and one matcher at a time, so a group larger
than memory (a query without key and without slicing is a single group) still runs;
applyInArrow holds the whole group. On the measured 10^6-event stock workloads (see
docs/benchmarks_spark.md) mapInArrow was as fast or faster, so it is the default;
``method="group"`` selects the other form (SASE+ queries).

Results: :class:`MatchResult` splits the combined layout with two filters. Reading both
outputs evaluates the pipeline twice unless :meth:`MatchResult.persist` is called.
Results that stand for many matches (``OUTPUT COLLAPSED``, SIGMOD 2014 section 5.2) are
expanded by :meth:`MatchResult.expand`, which runs the matchers again over the same
prepared input.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pyspark import StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from kleene.io.records import match_order, rejected_order
from kleene.io.schema import match_record, rejected_record
from kleene.match import RejectedEvent
from kleene.spark._kind import (
    ONE_GROUP,
    SPARK_DEFAULTS,
    Batch,
    Grouping,
    SparkKind,
    query_spec,
    resolve,
    spark_options,
)
from kleene.spark._query import QuerySpec
from kleene.spark._rows import (
    KIND,
    MATCH_KIND,
    ORDER,
    POSITION,
    REASON,
    RECORD,
    REJECTED_ID,
    SEQ,
    Rows,
    as_combined,
    combined_schema,
    split_output,
)
from kleene.spark._session import use_this_python
from kleene.spark._slicing import placed_slice_column
from kleene.spark._worker import GroupWorker

Method = Literal["map", "group"]


@dataclass(frozen=True)
class Layout:
    """How :func:`match` spread the work (for explanations and tests)."""

    key: tuple[str, ...]  # the names of the key groups are split by; () when not
    cuts: tuple[float, ...]  # time slice boundaries; () when not sliced
    method: str
    note: str = ""  # why the work is not spread as asked
    facts: Mapping[str, Any] = field(default_factory=dict)  # what the kind measured

    @property
    def slices(self) -> int:
        return len(self.cuts) + 1


@dataclass
class MatchResult:
    """Matches and rejected events of :func:`match`, as Spark DataFrames, for every
    kind: ``matches`` in the kind's rows (:mod:`kleene.spark._rows`), ``rejected`` with
    ``id``, ``position``, ``reason`` and ``record``.

    For results that stand for many matches (``OUTPUT COLLAPSED``) :meth:`expand` gives
    the matches they stand for.
    """

    matches: DataFrame
    rejected: DataFrame
    combined: DataFrame
    layout: Layout
    query: QuerySpec = field(repr=False)
    rows: Rows = field(repr=False)
    kind: SparkKind = field(repr=False)
    _expander: Callable[[], DataFrame] | None = field(default=None, repr=False)
    cached: tuple[DataFrame, ...] = field(default=(), repr=False)  # the grouping's own

    @property
    def expandable(self) -> bool:
        return self._expander is not None

    def expand(self) -> DataFrame:
        """The matches of results that stand for many (collapsed results), one row each,
        in the layout of the ``all`` output: exactly ``Query.run`` with ``OUTPUT ALL``.
        Each result is expanded in the worker that built it, so the matchers run again
        (the input preparation is shared). For other queries this is ``matches``."""
        return self.matches if self._expander is None else self._expander()

    def collect(self) -> tuple[list[Any], list[RejectedEvent]]:
        """The matches and the rejected events on the driver, as the kleene objects the
        local engine gives, in its order (the kind's arrival order, or sorted as
        :mod:`kleene.io.records` documents): written with :class:`kleene.io.MatchSink`
        and :class:`kleene.io.RejectedSink` they make the local engine's files. Reads
        the combined output once."""
        rows = self.combined.toArrow().to_pylist()
        if self.kind.arrival_order:
            rows.sort(key=lambda r: (r[ORDER] if r[ORDER] is not None else -1, r[SEQ] or 0))
        found = [self.rows.decode(r) for r in rows if r[KIND] == MATCH_KIND]
        dropped = [_rejected(r) for r in rows if r[KIND] != MATCH_KIND]
        if not self.kind.arrival_order:
            found.sort(key=lambda m: match_order(match_record(m)))
            dropped.sort(key=lambda e: rejected_order(rejected_record(e)))
        return found, dropped

    def persist(self) -> MatchResult:
        """Keep the matcher output (memory, then disk) so that reading both
        ``matches`` and ``rejected`` runs the matchers once."""
        self.combined.persist(StorageLevel.MEMORY_AND_DISK)
        return self

    def unpersist(self) -> MatchResult:
        """Release the matcher output, and what the kind's grouping kept (an interval
        query's admission pass)."""
        self.combined.unpersist()
        for df in self.cached:
            df.unpersist()
        return self


def _rejected(row: Mapping[str, Any]) -> RejectedEvent:
    """A rejected row as the event: an event without an id of its own is known by its
    position."""
    position = row[POSITION]
    rid = row[REJECTED_ID] if row[REJECTED_ID] is not None else position
    text = row[RECORD]
    try:
        record = json.loads(text) if text else {}
    except json.JSONDecodeError:
        record = {"record": text}
    return RejectedEvent(rid, position, row[REASON] or "", record)


def match(
    df: DataFrame,
    query: Any,
    *,
    time_field: str | None = None,
    type_field: str | None = None,
    id_field: str | None = None,
    partition_by: Sequence[str] | str | None = None,
    slice: int | Literal["auto"] | None = None,
    method: Method = "map",
    pushdown: bool = True,
    spark: SparkSession | None = None,
    **compile_options: Any,
) -> MatchResult:
    """Match ``query`` over the events of ``df`` with Spark; see the module docstring.

    ``query`` is query text (its kind read from its tokens, and ``time="interval"`` for
    events with uncertainty intervals) or a compiled query of any kind with a Spark
    part; field names default to the compiled query's, else ``timestamp``, ``type`` and
    ``id``; ``compile_options`` are the kind's compile options (QueryError for another).

    The other options spread the work, for the kinds that take them (QueryError
    otherwise): ``partition_by`` overrides the inferred partition key (the caller
    vouches that no match mixes its values); ``slice`` (an int) splits each partition's
    time line into up to that many slices when the query allows it (WITHIN, and the
    ``all`` output format for SASE+), otherwise one slice is used and
    ``result.layout.note`` says why; ``"auto"`` slices only queries that are not split
    by key, into two slices per core, each at least four windows wide; ``method``
    ("map" or "group", see above); ``pushdown``: for a Parquet scan as read, drop the
    events the query provably ignores in the scan (:mod:`kleene.spark._pushdown`).

    The result equals ``query.run_detailed`` over ``df`` in its order, which is taken as
    the arrival order: the same matches and the same rejected events;
    :meth:`MatchResult.collect` gives them as the local engine's objects.
    """
    given = {"partition_by": partition_by, "slice": slice, "method": method, "pushdown": pushdown}
    if method not in ("map", "group"):
        raise ValueError(f"unknown method {method!r}; expected 'map' or 'group'")
    kind, part = resolve(query, compile_options)
    options = spark_options(kind, part, given)
    spark = spark if spark is not None else df.sparkSession
    use_this_python(spark)
    fields = {"time_field": time_field, "type_field": type_field, "id_field": id_field}
    spec, q = query_spec(kind, part, query, fields, compile_options)
    rows = part.layout(q, df.schema, spec.columns)
    grouping = part.group(Batch(df, q, spec, options, spark))
    run_spec = grouping.spec or spec

    def run(layout: Rows) -> DataFrame:
        worker = GroupWorker(
            run_spec,
            layout,
            grouping.group_columns,
            grouping.cuts,
            grouping.added_id,
            grouping.whole,
            grouping.lateness,
            part.positions,
        )
        out = run_groups(spark, grouping, worker, options.method)
        if grouping.rejected is not None:
            out = out.unionByName(as_combined(grouping.rejected, layout))
        return out

    combined = run(rows)
    matches, rejected = split_output(combined, rows)
    layout = Layout(grouping.key, grouping.cuts, options.method, grouping.note, grouping.facts)
    expanded = part.expansion(q, df.schema, spec.columns)
    expander = None
    if expanded is not None:
        expanding: Rows = expanded

        def expander() -> DataFrame:
            return split_output(run(expanding), expanding)[0]

    return MatchResult(
        matches, rejected, combined, layout, spec, rows, part, expander, grouping.cached
    )


def run_groups(
    spark: SparkSession, grouping: Grouping, worker: GroupWorker, method: str
) -> DataFrame:
    """Step 2 of the pipeline: group, sort into stream order, run ``worker``."""
    group_cols = list(grouping.group_columns)
    out_schema = combined_schema(worker.rows)
    prepared = grouping.prepared
    if method == "map":
        if grouping.keyed:
            # several partitions per core: tasks are scheduled as cores free up, so a
            # few large keys do not leave a core idle
            parallelism = spark.sparkContext.defaultParallelism
            shuffle = int(spark.conf.get("spark.sql.shuffle.partitions") or 1)
            shuffled = prepared.repartition(max(shuffle, 4 * parallelism), *group_cols)
        elif grouping.cuts:
            slices = len(grouping.cuts) + 1
            shuffled = prepared.repartition(slices, placed_slice_column(spark, slices))
        else:
            shuffled = prepared.repartition(1)
        shuffled = shuffled.sortWithinPartitions(*group_cols, *grouping.order)
        return shuffled.mapInArrow(worker.map_batches, out_schema)
    order = grouping.order
    if not group_cols:
        prepared, group_cols = prepared.withColumn(ONE_GROUP, F.lit(0)), [ONE_GROUP]

    def apply(table):  # no annotations: Spark infers the UDF kind from them
        return worker.apply_group(table, order)

    return prepared.groupBy(*group_cols).applyInArrow(apply, out_schema)


__all__ = ["SPARK_DEFAULTS", "Layout", "MatchResult", "match", "run_groups"]
