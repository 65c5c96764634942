"""TPStream queries (``FROM ... DEFINE ... PATTERN ...``, :mod:`kleene.tpstream`) on the
command line: their mode in the run summary, their match records
(:data:`kleene.io.schema.TEMPORAL_KEYS`), their pattern on a time line for ``kleene
explain --png`` and how ``--engine spark`` runs them (:mod:`kleene.spark.tpstream`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kleene.cli._common import EXIT_USAGE, CliError
from kleene.cli._kinds import CliPart
from kleene.io.schema import TEMPORAL_KEYS
from kleene.tpstream.query import TemporalQuery


def engine_text(query: TemporalQuery) -> str:
    mode = "low latency" if query.low_latency else "matches at their last end"
    return f"TPStream, {mode}"


def run_on_spark(
    args: argparse.Namespace,
    query: TemporalQuery,
    fmt: Any,
    matches: Any,
    rejected: Any,
    stats: Any,
) -> None:
    """``--engine spark``: :func:`kleene.spark.match` derives and matches situations per
    PARTITION BY key (:mod:`kleene.spark.tpstream`), results in the local engine's order."""
    from kleene.cli._spark import run_spark

    run_spark(args, query, fmt, matches, rejected, stats, check=query.check_columns)


def draw_timeline(query: TemporalQuery, target: Path, title: str) -> Path:
    """``kleene explain --png``: the situations on a time line (:mod:`kleene.io.timeline`)."""
    from kleene.io.timeline import draw_timeline
    from kleene.tpstream.timeline import Unsatisfiable

    try:
        return draw_timeline(query, target, title=title)
    except Unsatisfiable as exc:
        raise CliError(
            f"{title}: cannot draw the pattern: {exc.reason}, so the query never matches; "
            "check the relations of its PATTERN",
            EXIT_USAGE,
        ) from None


TPSTREAM = CliPart(
    engine_text=engine_text,
    output_keys=TEMPORAL_KEYS,
    notes={
        "--allowed-lateness": "it derives situations from each partition's events in time "
        "order; an event not later than its partition's previous one is rejected",
    },
    spark=run_on_spark,
    draw=draw_timeline,
    drawing="pattern",
)
