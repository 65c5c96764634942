"""What a kind of query supplies to Spark: :class:`SparkKind`, the ``spark`` part of its
entry in :mod:`kleene.kinds`.

The pipelines are the same for every kind (:mod:`kleene.spark.batch`,
:mod:`kleene.spark.streaming`): one group worker and one stateful processor drive the
kind's matcher through the contract of :mod:`kleene.runtime.contract` (``push``,
``advance_to``, ``flush``, ``take_rejected``, ``snapshot``, restored by
``query.matcher(state=..., on_matches=...)``). A kind supplies only what is its own:

* its **rows**: the output schema and row encoder of its matches (:meth:`layout`; by
  default the columns every match has: ids, ``start``, ``end``, ``partition``, RETURN
  values as text), and, for results that stand for many matches, their expansion;
* its **options**: the compile options of a compiled query (:meth:`options_of`) and the
  Spark options it takes (:attr:`spark_options`);
* its **grouping** (:meth:`group`): which events one matcher sees (by default the
  events of one value of the query's partition attributes, in input order) and what
  runs before the matchers (an admission pass, time slices);
* its **stream** settings: event time behind a watermark, or each micro-batch as it
  comes (:attr:`watermark`), and how long a key's matcher must live (:meth:`reach`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kleene import kinds
from kleene.errors import QueryError
from kleene.spark._prepare import POS, with_positions
from kleene.spark._query import TIME_OPTION, QuerySpec, merged_options
from kleene.spark._rows import Rows
from kleene.spark._schema import EventColumns, generic_schema

ONE_GROUP = "kleene__all"
#: the options of kleene.spark.match that are not compile options, with their defaults
SPARK_DEFAULTS: dict[str, Any] = {
    "partition_by": None,
    "slice": None,
    "method": "map",
    "pushdown": True,
}


@dataclass(frozen=True)
class SparkOptions:
    """How :func:`kleene.spark.match` may spread the work (the kinds that take them)."""

    partition_by: Sequence[str] | str | None = None
    slice: int | Literal["auto"] | None = None
    method: str = "map"
    pushdown: bool = True


@dataclass(frozen=True)
class Batch:
    """What a kind groups for its matchers (:meth:`SparkKind.group`): the input, the
    compiled query and its spec, the options of the call and the session."""

    df: DataFrame
    query: Any
    spec: QuerySpec
    options: SparkOptions
    spark: SparkSession


@dataclass
class Grouping:
    """Which events each matcher of a batch sees (:meth:`SparkKind.group`)."""

    #: the events, with ``kleene__pos`` and the group columns
    prepared: DataFrame
    #: the columns whose values form one group (key columns, then the slice column)
    group_columns: tuple[str, ...]
    #: the order a group's events are fed in
    order: tuple[str, ...]
    #: many groups, spread over the shuffle partitions (else one partition, or one per
    #: time slice)
    keyed: bool = False
    #: time slice boundaries; () when not sliced (:mod:`kleene.spark._slicing`)
    cuts: tuple[float, ...] = ()
    #: the names of the key the events are split by (Layout.key)
    key: tuple[str, ...] = ()
    #: why the work is not spread as asked
    note: str = ""
    #: the spec the workers run, when it is not the query's own
    spec: QuerySpec | None = None
    #: events rejected before any matcher (id, position, reason, record)
    rejected: DataFrame | None = None
    #: match each group at once, by its matcher's ``run``, when its last row is read
    whole: bool = False
    #: reject events behind ``kleene__seen`` with this allowed lateness (when present)
    lateness: float = 0
    #: the id column was added from positions (the input has none)
    added_id: bool = False
    #: what the kind measured or decided (an interval query's ``u_max``)
    facts: dict[str, Any] = field(default_factory=dict)
    #: DataFrames the grouping persisted (``MatchResult.unpersist`` releases them)
    cached: tuple[DataFrame, ...] = ()


class SparkKind:
    """The Spark part of a kind; the defaults serve a kind that has nothing more to say
    than the contract of :class:`kleene.runtime.contract.CompiledQuery`."""

    #: the options of :func:`kleene.spark.match` beyond compile options that it takes
    spark_options: frozenset[str] = frozenset()
    #: in a stream, feed events in event-time order behind a watermark and advance the
    #: matchers to it (True), or push each micro-batch of a key as it comes (False)
    watermark: bool = True
    #: ``MatchResult.collect``: matches in the order the matchers reported them (True),
    #: or sorted as :mod:`kleene.io.records` documents
    arrival_order: bool = True
    #: the matcher counts its events (rejected events' positions, a match's own): the
    #: worker maps those counts to input positions
    positions: bool = False

    # --- the query ----------------------------------------------------------------------

    def options_of(self, query: Any) -> dict[str, Any]:
        """The compile options of a compiled query, for its workers to compile it again."""
        return dict(getattr(query, "options", {}))

    def layout(self, q: Any, schema: T.StructType, columns: EventColumns) -> Rows:
        """The match rows of ``q`` over input rows of ``schema``."""
        return generic_schema(q, schema, columns)

    def expansion(self, q: Any, schema: T.StructType, columns: EventColumns) -> Rows | None:
        """For results that stand for many matches, the rows of those matches."""
        return None

    # --- batches ------------------------------------------------------------------------

    def group(self, batch: Batch) -> Grouping:
        """The events of one value of the query's partition attributes per matcher (all
        events in one group without them, or when the input lacks one), in input order,
        with their ids as read."""
        df, q, spec = batch.df, batch.query, batch.spec
        prepared = with_positions(df, spec.columns, ids=False)
        keys = tuple(q.partition_attributes)
        if not keys or not set(keys) <= set(df.columns):
            return Grouping(prepared.withColumn(ONE_GROUP, F.lit(0)), (ONE_GROUP,), (POS,))
        return Grouping(prepared, keys, (POS,), keyed=True, key=keys)

    # --- streams ------------------------------------------------------------------------

    def check_stream(self, q: Any, events: DataFrame, columns: EventColumns) -> None:
        """QueryError (or EventError) for a stream this kind cannot match."""

    def stream_groups(
        self, events: DataFrame, q: Any, spec: QuerySpec, partition_by: Any
    ) -> tuple[DataFrame, list[str]]:
        """The stream ready to group per key, and the key columns."""
        keys = list(q.partition_attributes)
        if not keys or not set(keys) <= set(events.columns):
            return events.withColumn(ONE_GROUP, F.lit(0)), [ONE_GROUP]
        return events, keys

    def reach(self, q: Any, datetime_time: bool) -> tuple[float | None, bool]:
        """How long after its latest event a key's matcher may still report (in
        microseconds; None: no bound), and whether the key may then be forgotten."""
        return None, False

    def stream_order(self, q: Any, columns: EventColumns, time_column: str) -> list[str]:
        """The columns a micro-batch of a key is sorted by (``watermark`` False); the
        time is read from ``time_column``."""
        return [time_column, columns.id_field]


# --- from a query to its kind ------------------------------------------------------------


def resolve(query: Any, options: Mapping[str, Any]) -> tuple[kinds.Kind, SparkKind]:
    """The kind of ``query`` (text, read with ``options["time"]``, or a compiled query)
    and its Spark part; QueryError for a kind without one."""
    if isinstance(query, str):
        kind = kinds.kind_of_text(query, time=options.get(TIME_OPTION, "point"))
    else:
        found = kinds.kind_of(query)
        if found is None:
            raise QueryError(
                f"kleene.spark matches a query, as text or compiled, not a {type(query).__name__}"
            )
        kind = found
    part = kind.spark_part
    if part is None:
        raise QueryError(
            f"{article(kind.title)} runs on the local engine: its kind has no Spark part "
            "(use its run() or matcher())"
        )
    if not isinstance(part, SparkKind):
        raise QueryError(f"the Spark part of the {kind.title} kind is not a SparkKind: {part!r}")
    return kind, part


def query_spec(
    kind: kinds.Kind,
    part: SparkKind,
    query: Any,
    fields: Mapping[str, str | None],
    options: Mapping[str, Any],
) -> tuple[QuerySpec, Any]:
    """The spec workers compile, and the compiled query: a compiled query's own options
    (:meth:`SparkKind.options_of`), overridden by the field names and options given;
    QueryError for an option the kind does not take."""
    if isinstance(query, str):
        base: dict[str, Any] = {}
        text = query
    else:
        base = part.options_of(query)
        text = query.text
    merged = merged_options(base, fields, options)
    kinds.check_options(kind, {k: v for k, v in merged.items() if k != TIME_OPTION})
    spec = QuerySpec(kind.query, text, tuple(sorted(merged.items())))
    if not isinstance(query, str) and merged == base:
        spec.remember(query)
    return spec, spec.compile()


def spark_options(kind: kinds.Kind, part: SparkKind, given: Mapping[str, Any]) -> SparkOptions:
    """The Spark options given; QueryError for one the kind does not take."""
    for name, value in given.items():
        if name not in part.spark_options and value != SPARK_DEFAULTS[name]:
            raise QueryError(
                f"{name} does not apply to {article(kind.title)} on Spark "
                f"({_takes(part)}); leave it out"
            )
    return SparkOptions(**given)


def _takes(part: SparkKind) -> str:
    if not part.spark_options:
        return "it takes none of " + ", ".join(SPARK_DEFAULTS)
    return "it takes " + ", ".join(sorted(part.spark_options))


def article(title: str) -> str:
    """``title`` after its indefinite article ("an event-set pattern")."""
    return f"{'an' if title[:1].lower() in 'aeiou' else 'a'} {title}"
