"""``kleene run``: the checks on its files, the match and rejected sinks, and the local
engine's loop; the Spark engine is in :mod:`kleene.cli._spark`."""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from kleene.cli._common import EXIT_OK, EXIT_USAGE, CliError, refuse_overwrites, shown
from kleene.cli._query import Loaded, load_query
from kleene.cli._spark import check_spark_input
from kleene.cli._summary import RunStats, summary_table
from kleene.errors import RunLimitError
from kleene.io import (
    Format,
    FormatError,
    MatchSink,
    RejectedSink,
    UnwrittenRejected,
    default_rejected_path,
    infer_format,
    input_format,
    is_stdio,
    read_events,
)


def cmd_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    started = time.perf_counter()
    if is_stdio(args.query_file) and is_stdio(args.input):
        raise CliError("the query file and --input cannot both be standard input", EXIT_USAGE)
    input_format = _run_formats(args)
    rejected_path = _rejected_path(args)
    _check_rejected_format(rejected_path)
    refuse_overwrites(
        [("input", args.input), ("query file", args.query_file)],
        [("--output", args.output), ("--rejected", rejected_path)],
    )
    loaded = load_query(args.query_file, args)
    if not is_stdio(args.input) and not Path(args.input).exists():
        raise CliError(f"input file not found: {args.input}")
    if args.schema and input_format is not Format.CSV:
        raise CliError("--schema declares CSV column types; the input is not CSV", EXIT_USAGE)
    stats = RunStats(
        engine=args.engine,
        query_file=args.query_file,
        input=shown(args.input, "standard input"),
        input_format=input_format.value,
        output=shown(args.output),
        rejected_path=shown(rejected_path) if rejected_path else "not written (no --rejected)",
    )
    spark = loaded.part.spark if args.engine == "spark" else None
    if args.engine == "spark" and spark is None:
        raise CliError(
            f"{args.query_file} is {loaded.kind.a_title}, which runs on the local engine "
            "only: use --engine local",
            EXIT_USAGE,
        )
    if spark is not None:
        check_spark_input(args.input, input_format)
    sinks = _open_sinks(args.output, args.output_format, rejected_path, loaded)
    with sinks[0] as matches, sinks[1] as rejected:
        if spark is not None:
            spark(args, loaded.query, input_format, matches, rejected, stats)
        else:
            _run_local(args, loaded, input_format, matches, rejected, stats, err)
    stats.matches, stats.rejected = matches.count, rejected.count
    if stats.stopped is not None:
        raise CliError(
            f"{stats.stopped}\nthe {stats.matches:,} matches found before the limit are in "
            f"{args.output} (and the rejected events in {rejected_path})"
        )
    stats.seconds = time.perf_counter() - started
    if rejected_path is None and rejected.count:
        err.print(
            f"kleene: warning: {rejected.count:,} rejected events were not written "
            "(give --rejected FILE to keep them)",
            markup=False,
            highlight=False,
        )
    if not args.quiet:
        (err if is_stdio(args.output) else out).print(summary_table(stats))
    return EXIT_OK


def _run_formats(args: argparse.Namespace) -> Format:
    """The input's format; checks that the matches' format is one results are written in."""
    fmt = input_format(args.input, args.input_format, option="--input-format")
    if infer_format(args.output, args.output_format, option="--output-format") is Format.CSV:
        raise CliError("matches are written as .jsonl or .parquet, not CSV", EXIT_USAGE)
    return fmt


def _rejected_path(args: argparse.Namespace) -> str | None:
    """Where rejected events go: --rejected, else beside the output, else (the output is
    standard output) nowhere."""
    if args.rejected:
        if is_stdio(args.rejected) and is_stdio(args.output):
            raise CliError("--output and --rejected cannot both be standard output", EXIT_USAGE)
        return str(args.rejected)
    return None if is_stdio(args.output) else str(default_rejected_path(args.output))


def _check_rejected_format(path: str | None) -> None:
    if path is None or is_stdio(path):
        return
    try:
        fmt = infer_format(path)
    except FormatError:
        fmt = Format.CSV
    if fmt is Format.CSV:
        raise CliError(
            f"--rejected {path}: rejected events are written as .jsonl or .parquet, "
            "give a file name with one of those extensions",
            EXIT_USAGE,
        )


def _open_sinks(
    output: str, output_format: str | None, rejected: str | None, loaded: Loaded
) -> tuple[MatchSink, RejectedSink]:
    matches = MatchSink(
        output,
        output_format,
        variables=getattr(loaded.query, "variables", ()),
        partition_names=getattr(loaded.query, "partition_attributes", ()),
        keys=loaded.part.output_keys,
    )
    if rejected is None:
        return matches, UnwrittenRejected()
    try:
        return matches, RejectedSink(rejected, Format.JSONL if is_stdio(rejected) else None)
    except BaseException:
        matches.abort()
        raise


def _run_local(
    args: argparse.Namespace,
    loaded: Loaded,
    input_format: Format,
    matches: MatchSink,
    rejected: RejectedSink,
    stats: RunStats,
    err: Console,
) -> None:
    """Read the whole file, then push it to one matcher in batches (with a progress bar).
    The matcher hands the matches to the sink in chunks as it finds them, so an
    exploding result is written as it grows. On a limit (``--max-runs``,
    ``--max-matches``) the run stops and ``stats.stopped`` holds the error: the matches
    found before it and the rejected events so far stay written."""
    reading = err.status(f"reading {args.input} ...", spinner="dots")
    with reading if not args.quiet else contextlib.nullcontext():
        events = read_events(args.input, input_format, schema=args.schema)
    query = loaded.query
    query.check_columns(events)
    total = len(events)
    stats.events = total
    engine = loaded.part.engine_text(query)
    if engine:
        stats.engine = f"local ({engine})"
    matcher = query.matcher(on_matches=matches.add)
    with _progress(err, args.quiet) as progress:
        task = progress.add_task("matching", total=total)
        try:
            for start in range(0, total, args.batch_size):
                batch = _slice(events, start, args.batch_size)
                matcher.push(batch)
                rejected.add(matcher.take_rejected())
                progress.update(task, advance=len(batch))
            matcher.flush()
        except RunLimitError as exc:
            stats.stopped = exc
        rejected.add(matcher.take_rejected())


def _slice(events: Any, start: int, length: int) -> Any:
    if hasattr(events, "slice"):  # pyarrow Table
        return events.slice(start, length)
    return events.iloc[start : start + length]


def _progress(console: Console, quiet: bool) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("events"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=quiet,
        transient=False,
    )
