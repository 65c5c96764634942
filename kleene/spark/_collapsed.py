"""The Spark row layout of collapsed results (SIGMOD 2014, section 5.2).

With ``OUTPUT COLLAPSED`` the pipeline writes one row per :class:`kleene.CollapsedMatch`
(one intermediate match of postponed evaluation) instead of one row per match:

* ``collapsed_id`` (string): a deterministic digest of the result's events, labels and
  fixed ends;
* ``partition`` (array<string>): the partition key values as text, as for match rows;
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

from dataclasses import dataclass

from pyspark.sql import types as T

from kleene.compiler.plan import Plan
from kleene.io.schema import OutputColumns
from kleene.spark._schema import EventColumns


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

    @property
    def columns(self) -> OutputColumns:
        """The column names and row encoding (:mod:`kleene.io.schema`)."""
        return OutputColumns(self.variables, self.kleene, ())

    def struct(self) -> T.StructType:
        labels = T.ArrayType(T.StringType(), False)
        fields = [
            T.StructField("collapsed_id", T.StringType(), False),
            T.StructField("partition", T.ArrayType(T.StringType()), False),
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


def build_collapsed_schema(
    plan: Plan,
    schema: T.StructType,
    columns: EventColumns,
) -> CollapsedSchema:
    """The collapsed-row layout for ``plan``; QueryError when a variable is named like
    one of the fixed columns."""
    variables = plan.positive_vars
    by_name = {f.name: f.dataType for f in schema.fields}
    id_type = by_name.get(columns.id_field, T.LongType())
    time_type = by_name.get(columns.time_field, T.DoubleType())
    cs = CollapsedSchema(variables, plan.kleene_vars, id_type, time_type)
    cs.columns.check_collapsed()
    return cs
