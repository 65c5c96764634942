"""SASE+ queries and programs (:mod:`kleene.query`, :mod:`kleene.program`) on the
command line: their engine in the run summary, their automata for ``kleene explain
--png`` (one per statement of a program) and, for a query, ``--engine spark``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kleene.cli._kinds import CliPart
from kleene.runtime.ingest import check_column_names

if TYPE_CHECKING:
    from kleene.program import Program
    from kleene.query import Query

#: ``--engine auto|points|events`` chooses the framework of a query over interval events
_REFUSED = frozenset({"--engine"})


def engine_text(query: Query) -> str:
    return query.config.engine


def draw_automaton(query: Query, target: Path, title: str) -> Path:
    """``kleene explain --png``: the query's automaton (:mod:`kleene.io.automaton`)."""
    from kleene.io.automaton import diagram_from_query, draw_png

    return draw_png(diagram_from_query(query, title=title), target)


def statements(program: Program) -> list[tuple[str | None, Any]]:
    """The queries of a program to draw, each with its label: the DEFINE name or
    ``returned``, with ``-2``, ``-3``... for further UNION branches."""
    groups = [*program.definitions.items(), ("returned", program.queries)]
    return [
        (name if k == 0 else f"{name}-{k + 1}", branch)
        for name, branches in groups
        for k, branch in enumerate(branches)
    ]


def run_on_spark(
    args: argparse.Namespace, query: Query, fmt: Any, matches: Any, rejected: Any, stats: Any
) -> None:
    """``--engine spark``: :func:`kleene.spark.match` over the query's partitions."""
    from kleene.cli._spark import run_spark

    def check(frame: Any) -> None:
        check_column_names([query.plan], frame.columns, query.fields)

    run_spark(args, query, fmt, matches, rejected, stats, check=check)


SASE = CliPart(
    engine_text=engine_text,
    refuses=_REFUSED,
    spark=run_on_spark,
    draw=draw_automaton,
)
PROGRAM = CliPart(
    refuses=_REFUSED,
    draw=draw_automaton,
    statements=statements,
)
