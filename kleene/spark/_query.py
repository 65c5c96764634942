"""A query as Spark ships it to its Python workers, and the partition key of SASE+ plans.

A compiled query holds generated code and is not meant to be pickled; workers receive a
:class:`QuerySpec` (the kind's query class, the text and the compile options) and
compile it once per process. The class travels as the registry names it
(``"module:attribute"``), or, for a kind registered at run time, as the class itself
(cloudpickle sends a class of an importable module by reference: the worker imports
that module).

A SASE+ plan (also that of a query over interval events) routes its runs by a key
(SIGMOD 2008, section 3.2): ``Plan.key``, the partition of its equivalence tests or a
hash key of equalities where routing changes no result
(:func:`kleene.compiler.analysis.choose_key`). When every negated component is covered
by that key, a match only ever involves events of one key value, and a matcher fed with
one key's events finds exactly that key's matches (:func:`splits_by_key`); an
uncovered negation looks at events of every key, so such a query is not split by key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from kleene.spark._schema import EventColumns

_CACHE: dict[QuerySpec, Any] = {}

#: the compile option that picks a kind by its events' time model; no query class takes it
TIME_OPTION = "time"
FIELD_DEFAULTS = {"time_field": "timestamp", "type_field": "type", "id_field": "id"}


@dataclass(frozen=True)
class QuerySpec:
    """A kind's query class (``"module:attribute"`` or the class), its text and its
    compile options: the picklable form of a compiled query."""

    query_class: Any
    text: str
    options: tuple[tuple[str, Any], ...]

    def compile(self) -> Any:
        """The compiled query (compiled once per process)."""
        q = _CACHE.get(self)
        if q is None:
            cls = self.query_class
            if isinstance(cls, str):
                module, _, name = cls.partition(":")
                cls = getattr(import_module(module), name)
            options = {k: v for k, v in self.options if k != TIME_OPTION}
            q = cls(self.text, **options)
            _CACHE[self] = q
        return q

    def remember(self, q: Any) -> None:
        """Use ``q`` (compiled with exactly these options) for this spec."""
        _CACHE.setdefault(self, q)

    def with_options(self, **options: Any) -> QuerySpec:
        merged = {**dict(self.options), **options}
        return QuerySpec(self.query_class, self.text, tuple(sorted(merged.items())))

    @property
    def columns(self) -> EventColumns:
        opts = {**FIELD_DEFAULTS, **dict(self.options)}
        return EventColumns(opts["time_field"], opts["type_field"], opts["id_field"])


def merged_options(
    base: Mapping[str, Any],
    fields: Mapping[str, str | None],
    options: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """A query's options: ``base``, then the field names given, then ``options``."""
    given = {k: v for k, v in fields.items() if v is not None}
    return {**base, **given, **(options or {})}


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


def key_routing(q: Any, partition_by: Sequence[str] | str | None) -> KeyRouting | None:
    """The key to split a SASE+ plan's input by, or None when the query must see the
    whole stream.

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


def splits_by_key(q: Any) -> bool:
    """Whether a matcher per key value finds exactly the matches of one matcher over all."""
    plan = q.plan
    return plan.key is not None and plan.routed and all(n.keyed for n in plan.negations)
