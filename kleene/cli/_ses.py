"""Event-set patterns (``PATTERN SEQ({...}, ...)``, :mod:`kleene.eventsets`) on the
command line: their algorithm in the run summary, why the options of SASE+ queries do
not apply, and how ``--engine spark`` runs them."""

from __future__ import annotations

import argparse
from typing import Any

from kleene.cli._kinds import CliPart
from kleene.eventsets.query import SesQuery

_IN_ORDER = "it reads events in time order; an event earlier than the latest is rejected as late"


def engine_text(query: SesQuery) -> str:
    return f"event sets, {query.algorithm}, preprocessing {query.flags.name}"


def run_on_spark(
    args: argparse.Namespace, query: SesQuery, fmt: Any, matches: Any, rejected: Any, stats: Any
) -> None:
    """``--engine spark``: :func:`kleene.spark.match` groups the events by the pattern's
    partitioning attributes (:mod:`kleene.spark.eventsets`)."""
    from kleene.cli._spark import run_spark

    run_spark(args, query, fmt, matches, rejected, stats, check=query.check_columns)


EVENTSET = CliPart(
    engine_text=engine_text,
    # its output (all, earliest, maximal) is not a SASE+ OUTPUT NON-OVERLAP
    refuses=frozenset({"--non-overlap"}),
    notes={"--allowed-lateness": _IN_ORDER},
    spark=run_on_spark,
)
