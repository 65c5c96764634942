"""The command-line part of a kind of query: the :attr:`kleene.kinds.Kind.cli` entry.

``kleene run`` and ``kleene explain`` tell a text's kind with
:func:`kleene.kinds.kind_of_text` and then ask only this part (and the kind's compile
options, :mod:`kleene.cli._flags`), so the shared command code has no test of a query's
class or text. A kind without a part gets :data:`DEFAULT`: its matches written as match
records, the local engine only, nothing to draw.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kleene.io.schema import MATCH_KEYS
from kleene.kinds import Kind

#: runs a compiled query on Spark: (args, query, input format, match sink, rejected
#: sink, stats), as :func:`kleene.cli._spark.run_spark` does
SparkRunner = Callable[..., None]
#: ``kleene explain --png``: draws a query to a path with a title; the path drawn
Drawer = Callable[[Any, Path, str], Path]
#: the queries a compiled query is drawn as, each with its label (None: no label)
Statements = Callable[[Any], list[tuple[str | None, Any]]]


def _no_engine_text(query: Any) -> str | None:
    return None


def _itself(query: Any) -> list[tuple[str | None, Any]]:
    return [(None, query)]


@dataclass(frozen=True)
class CliPart:
    """What the command line needs of one kind beyond its compile options."""

    #: what the run summary says of the local engine ("event sets, automaton, ...")
    engine_text: Callable[[Any], str | None] = _no_engine_text
    #: the keys of its match records: the columns of an empty match file
    output_keys: Sequence[str] = MATCH_KEYS
    #: flags refused although the kind has the option they set (it means another thing)
    refuses: frozenset[str] = frozenset()
    #: why a flag does not apply to the kind, told with its refusal
    notes: Mapping[str, str] = field(default_factory=dict)
    #: how ``--engine spark`` runs it; None: on the local engine only
    spark: SparkRunner | None = None
    #: how ``kleene explain --png`` draws it; None: ``--png`` is refused
    draw: Drawer | None = None
    #: the word for what is drawn ("automaton drawn to ...")
    drawing: str = "automaton"
    #: the queries drawn for one compiled query (a program: one per statement)
    statements: Statements = _itself


DEFAULT = CliPart()


def part_of(kind: Kind) -> CliPart:
    """The command-line part of ``kind`` (:data:`DEFAULT` when it has none)."""
    part = kind.cli_part
    if part is None:
        return DEFAULT
    if not isinstance(part, CliPart):
        raise TypeError(f"the cli part of kind {kind.name!r} is not a CliPart: {part!r}")
    return part
