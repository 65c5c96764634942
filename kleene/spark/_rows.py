"""The rows matchers' output leaves Spark's Python workers as: one combined layout.

A kind's match rows are described by a :class:`Rows` object (its Spark schema, its row
encoder and the way back to its match objects: :mod:`kleene.spark._schema` for matches
with ids, :mod:`kleene.spark._collapsed`, the kinds' own modules for the others). The
worker emits matches and rejected events in one *combined* layout: a kind column
(``match`` or ``rejected``), the order columns (:data:`ORDER`: the input position of
the event whose arrival reported the row; :data:`SEQ`: the row's rank among those), the
match columns, then the rejected-event columns (``id``, ``position``, ``reason``,
``record``). One layout lets a single Spark operator emit both kinds of rows; the
caller splits them with two filters (:func:`split_output`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

import pandas as pd
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import to_arrow_schema

from kleene.io.schema import plain, record_json
from kleene.match import RejectedEvent

KIND = "kleene__kind"
ORDER = "kleene__order"
SEQ = "kleene__seq"
REJECTED_ID = "kleene__rejected_id"
POSITION = "kleene__position"
REASON = "kleene__reason"
RECORD = "kleene__record"
MATCH_KIND = "match"
REJECTED_KIND = "rejected"
#: the rejected rows' columns, under their names in the combined layout
REJECTED = {"id": REJECTED_ID, "position": POSITION, "reason": REASON, "record": RECORD}


class Placement(Protocol):
    """Where a group's events sit in the input (:mod:`kleene.spark._worker`)."""

    def position(self, index: int) -> int:
        """The input position of the group's ``index``-th event (as its matcher counts)."""
        ...

    def arrival(self, time: Any) -> int | None:
        """The input position of the group's first admitted event at ``time``."""
        ...


class Rows(Protocol):
    """The match rows of one kind's query over one input schema."""

    @property
    def id_type(self) -> T.DataType:
        """The type of the input's id column (rejected events' ids)."""
        ...

    def struct(self) -> T.StructType:
        """The match columns."""
        ...

    def row(self, match: Any, at: Placement) -> dict[str, Any]:
        """The row of one match (a value per column of :meth:`struct`; it may also set
        :data:`ORDER`)."""
        ...

    def decode(self, row: Mapping[str, Any]) -> Any:
        """The kind's match object of one row, as the local engine gives it."""
        ...

    def results(self, found: list[Any]) -> list[Any]:
        """What the matcher's results become before they are encoded."""
        ...


def combined_schema(rows: Rows) -> T.StructType:
    """Match and rejected rows in one schema; every column is nullable."""
    fields = [T.StructField(KIND, T.StringType())]
    fields += [T.StructField(n, T.LongType()) for n in (ORDER, SEQ)]
    fields += [T.StructField(f.name, f.dataType, True) for f in rows.struct().fields]
    fields += [
        T.StructField(REJECTED_ID, rows.id_type),
        T.StructField(POSITION, T.LongType()),
        T.StructField(REASON, T.StringType()),
        T.StructField(RECORD, T.StringType()),
    ]
    return T.StructType(fields)


def split_output(combined: DataFrame, rows: Rows) -> tuple[DataFrame, DataFrame]:
    """The match rows and the rejected rows of the combined layout."""
    matches = combined.where(F.col(KIND) == MATCH_KIND).select(
        *[F.col(f"`{f.name}`") for f in rows.struct().fields]
    )
    rejected = combined.where(F.col(KIND) == REJECTED_KIND).select(
        *[F.col(column).alias(name) for name, column in REJECTED.items()]
    )
    return matches, rejected


def as_combined(rejected: DataFrame, rows: Rows) -> DataFrame:
    """Rejected rows (``id``, ``position``, ``reason``, ``record``) in the combined
    layout, to be united with a worker's output."""
    schema = combined_schema(rows)
    given = {column: F.col(name) for name, column in REJECTED.items()}
    given[KIND] = F.lit(REJECTED_KIND)
    given[ORDER] = F.col("position")
    return rejected.select(
        *[given.get(f.name, F.lit(None)).cast(f.dataType).alias(f.name) for f in schema.fields]
    )


def rejected_row(event: RejectedEvent, own_id: bool = True) -> dict[str, Any]:
    """The combined-layout columns of one rejected event; ``own_id`` false: it had no
    usable id of its own and is known by its position (the id column stays null)."""
    return {
        KIND: REJECTED_KIND,
        ORDER: event.position,
        REJECTED_ID: plain(event.id) if own_id else None,
        POSITION: event.position,
        REASON: event.reason,
        RECORD: record_json(event.record),
    }


