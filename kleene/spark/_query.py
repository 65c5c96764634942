"""A query as Spark ships it to its Python workers, and what Spark may do with it.

A compiled :class:`kleene.Query` holds generated code and is not meant to be pickled;
workers receive a :class:`QuerySpec` (the text and the compile options) and compile it
once per process.

Two facts decide how the work can be spread (SIGMOD 2008, section 3.2, partitions;
section 2, output formats):

* **by key** — when the query's runs are routed by a key (``Plan.key``: the partition
  of its equivalence tests, or a hash key of equalities where routing changes no
  result, see :func:`kleene.compiler.analysis.choose_key`) and every negated component
  is covered by that key, a match only ever involves events of one key value, and a
  matcher fed with one key's events finds exactly that key's matches. An uncovered
  negation looks at events of every key, so such a query is not split by key.
* **by time** — see :mod:`kleene.spark._slicing`: needs a WITHIN window and an output
  format other than non-overlap.

Collapsed output (SIGMOD 2014, section 5.2) follows both rules unchanged: it exists only
for patterns without negation, and a collapsed result is one main run of postponed
evaluation, which begins at its first event, takes only events of its partition and
ends within W of its start, exactly like a match.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import kleene
from kleene.errors import QueryError
from kleene.imprecise import IntervalQuery
from kleene.spark._schema import EventColumns
from kleene.vocabulary import OutputFormat

_CACHE: dict[QuerySpec, kleene.Query] = {}


@dataclass(frozen=True)
class QuerySpec:
    """Query text plus compile options: the picklable form of a compiled query."""

    text: str
    options: tuple[tuple[str, Any], ...]

    def compile(self) -> kleene.Query:
        """The compiled query (compiled once per process)."""
        q = _CACHE.get(self)
        if q is None:
            q = kleene.compile(self.text, **dict(self.options))
            _CACHE[self] = q
        return q

    @property
    def columns(self) -> EventColumns:
        opts = dict(self.options)
        return EventColumns(opts["time_field"], opts["type_field"], opts["id_field"])


def resolve_query(
    query: str | kleene.Query,
    time_field: str | None = None,
    type_field: str | None = None,
    id_field: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> tuple[QuerySpec, kleene.Query]:
    """The spec and compiled query for ``query`` (text or compiled).

    Field names default to the compiled query's, else to ``timestamp``, ``type``, ``id``;
    a compiled query given with other field names or options is compiled again with them.
    """
    if isinstance(query, kleene.Program):
        raise QueryError(
            "a program (DEFINE or UNION) runs on the local engine: use Program.run or "
            "Program.matcher; Spark takes single queries"
        )
    if isinstance(query, kleene.Query):
        fields = query.fields
        base: dict[str, Any] = {
            "strategy": query.strategy.value,
            "output": query.output.value,
            "time_field": fields.time_field,
            "type_field": fields.type_field,
            "id_field": fields.id_field,
            "allowed_lateness": query.config.allowed_lateness,
            "max_runs": query.config.max_runs,
            "time_unit": query.config.time_unit,
            "match_windows": query.plan.match_windows,
        }
        text = query.text
    else:
        base = {"time_field": "timestamp", "type_field": "type", "id_field": "id"}
        text = query
    merged = merged_options(base, time_field, type_field, id_field, options)
    spec = QuerySpec(text, tuple(sorted(merged.items())))
    if isinstance(query, kleene.Query) and merged == base:
        _CACHE.setdefault(spec, query)
    return spec, spec.compile()


def merged_options(
    base: Mapping[str, Any],
    time_field: str | None,
    type_field: str | None,
    id_field: str | None,
    options: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A query's options: ``base``, then the field names given, then ``options``."""
    given = {"time_field": time_field, "type_field": type_field, "id_field": id_field}
    return {**base, **{k: v for k, v in given.items() if v is not None}, **(options or {})}


@dataclass(frozen=True)
class KeyRouting:
    """How to read the partition key of an event: per event type, else ``common``.

    ``attrs_by_type[t][i]`` is the attribute holding key component i for events of type
    t; events of other types use ``common[i]`` (or have no key when ``common`` is empty).
    """

    names: tuple[str, ...]
    attrs_by_type: Mapping[str, tuple[str, ...]]
    common: tuple[str, ...]

    @property
    def width(self) -> int:
        return len(self.names)


def key_routing(
    q: kleene.Query | IntervalQuery, partition_by: Sequence[str] | str | None
) -> KeyRouting | None:
    """The key to split the input by, or None when the query must see the whole stream.

    ``partition_by`` (column names) overrides the inferred key; the caller then vouches
    that no match combines events of different values of those columns.
    """
    if partition_by is not None:
        cols = (partition_by,) if isinstance(partition_by, str) else tuple(partition_by)
        return KeyRouting(cols, {}, cols) if cols else None
    plan = q.plan
    if not splits_by_key(q):
        return None
    assert plan.key is not None
    return KeyRouting(plan.key.names, dict(plan.key.by_type), tuple(plan.key.common))


def splits_by_key(q: kleene.Query | IntervalQuery) -> bool:
    """Whether a matcher per key value finds exactly the matches of one matcher over all."""
    plan = q.plan
    return plan.key is not None and plan.routed and all(n.keyed for n in plan.negations)


def slice_blocker(q: kleene.Query) -> str | None:
    """Why the query cannot be split by time, or None when it can."""
    if q.window is None:
        return "the query has no WITHIN window, so a match may span any stretch of time"
    if q.output is OutputFormat.NON_OVERLAP:
        return (
            "the non-overlap output picks matches in one sequential pass per partition, "
            "so whether a match is kept depends on every earlier match"
        )
    return None
