"""TPStream queries (``FROM ... DEFINE ... PATTERN ...``, :mod:`kleene.tpstream`) on the
command line: how ``kleene run`` and ``kleene explain`` compile them, what their match
records hold (:data:`kleene.io.schema.TEMPORAL_KEYS`) and how ``--engine spark`` runs
them (:mod:`kleene.spark.tpstream`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, cast

from kleene.cli._common import EXIT_USAGE, CliError
from kleene.cli._kinds import QueryKind
from kleene.io.schema import TEMPORAL_KEYS
from kleene.kinds import is_tpstream
from kleene.tpstream.query import TemporalQuery

_FIELDS = ("type_field", "time_field", "id_field", "time_unit", "max_runs")


def compile_tpstream(text: str, args: argparse.Namespace, fields: dict[str, Any]) -> TemporalQuery:
    """The TPStream query with the command's field options; options of other kinds of
    query are refused."""
    refused = [
        option
        for option, given in (
            ("--strategy", getattr(args, "strategy", None)),
            ("--non-overlap", getattr(args, "non_overlap", False)),
            ("--algorithm", getattr(args, "algorithm", None)),
            ("--preprocessing", getattr(args, "preprocessing", None)),
            ("--allowed-lateness", fields.get("allowed_lateness")),
        )
        if given
    ]
    if refused:
        raise CliError(
            f"{refused[0]} does not apply to a TPStream query (it derives situations from "
            "each partition's events in time order; an event not later than its "
            "partition's previous one is rejected)",
            EXIT_USAGE,
        )
    options = {k: v for k, v in fields.items() if k in _FIELDS and v is not None}
    if "max_matches" in fields:  # None: no limit (kleene run --max-matches 0)
        options["max_matches"] = fields["max_matches"]
    return TemporalQuery(text, **options)


def engine_text(query: TemporalQuery) -> str:
    mode = "low latency" if query.low_latency else "matches at their last end"
    return f"TPStream, {mode}"


def run_spark_tpstream(
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

    run_spark(args, cast(Any, query), fmt, matches, rejected, stats, check=query.check_columns)


def draw_tpstream(query: TemporalQuery, target: Path, title: str) -> Path:
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


TPSTREAM_KIND = QueryKind(
    "TPStream query",
    TemporalQuery,
    is_tpstream,
    compile_tpstream,
    engine_text,
    output_keys=TEMPORAL_KEYS,
    spark=run_spark_tpstream,
    draw=draw_tpstream,
)