class RowEncoder:
    """Builds combined-layout batches from encoded rows."""

    def __init__(self, rows: Rows) -> None:
        self.rows = rows
        self.spark_schema = combined_schema(rows)
        self.arrow_schema = to_arrow_schema(self.spark_schema, timezone="UTC")

    def to_arrow(self, rows: Sequence[Mapping[str, Any]]) -> pa.RecordBatch:
        arrays = [arrow_array([r.get(f.name) for r in rows], f.type) for f in self.arrow_schema]
        return pa.RecordBatch.from_arrays(arrays, schema=self.arrow_schema)

    def to_pandas(self, rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
        return self.to_arrow(rows).to_pandas()


def arrow_array(values: Iterable[Any], arrow_type: pa.DataType) -> pa.Array:
    values = list(values)
    try:
        return pa.array(values, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
        return pa.array([_coerce(v, arrow_type) for v in values], type=arrow_type)


def _coerce(value: Any, arrow_type: pa.DataType) -> Any:
    """A value converted to the Python kind the Arrow type holds (None when impossible)."""
    if value is None:
        return None
    try:
        if pa.types.is_struct(arrow_type) and isinstance(value, Mapping):
            fields = [arrow_type.field(i) for i in range(arrow_type.num_fields)]
            return {f.name: _coerce(value.get(f.name), f.type) for f in fields}
        if pa.types.is_integer(arrow_type):
            as_float = float(value)
            return int(as_float) if as_float.is_integer() else None
        if pa.types.is_floating(arrow_type):
            return float(value)
        if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
            return str(value)
        if pa.types.is_boolean(arrow_type):
            return bool(value)
        pa.scalar(value, type=arrow_type)  # kept when it converts as it is
        return value
    except (TypeError, ValueError, OverflowError, pa.ArrowInvalid, pa.ArrowTypeError):
        return None


class Identity:
    """The placement of a stream's events: positions are the matcher's own, and no
    arrival is known."""

    def position(self, index: int) -> int:
        return index

    def arrival(self, time: Any) -> int | None:
        return None


class Encoding:
    """Matches and rejected events of one group (or one stream key) as combined-layout
    rows, the matches numbered in :data:`SEQ` as they come.

    A rejected event with a position (a kind whose matcher counts its events) is placed
    at its input position; it keeps its id only when that is the id it had in the input
    (else its position stands for it and the id column stays null), as the local engine
    reports it. ``hidden_id`` names an id column kleene added (from positions): it is
    left out of the rejected events' records.
    """

    def __init__(self, rows: Rows, id_field: str, hidden_id: str | None = None) -> None:
        self.rows = rows
        self.id_field = id_field
        self.hidden_id = hidden_id
        self.seq = 0

    def __call__(
        self,
        found: Iterable[Any],
        rejected: Iterable[RejectedEvent],
        at: Placement,
        last: int | None = None,
    ) -> list[dict[str, Any]]:
        """The rows; ``last`` is the input position of the latest event fed (the
        default :data:`ORDER`)."""
        out: list[dict[str, Any]] = []
        for m in found:
            row = self.rows.row(m, at)
            row[KIND] = MATCH_KIND
            row[SEQ] = self.seq
            if row.get(ORDER) is None:
                row[ORDER] = last
            self.seq += 1
            out.append(row)
        for r in rejected:
            row = self.rejected(r, at)
            if row[ORDER] is None:
                row[ORDER] = last
            out.append(row)
        return out

    def rejected(self, r: RejectedEvent, at: Placement) -> dict[str, Any]:
        return placed_rejected(r, at, self.id_field, self.hidden_id)


def placed_rejected(
    r: RejectedEvent, at: Placement, id_field: str, hidden_id: str | None = None
) -> dict[str, Any]:
    """The combined-layout columns of a rejected event placed in the input (see
    :class:`Encoding`)."""
    record = dict(r.record)
    if r.position is None:
        own, position = True, None
    else:
        position = at.position(r.position)
        raw = record.get(id_field)
        own = raw is not None and r.id == raw
    if hidden_id is not None:
        record.pop(hidden_id, None)
    rid = r.id if own else position
    return rejected_row(RejectedEvent(rid, position, r.reason, record), own)
