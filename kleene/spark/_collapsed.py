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

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql import types as T

from kleene.collapsed import CollapsedMatch
from kleene.compiler.plan import Plan
from kleene.errors import QueryError
from kleene.spark._schema import EventColumns

COLLAPSED_COLUMNS = (
    "collapsed_id",
    "partition",
    "first_fixed",
    "last_fixed",
    "start",
    "end",
    "exact",
    "count",
)


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
    clash = sorted(set(variables) & set(COLLAPSED_COLUMNS))
    if clash:
        raise QueryError(
            f"variable {clash[0]!r} clashes with a collapsed output column; rename it "
            f"({', '.join(COLLAPSED_COLUMNS)} are reserved)"
        )
    by_name = {f.name: f.dataType for f in schema.fields}
    id_type = by_name.get(columns.id_field, T.LongType())
    time_type = by_name.get(columns.time_field, T.DoubleType())
    return CollapsedSchema(variables, plan.kleene_vars, id_type, time_type)


def collapsed_id(c: CollapsedMatch, plain: Any) -> str:
    """A deterministic digest of a collapsed result: its events, labels and fixed ends."""
    body = [
        sorted((v, plain(i)) for v, i in c.singles.items()),
        sorted((v, [[plain(i), lab] for i, lab in cs]) for v, cs in c.candidates.items()),
        sorted(c.first_fixed),
        sorted(c.last_fixed),
    ]
    text = json.dumps(body, default=str, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def collapsed_row(
    cs: CollapsedSchema, c: CollapsedMatch, plain: Any, partition: Sequence[Any]
) -> dict[str, Any]:
    """One collapsed row; ``plain`` turns numpy/pandas scalars into Python values and
    ``partition`` is the key as text."""
    row: dict[str, Any] = {
        "collapsed_id": collapsed_id(c, plain),
        "partition": list(partition),
        "first_fixed": sorted(c.first_fixed),
        "last_fixed": sorted(c.last_fixed),
        "start": plain(c.start),
        "end": plain(c.end),
        "exact": bool(c.exact),
        "count": c.count(),
    }
    for var in cs.variables:
        if var in cs.kleene:
            row[var] = [{"id": plain(i), "label": lab} for i, lab in c.candidates.get(var, ())]
        else:
            row[var] = plain(c.singles.get(var))
    return row
