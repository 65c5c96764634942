"""Event-set patterns (``PATTERN SEQ({...}, ...)``, :mod:`kleene.eventsets`) on the
command line: how ``kleene run`` and ``kleene explain`` compile them and how
``--engine spark`` runs them."""

from __future__ import annotations

import argparse
from typing import Any, cast

from kleene.cli._common import EXIT_USAGE, CliError
from kleene.cli._kinds import QueryKind
from kleene.eventsets.query import SesQuery
from kleene.lang import is_ses
from kleene.runtime.limits import DEFAULT_MAX_RUNS

#: the SesQuery options the command line sets (None: the query's default)
_OPTIONS = ("type_field", "time_field", "id_field", "time_unit", "algorithm", "preprocessing")


def compile_ses(text: str, args: argparse.Namespace, fields: dict[str, Any]) -> SesQuery:
    """The SES query with the command's options; point-query options are refused."""
    point_only = {
        "--strategy": getattr(args, "strategy", None),
        "--non-overlap": getattr(args, "non_overlap", False),
        "--allowed-lateness": fields.get("allowed_lateness"),
        "--max-runs": fields.get("max_runs") not in (None, DEFAULT_MAX_RUNS),
    }
    for option, given in point_only.items():
        if given:
            raise CliError(
                f"{option} does not apply to an event-set pattern (it reads events in "
                "time order; an event earlier than the latest is rejected as late)",
                EXIT_USAGE,
            )
    chosen = {name: getattr(args, name, None) for name in ("algorithm", "preprocessing")}
    options = {**fields, **chosen}
    given = {k: options[k] for k in _OPTIONS if options.get(k) is not None}
    if "max_matches" in fields:  # None: no limit (kleene run --max-matches 0)
        given["max_matches"] = fields["max_matches"]
    return SesQuery(text, **given)


def engine_text(query: SesQuery) -> str:
    return f"event sets, {query.algorithm}, preprocessing {query.flags.name}"


def run_spark_ses(
    args: argparse.Namespace, query: SesQuery, fmt: Any, matches: Any, rejected: Any, stats: Any
) -> None:
    """``--engine spark``: :func:`kleene.spark.match` groups the events by the pattern's
    partitioning attributes (:mod:`kleene.spark.eventsets`)."""
    from kleene.cli._spark import run_spark

    run_spark(args, cast(Any, query), fmt, matches, rejected, stats, check=query.check_columns)


SES_KIND = QueryKind(
    "event-set pattern", SesQuery, is_ses, compile_ses, engine_text, spark=run_spark_ses
)
