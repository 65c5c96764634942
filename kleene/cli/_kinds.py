"""Kinds of query the CLI runs beside the point queries of :mod:`kleene.query`.

A kind registers how ``kleene run`` and ``kleene explain`` compile its text (from the
command's options), what its match records hold and how ``--engine spark`` runs it; the
run path then needs no test of the query's class. The compiled query speaks the small
protocol :class:`RunnableQuery` (the one :class:`kleene.Query` speaks too).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from kleene.io.schema import MATCH_KEYS


class PushMatcher(Protocol):
    def push(self, events: Any) -> Any: ...
    def flush(self) -> Any: ...
    def take_rejected(self) -> Any: ...


class RunnableQuery(Protocol):
    """What the run path asks of a compiled query."""

    @property
    def variables(self) -> tuple[str, ...]: ...
    @property
    def partition_attributes(self) -> tuple[str, ...]: ...
    def check_columns(self, events: Any) -> None: ...
    def matcher(
        self, state: bytes | None = None, on_matches: Callable[[list[Any]], object] | None = None
    ) -> PushMatcher: ...
    def explain(self) -> str: ...


#: compiles the text with the command's arguments and fields (time_field, ...)
Compiler = Callable[[str, argparse.Namespace, dict[str, Any]], Any]
#: runs a compiled query on Spark: (args, query, input format, match sink, rejected
#: sink, stats), as :func:`kleene.cli._spark.run_spark` does for point queries
SparkRunner = Callable[..., None]


@dataclass(frozen=True)
class QueryKind:
    """One kind of query: how to spot its text, compile it and describe its run."""

    name: str
    query_type: type
    detects: Callable[[str], bool]
    compile: Compiler
    engine_text: Callable[[Any], str]
    output_keys: Sequence[str] = MATCH_KEYS
    spark: SparkRunner | None = None
    #: ``kleene explain --png``: draws the compiled query to a path with a title
    draw: Callable[[Any, Path, str], Path] | None = None


KINDS: list[QueryKind] = []


def register(kind: QueryKind) -> None:
    KINDS.append(kind)


def kind_of_text(text: str) -> QueryKind | None:
    return next((k for k in KINDS if k.detects(text)), None)


def kind_of(query: object) -> QueryKind | None:
    return next((k for k in KINDS if isinstance(query, k.query_type)), None)
