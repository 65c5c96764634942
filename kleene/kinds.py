"""The kinds of query kleene runs, each registered once.

kleene is one engine over five papers' systems. Each kind of query is one package plus
one :class:`Kind` entry in this registry (as a sqlglot dialect is one class its
metaclass registers): what its text looks like, its compiled query class (whose keyword
parameters are its options), its snapshot tag, its command-line part and its Spark part.
:func:`kleene.compile`, the command line, ``kleene explain`` and :mod:`kleene.spark`
ask this registry only, so a new kind is one package plus one :func:`register` call.

A text's kind is read from its tokens (:mod:`kleene.lang._lead`: comments and strings
never count), then from the events' time model (``time="interval"``). The parts are
named ``"module:attribute"`` and imported when first used, so this module imports no
kind's package and none of pyspark.

Built in, in the order they are tried:

========== ================================ =================================
kind       its text                         its query class
========== ================================ =================================
tpstream   first word FROM                  kleene.tpstream.query.TemporalQuery
eventset   a set ``{...}`` in PATTERN        kleene.eventsets.query.SesQuery
program    first word DEFINE, or UNION      kleene.program.Program
sase       any other (``time="point"``)     kleene.query.Query
interval   any SASE+ text (``time="interval"``) kleene.imprecise.query.IntervalQuery
========== ================================ =================================
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from importlib import import_module
from typing import Any

from kleene.errors import QueryError
from kleene.lang._lead import Lead

#: a part of a kind: the object itself, or "module:attribute" imported on first use
Part = Any


@dataclass(frozen=True)
class Kind:
    """One kind of query: everything the shared layers need to know of it."""

    name: str
    #: how messages name one such query ("TPStream query")
    title: str
    #: the compiled query class; ``query(text, **options)`` compiles a text
    query: Part
    #: the values of ``kleene.compile(time=...)`` this kind serves
    times: tuple[str, ...] = ("point",)
    #: whether a text is of this kind, from its tokens; None: the kind its time model
    #: falls back to when no other kind recognises the text
    recognises: Callable[[Lead], bool] | None = None
    #: the snapshot tag of its matchers' state (:mod:`kleene.runtime.snapshot`)
    snapshot_tag: bytes = b""
    #: the command-line part (:class:`kleene.cli.CliPart`; None: its defaults)
    cli: Part = None
    #: the Spark part (:mod:`kleene.spark`)
    spark: Part = None
    #: keyword parameters of the query class that are not user options
    internal: frozenset[str] = field(default=frozenset({"node"}))

    def load(self, part: Part) -> Any:
        """A part itself, importing it when it is named as "module:attribute"."""
        if isinstance(part, str):
            module, _, attribute = part.partition(":")
            return getattr(import_module(module), attribute)
        return part

    @property
    def a_title(self) -> str:
        """The title with its article: "a TPStream query", "an event-set pattern"."""
        return ("an " if self.title[:1].lower() in "aeiou" else "a ") + self.title

    @property
    def query_class(self) -> type:
        cls = self.load(self.query)
        assert isinstance(cls, type)
        return cls

    @property
    def cli_part(self) -> Any:
        return self.load(self.cli)

    @property
    def spark_part(self) -> Any:
        return self.load(self.spark)

    def options(self) -> tuple[str, ...]:
        """The compile options: the query class's ``OPTIONS`` when it declares them,
        else the keyword-only parameters of its constructor."""
        return _options(self.query_class, self.internal)

    def compile(self, text: str, **options: Any) -> Any:
        """The compiled query; QueryError for an option this kind does not take."""
        check_options(self, options)
        return self.query_class(text, **options)


@cache
def _options(cls: type, internal: frozenset[str]) -> tuple[str, ...]:
    declared = getattr(cls, "OPTIONS", None)
    if declared is not None:
        return tuple(declared)
    params = inspect.signature(cls.__init__).parameters.values()  # type: ignore[misc]
    return tuple(p.name for p in params if p.kind is p.KEYWORD_ONLY and p.name not in internal)


# --- the registry -------------------------------------------------------------------------

_KINDS: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Add a kind (or replace the one of its name); returns it."""
    _KINDS[kind.name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a kind (tests that register one of their own)."""
    _KINDS.pop(name, None)


def kinds() -> Iterator[Kind]:
    """Every registered kind, those that recognise their text first."""
    yield from (k for k in _KINDS.values() if k.recognises is not None)
    yield from (k for k in _KINDS.values() if k.recognises is None)


def get(name: str) -> Kind:
    try:
        return _KINDS[name]
    except KeyError:
        raise QueryError(f"unknown kind of query {name!r}; known: {', '.join(_KINDS)}") from None


def time_models() -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for k in _KINDS.values() for t in k.times))


def kind_of_text(text: str, time: str = "point") -> Kind:
    """The kind of a query text over events of the time model ``time``; QueryError for
    an unknown time model or a kind that does not take it."""
    if time not in time_models():
        raise QueryError(
            f"unknown time model {time!r}; expected one of: {', '.join(time_models())}"
        )
    lead = Lead.of(text)
    for kind in kinds():
        if kind.recognises is not None and kind.recognises(lead):
            if time not in kind.times:
                raise QueryError(
                    f"this text is {kind.a_title}, which takes time="
                    f"{' or '.join(map(repr, kind.times))}, not time={time!r}"
                )
            return kind
    for kind in kinds():
        if kind.recognises is None and time in kind.times:
            return kind
    raise QueryError(f"time={time!r} takes only {_title_of_time(time)}")


def _title_of_time(time: str) -> str:
    return " or ".join(k.a_title for k in _KINDS.values() if time in k.times)


def kind_of(query: object) -> Kind | None:
    """The kind of a compiled query (None for another object)."""
    return next((k for k in kinds() if isinstance(query, k.query_class)), None)


def check_options(kind: Kind, options: dict[str, Any]) -> None:
    """QueryError naming the first option ``kind`` does not take, the kinds that take
    it, and the kind's own options."""
    allowed = kind.options()
    for name in options:
        if name in allowed:
            continue
        others = [k.title for k in _KINDS.values() if k is not kind and name in k.options()]
        elsewhere = f" (an option of the {' and the '.join(others)})" if others else ""
        raise QueryError(
            f"{name!r} is not an option of {kind.a_title}{elsewhere}; its options: "
            f"{', '.join(allowed)}"
        )


def compile(text: str, *, time: str = "point", **options: Any) -> Any:
    """The text compiled by its kind (see :func:`kleene.compile`)."""
    if not isinstance(text, str):
        raise TypeError(f"a query is text (str), not {type(text).__name__}")
    return kind_of_text(text, time).compile(text, **options)


# --- the built-in kinds ---------------------------------------------------------------------


def _is_tpstream(lead: Lead) -> bool:
    return lead.first == "FROM"


def _is_eventset(lead: Lead) -> bool:
    return lead.first == "PATTERN" and lead.has_event_set


def _is_program(lead: Lead) -> bool:
    return lead.first == "DEFINE" or "UNION" in lead.top_level


register(
    Kind(
        "tpstream",
        "TPStream query",
        "kleene.tpstream.query:TemporalQuery",
        times=("point", "situation"),
        recognises=_is_tpstream,
        snapshot_tag=b"T",
        cli="kleene.cli._tpstream:TPSTREAM",
        spark="kleene.spark._tpstream:TPSTREAM",
    )
)
register(
    Kind(
        "eventset",
        "event-set pattern",
        "kleene.eventsets.query:SesQuery",
        recognises=_is_eventset,
        snapshot_tag=b"S",
        cli="kleene.cli._ses:EVENTSET",
        spark="kleene.spark._eventsets:EVENTSETS",
    )
)
register(
    Kind(
        "program",
        "SASE+ program",
        "kleene.program:Program",
        recognises=_is_program,
        snapshot_tag=b"P",
        cli="kleene.cli._sase:PROGRAM",
    )
)
register(
    Kind(
        "sase",
        "SASE+ query",
        "kleene.query:Query",
        snapshot_tag=b"Q",
        cli="kleene.cli._sase:SASE",
        spark="kleene.spark._sase:SASE",
    )
)
register(
    Kind(
        "interval",
        "query over interval events",
        "kleene.imprecise.query:IntervalQuery",
        times=("interval",),
        snapshot_tag=b"I",
        cli="kleene.cli._interval:INTERVAL",
        spark="kleene.spark._intervals:INTERVALS",
    )
)
