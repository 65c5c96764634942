"""The ``--time interval`` options of ``kleene run`` and ``kleene explain``: events with
uncertainty intervals (kleene.imprecise), compiled by ``kleene.compile(...,
time="interval")``."""

from __future__ import annotations

import argparse
from typing import Any

from kleene.cli._args import INTERVAL_ENGINES
from kleene.cli._common import EXIT_USAGE, CliError

_POINT_FIELDS = ("type_field", "time_field", "id_field", "time_unit", "max_runs")


def interval_options(args: argparse.Namespace, fields: dict[str, Any]) -> dict[str, Any]:
    """The options of ``kleene.compile(..., time="interval")`` from the command line;
    ``fields`` are those the command passes a point query (the ones that apply kept)."""
    engine = getattr(args, "engine", None)  # local and spark: the framework by "auto"
    if args.non_overlap:
        raise CliError("--non-overlap does not apply to --time interval", EXIT_USAGE)
    if fields.get("allowed_lateness"):
        raise CliError(
            "--allowed-lateness does not apply to --time interval: the arrival order of "
            "interval events is checked against their bounds (VLDB 2010, section 2.2)",
            EXIT_USAGE,
        )
    options = {k: v for k, v in fields.items() if k in _POINT_FIELDS and v is not None}
    if "max_matches" in fields:  # None: no limit (kleene run --max-matches 0)
        options["max_matches"] = fields["max_matches"]
    options.update(
        engine=engine if engine in INTERVAL_ENGINES else "auto",
        lower_field=args.lower_field,
        upper_field=args.upper_field,
        uncertainty=args.uncertainty,
        u_max=args.u_max,
        confidence=args.confidence,
    )
    if args.strategy:
        options["strategy"] = args.strategy
    return options


def check_point_options(args: argparse.Namespace) -> None:
    """Refuse the interval options on a point query."""
    given = [
        option
        for option, value in (
            ("--uncertainty", args.uncertainty),
            ("--u-max", args.u_max),
            ("--confidence", args.confidence),
        )
        if value is not None
    ]
    if getattr(args, "engine", None) in INTERVAL_ENGINES:
        given.append(f"--engine {args.engine}")
    if given:
        raise CliError(f"{given[0]} needs --time interval", EXIT_USAGE)
