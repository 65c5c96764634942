"""The Spark row layout of collapsed results (SIGMOD 2014, section 5.2).

With ``OUTPUT COLLAPSED`` the pipeline writes one row per :class:`kleene.CollapsedMatch`
(one intermediate match of postponed evaluation) instead of one row per match:

* ``collapsed_id`` (string): a deterministic digest of the result's events, labels and
  fixed ends;
* ``partition``: the partition key's values, as for match rows (:mod:`._schema`);
* one column per positive variable, in pattern order: a single variable's event id (of
  the id column's type); a Kleene variable's candidates in stream order, as
  ``array<struct<id, label>>`` with label ``SAFE`` or ``UNSAFE``;
* ``first_fixed`` / ``last_fixed`` (array<string>): the Kleene variables whose first /
  last candidate every match takes;
* ``start`` and ``end`` (the time column's type), ``exact`` (boolean: nothing is
  postponed, so every choice of candidates is a match) and ``count`` (long: the number
  of matches the result stands for, :meth:`kleene.CollapsedMatch.count`).

RETURN values belong to single matches; they appear in the expanded rows
(:meth:`kleene.spark.MatchResult.expand`), which have the layout of
:mod:`kleene.spark._schema`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import types as T

from kleene.collapsed import CollapsedMatch
from kleene.compiler.plan import Plan
from kleene.errors import KleeneError
from kleene.io.schema import OutputColumns, collapsed_row
from kleene.match import Match
from kleene.spark._schema import (
    EventColumns,
    MatchSchema,
    Partition,
    partition_tuple,
    partition_type,
    partition_value,
)

if TYPE_CHECKING:
    from kleene.spark._rows import Placement


def candidate_type(id_type: T.DataType) -> T.ArrayType:
    """A Kleene variable's column: its candidates with their SAFE/UNSAFE labels."""
    return T.ArrayType(
        T.StructType([T.StructField("id", id_type), T.StructField("label", T.StringType(), False)]),
        False,
    )


@dataclass(frozen=True)
class CollapsedSchema:
    """The collapsed-row layout of one query over one input schema."""

    variables: tuple[str, ...]  # positive variables in pattern order
    kleene: frozenset[str]  # those that are Kleene variables
    id_type: T.DataType
    time_type: T.DataType
    partition: Partition = ()

    @property
    def columns(self) -> OutputColumns:
        """The column names and row encoding (:mod:`kleene.io.schema`)."""
        return OutputColumns(self.variables, self.kleene, ())

    def struct(self) -> T.StructType:
        labels = T.ArrayType(T.StringType(), False)
        fields = [
            T.StructField("collapsed_id", T.StringType(), False),
            T.StructField("partition", partition_type(self.partition), False),
        ]
        for v in self.variables:
            dtype = candidate_type(self.id_type) if v in self.kleene else self.id_type
            fields.append(T.StructField(v, dtype, False))
        fields += [
            T.StructField("first_fixed", labels, False),
            T.StructField("last_fixed", labels, False),
            T.StructField("start", self.time_type),
            T.StructField("end", self.time_type),
            T.StructField("exact", T.BooleanType(), False),
            T.StructField("count", T.LongType(), False),
        ]
        return T.StructType(fields)

    def row(self, match: Any, at: Placement) -> dict[str, Any]:
        if not isinstance(match, CollapsedMatch):
            raise TypeError("a collapsed layout takes collapsed results")
        row = collapsed_row(self.columns, match)
        row["partition"] = partition_value(self.partition, match.partition)
        return row

    def decode(self, row: Mapping[str, Any]) -> CollapsedMatch:
        """A collapsed match read back (its ``expand()`` raises: it has no events; its
        ``count()`` is the one Spark computed)."""
        collapsed = CollapsedMatch(
            singles={v: row[v] for v in self.variables if v not in self.kleene},
            candidates={
                v: tuple((c["id"], c["label"]) for c in row[v] or ())
                for v in self.variables
                if v in self.kleene
            },
            first_fixed=frozenset(row["first_fixed"] or ()),
            last_fixed=frozenset(row["last_fixed"] or ()),
            start=row["start"],
            end=row["end"],
            partition=partition_tuple(row["partition"]),
            exact=bool(row["exact"]),
            _expand=_no_events,
        )
        return _Counted(collapsed, int(row["count"]))

    def results(self, found: list[Any]) -> list[Any]:
        return found


@dataclass(frozen=True)
class ExpandedSchema(MatchSchema):
    """Match rows of the matches collapsed results stand for: each result is replaced
    by :meth:`kleene.CollapsedMatch.expand` in the worker that built it."""

    def results(self, found: list[Any]) -> list[Any]:
        out: list[Match] = []
        for r in found:
            out.extend(r.expand() if isinstance(r, CollapsedMatch) else (r,))
        return out


class _Counted(CollapsedMatch):
    """A collapsed match read back from Spark, which knows its count but not its events."""

    def __init__(self, c: CollapsedMatch, count: int) -> None:
        fields = {f: getattr(c, f) for f in CollapsedMatch.__dataclass_fields__}
        super().__init__(**fields)
        object.__setattr__(self, "_count", count)

    def count(self) -> int:
        return int(self._count)  # type: ignore[attr-defined]


def _no_events() -> list[Match]:
    raise KleeneError(
        "a collapsed result read back from Spark has no events to expand: "
        "use kleene.spark.MatchResult.expand()"
    )


def build_collapsed_schema(
    plan: Plan,
    schema: T.StructType,
    columns: EventColumns,
    partition: Partition = (),
) -> CollapsedSchema:
    """The collapsed-row layout for ``plan``; QueryError when a variable is named like
    one of the fixed columns."""
    variables = plan.positive_vars
    by_name = {f.name: f.dataType for f in schema.fields}
    id_type = by_name.get(columns.id_field, T.LongType())
    time_type = by_name.get(columns.time_field, T.DoubleType())
    cs = CollapsedSchema(variables, plan.kleene_vars, id_type, time_type, partition)
    cs.columns.check_collapsed()
    return cs
