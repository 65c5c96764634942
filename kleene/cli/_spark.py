"""``kleene run`` on the Spark engine: the input read as a DataFrame, the batch pipeline
(:func:`kleene.spark.match`), and its results brought back to the driver."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kleene.cli._common import EXIT_USAGE, CliError
from kleene.cli._summary import RunStats
from kleene.io import Format, MatchSink, RejectedSink, is_json_array, is_stdio
from kleene.runtime.limits import match_limit


def check_spark_input(path: str, fmt: Format) -> None:
    if is_stdio(path):
        raise CliError("the spark engine reads files, not standard input", EXIT_USAGE)
    if fmt is Format.JSONL and Path(path).is_file() and is_json_array(path):
        raise CliError(
            f"{path} is a JSON array; the spark engine reads JSON lines (one object per "
            "line): convert it, or use --engine local",
            EXIT_USAGE,
        )


def run_spark(
    args: argparse.Namespace,
    query: Any,
    input_format: Format,
    matches: MatchSink,
    rejected: RejectedSink,
    stats: RunStats,
    *,
    check: Callable[[Any], None],
) -> None:
    """Run the Spark batch pipeline (:func:`kleene.spark.match`, which takes every kind
    that has a Spark part) and bring its results back to the driver to write them in
    the same files as the local engine; past the query's ``max_matches`` the matches
    before the limit are written and ``stats.stopped`` holds the error, as on the local
    engine (which stops there, so it writes only the rejected events it met before).
    ``check`` refuses a DataFrame lacking columns the query needs (each kind's runner
    gives its own: :attr:`kleene.cli._kinds.CliPart.spark`)."""
    try:
        import pyspark  # noqa: F401

        from kleene import spark as kspark
    except ImportError as exc:
        raise CliError(
            f"the spark engine needs pyspark ({exc}); install it with pip install 'kleene[spark]'"
        ) from exc
    before = time.perf_counter()
    session = kspark.session(args.master)
    stats.startup_seconds = time.perf_counter() - before
    frame = kspark.read_event_file(session, args.input, input_format, args.schema)
    if frame.columns:  # an empty file has none
        check(frame)
    result = kspark.match(
        frame,
        query,
        time_field=args.time_field,
        type_field=args.type_field,
        id_field=args.id_field,
    ).persist()
    try:
        stats.events = frame.count()
        found, dropped = result.collect()
    finally:
        result.unpersist()
    stats.engine = f"spark ({session.sparkContext.master})"
    if result.layout.note:
        stats.notes.append(result.layout.note)
    limit = _match_limit(query)
    if limit is not None and len(found) > limit:
        # the local engine hands out the same matches in this order and stops after the
        # limit's last; the workers have no limit (a worker's error would lose them all)
        found = found[:limit]
        stats.stopped = match_limit(limit)
    matches.add(found)
    rejected.add(dropped)


def _match_limit(query: Any) -> int | None:
    """The query's ``max_matches`` (its configuration's, else its own; None: none)."""
    config = getattr(query, "config", None)
    limit = getattr(config if config is not None else query, "max_matches", None)
    return limit if isinstance(limit, int) else None
