"""Event-set (SES) patterns on Spark (the match-window paper).

* **Grouping.** Match windows are computed per partition key (section 4.4): the key is
  the pattern's partitioning attributes X of Definition 6, on which the equality
  relationships relate every pair of variables. All events of a match agree on X (and
  none has a null there), so the events are grouped by their values of X and each group
  is fed in stream order (time, input position) to one SES matcher: no match is lost
  (its events share one group) and none is found twice (an event is in one group
  only). Events with a null in X form groups of their own and match nothing, as in the
  local engine; they are still admitted or rejected alike. Without partitioning
  attributes the whole input is one group. (Time slices overlapping by τ would also
  lose nothing, but a match found in two slices would then have to be kept by one of
  them only; one group keeps the matcher's output as it is.)
* As for SASE+, the input order is the arrival order: an event behind ``kleene__seen``
  is rejected as late exactly as :meth:`kleene.eventsets.matcher.SesMatcher.push`
  rejects it (no lateness is allowed).
* Each group is matched at once, when its last row has been read, by the matcher's
  ``run`` (the pre-processing computed over the whole group column-wise,
  :mod:`kleene.eventsets.batch`): the matches and rejections of pushing its rows and
  flushing, at a fraction of the cost.
* **Streams** run behind a watermark, per key of the partitioning attributes: advancing
  a matcher to the watermark completes every match window whose end (first event + τ)
  it has passed, so a match leaves in the micro-batch whose watermark closes its
  window, and a key is forgotten once all its windows closed.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kleene.eventsets.partitioning import partition_attributes
from kleene.spark._kind import ONE_GROUP, Batch, Grouping, SparkKind
from kleene.spark._prepare import POS, with_positions, with_seen
from kleene.spark._query import QuerySpec
from kleene.spark._rows import Rows
from kleene.spark._schema import EventColumns, MatchSchema


class EventSetSpark(SparkKind):
    """The Spark part of event-set patterns (:class:`kleene.eventsets.query.SesQuery`)."""

    arrival_order = False

    def options_of(self, query: Any) -> dict[str, Any]:
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

    def layout(self, q: Any, schema: T.StructType, columns: EventColumns) -> Rows:
        """Its variables' ids, start and end; nothing returned, no partition output."""
        by_name = {f.name: f.dataType for f in schema.fields}
        return MatchSchema(
            q.variables,
            (),
            by_name.get(columns.id_field, T.LongType()),
            by_name.get(columns.time_field, T.DoubleType()),
            (),
        )

    def group(self, batch: Batch) -> Grouping:
        df, q, columns = batch.df, batch.query, batch.spec.columns
        prepared = with_seen(with_positions(df, columns), columns, q.needs.required)
        prepared, groups = _grouped(prepared, q, df.columns)
        key = tuple(partition_attributes(q.pattern))
        order = (columns.time_field, POS) if columns.time_field in df.columns else (POS,)
        return Grouping(
            prepared,
            tuple(groups),
            order,
            keyed=groups != [ONE_GROUP],
            key=key,
            note="" if key else "one group: no partitioning attribute",
            whole=True,  # each group by its matcher's run(): the pre-processing column-wise
            added_id=columns.id_field not in df.columns,
        )

    def check_stream(self, q: Any, events: DataFrame, columns: EventColumns) -> None:
        """EventError now for a WITHIN unit over numeric times without ``time_unit``."""
        dtype = events.schema[columns.time_field].dataType
        q.pattern_for(isinstance(dtype, T.TimestampType | T.TimestampNTZType))

    def stream_groups(
        self, events: DataFrame, q: Any, spec: QuerySpec, partition_by: Any
    ) -> tuple[DataFrame, list[str]]:
        grouped, groups = _grouped(events, q, events.columns)
        return grouped, list(groups)

    def reach(self, q: Any, datetime_time: bool) -> tuple[float | None, bool]:
        """τ in microseconds (numeric times count as seconds in the stream's clock, as
        the watermark reads them); a key is forgotten once all its windows closed."""
        window = float(q.pattern_for(datetime_time).window)
        return (window if datetime_time else window * 1e6), True


def _grouped(df: DataFrame, q: Any, columns: list[str]) -> tuple[DataFrame, list[str]]:
    """``df`` and the columns to group it by: the partitioning attributes of Definition 6
    among the input's ``columns`` (a missing one is null: no match), else one constant
    group column added to ``df``."""
    groups = [a for a in partition_attributes(q.pattern) if a in columns]
    if not groups:
        return df.withColumn(ONE_GROUP, F.lit(0)), [ONE_GROUP]
    return df, groups


EVENTSETS = EventSetSpark()
