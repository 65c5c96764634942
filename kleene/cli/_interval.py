"""Queries over interval events (``--time interval``, :mod:`kleene.imprecise`) on the
command line: their framework in the run summary, their match records (with
``confidence``), why ``--allowed-lateness`` does not apply and how ``--engine spark``
runs them."""

from __future__ import annotations

import argparse
from typing import Any

from kleene.cli._kinds import CliPart
from kleene.imprecise.query import IntervalQuery
from kleene.io.schema import INTERVAL_KEYS
from kleene.runtime.ingest import check_column_names


def engine_text(query: IntervalQuery) -> str:
    return f"interval events, {query.engine_option}"


def run_on_spark(
    args: argparse.Namespace,
    query: IntervalQuery,
    fmt: Any,
    matches: Any,
    rejected: Any,
    stats: Any,
) -> None:
    """``--engine spark``: :func:`kleene.spark.match` runs the interval frameworks."""
    from kleene.cli._spark import run_spark

    def check(frame: Any) -> None:
        check_column_names([query.plan], frame.columns, query.column_fields())

    run_spark(args, query, fmt, matches, rejected, stats, check=check)


INTERVAL = CliPart(
    engine_text=engine_text,
    output_keys=INTERVAL_KEYS,
    # OUTPUT NON-OVERLAP is a SASE+ output; an interval query's output is its results
    refuses=frozenset({"--non-overlap"}),
    notes={
        "--allowed-lateness": "the arrival order of interval events is checked against "
        "their bounds (VLDB 2010, section 2.2)",
    },
    spark=run_on_spark,
)
