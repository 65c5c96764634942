"""The ``kleene`` command: run a query over an event file, explain a query, generate data.

    kleene run QUERY_FILE --input EVENTS --output MATCHES [--engine local|spark] ...
    kleene explain QUERY_FILE [--png FILE]
    kleene generate stock --events N --symbols K --increase-prob P --seed S -o FILE
    kleene generate hadoop --jobs J --nodes K --seed S -o FILE

Exit codes: 0 success; 2 a usage error (unknown option, bad ``--format``, a file
extension that names no format) or a query error (printed with line, column and a
caret, no traceback); 1 a failure while running (a missing query or input file, an
unreadable input, a resource limit, Spark not installed).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from kleene.errors import EventError, KleeneError, QueryError
from kleene.io import (
    Format,
    FormatError,
    MatchSink,
    RejectedSink,
    default_rejected_path,
    infer_format,
    read_events,
    write_table,
)

if TYPE_CHECKING:
    from kleene.program import Program
    from kleene.query import Query

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
DEFAULT_BATCH = 65_536
STRATEGIES = (
    "strict-contiguity",
    "partition-contiguity",
    "skip-till-next-match",
    "skip-till-any-match",
)


class CliError(Exception):
    """An error to report in one message, with the exit code to leave with."""

    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class RunStats:
    """What ``kleene run`` reports at the end."""

    engine: str
    query_file: str
    input: str
    input_format: str
    output: str
    rejected_path: str
    events: int = 0
    matches: int = 0
    rejected: int = 0
    seconds: float = 0.0
    startup_seconds: float = 0.0  # starting the engine (the Spark session)
    notes: list[str] = field(default_factory=list)


# --- argument parsing ------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kleene",
        description="Complex event processing with SASE+ pattern queries.",
        epilog="Exit codes: 0 ok, 1 runtime failure, 2 usage or query error.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="match a query over an event file")
    run.add_argument("query_file", metavar="QUERY_FILE", help="file holding the query text")
    run.add_argument("--input", "-i", required=True, help="events: .csv, .jsonl or .parquet")
    run.add_argument("--format", choices=[f.value for f in Format], help="input format")
    run.add_argument("--output", "-o", required=True, help="matches: .jsonl or .parquet")
    run.add_argument(
        "--rejected", help="where rejected events go (default: <output>.rejected.jsonl)"
    )
    run.add_argument("--engine", choices=("local", "spark"), default="local")
    run.add_argument("--master", help="Spark master URL (default local[*]); spark engine only")
    run.add_argument("--time-field", default="timestamp", help="time column (timestamp)")
    run.add_argument("--type-field", default="type", help="event type column (type)")
    run.add_argument("--id-field", default="id", help="event id column (id)")
    _add_query_options(run)
    run.add_argument(
        "--allowed-lateness",
        type=float,
        default=0.0,
        help="how far (in time units) an event may arrive out of time order",
    )
    run.add_argument(
        "--batch-size", type=_positive_int, default=DEFAULT_BATCH, help="events per push"
    )
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")

    explain = commands.add_parser("explain", help="show the compiled automaton of a query")
    explain.add_argument("query_file", metavar="QUERY_FILE")
    explain.add_argument("--png", metavar="FILE", help="also draw the automaton to a PNG")
    _add_query_options(explain)

    generate = commands.add_parser("generate", help="generate a workload")
    workloads = generate.add_subparsers(dest="workload", required=True, metavar="WORKLOAD")
    stock = workloads.add_parser("stock", help="the stock ticker stream of SIGMOD 2008, section 6")
    stock.add_argument("--events", "-n", type=_non_negative_int, default=100_000)
    stock.add_argument("--symbols", "-k", type=_positive_int, default=2)
    stock.add_argument("--increase-prob", "-p", type=float, default=0.7)
    stock.add_argument("--seed", "-s", type=int, default=0)
    stock.add_argument("--step", type=_non_negative_int, default=1, help="price step (1)")
    stock.add_argument("--output", "-o", required=True, help="a .csv, .jsonl or .parquet file")
    stock.add_argument("--format", choices=[f.value for f in Format])
    hadoop = workloads.add_parser(
        "hadoop", help="a Hadoop cluster-monitoring trace (SIGMOD 2014, section 6.5)"
    )
    hadoop.add_argument("--jobs", "-j", type=_positive_int, default=100)
    hadoop.add_argument("--nodes", type=_positive_int, default=20)
    hadoop.add_argument("--seed", "-s", type=int, default=0)
    hadoop.add_argument("--straggler-prob", type=float, default=0.02)
    hadoop.add_argument("--output", "-o", required=True, help="a .csv, .jsonl or .parquet file")
    hadoop.add_argument("--format", choices=[f.value for f in Format])
    return parser


def _add_query_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strategy", choices=STRATEGIES, help="override the query's event selection strategy"
    )
    parser.add_argument(
        "--non-overlap", action="store_true", help="output non-overlapping matches only"
    )


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


# --- entry point -----------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    out = Console(highlight=False, soft_wrap=True)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        if args.command == "run":
            return cmd_run(args, out, err)
        if args.command == "explain":
            return cmd_explain(args, out)
        return cmd_generate(args, out)
    except CliError as exc:
        _error(err, str(exc))
        return exc.code
    except QueryError as exc:
        _error(err, str(exc))
        return EXIT_USAGE
    except FormatError as exc:
        _error(err, str(exc))
        return EXIT_USAGE
    except (FileNotFoundError, EventError) as exc:
        _error(err, str(exc))
        return EXIT_FAILURE
    except KleeneError as exc:
        _error(err, str(exc))
        return EXIT_FAILURE
    except KeyboardInterrupt:
        _error(err, "interrupted")
        return 130
    except Exception as exc:
        if os.environ.get("KLEENE_TRACEBACK"):
            traceback.print_exc()
        _error(err, f"unexpected {type(exc).__name__}: {exc} (set KLEENE_TRACEBACK=1 to see where)")
        return EXIT_FAILURE


def _error(console: Console, message: str) -> None:
    console.print(f"kleene: error: {message}", markup=False, highlight=False, soft_wrap=True)


# --- query files -----------------------------------------------------------------------


def load_query(path: str, args: argparse.Namespace, **fields: Any) -> Query | Program:
    """Read and compile a query file (one query, or a program with DEFINE and UNION);
    query errors name the file and show the caret."""
    import kleene
    from kleene.lang import parse_program

    query_path = Path(path)
    if not query_path.is_file():
        raise CliError(f"query file not found: {path}")
    text = query_path.read_text(encoding="utf-8")
    options: dict[str, Any] = dict(fields)
    if args.strategy:
        options["strategy"] = args.strategy
    if args.non_overlap:
        options["output"] = "non_overlap"
    try:
        if parse_program(text).single is None:
            return kleene.compile_program(text, **options)
        return kleene.compile(text, **options)
    except QueryError as exc:
        rendered = exc if exc.text else exc.with_text(text)
        raise CliError(f"{path}: {rendered}", EXIT_USAGE) from exc


# --- kleene run ------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    started = time.perf_counter()
    input_format = infer_format(args.input, args.format)
    output_format = infer_format(args.output)
    if output_format is Format.CSV:
        raise CliError("matches are written as .jsonl or .parquet, not CSV", EXIT_USAGE)
    rejected_path = Path(args.rejected) if args.rejected else default_rejected_path(args.output)
    rejected_format = infer_format(rejected_path)
    if rejected_format is Format.CSV:
        raise CliError("rejected events are written as .jsonl or .parquet", EXIT_USAGE)
    fields = {
        "time_field": args.time_field,
        "type_field": args.type_field,
        "id_field": args.id_field,
    }
    query = load_query(args.query_file, args, allowed_lateness=args.allowed_lateness, **fields)
    if not Path(args.input).exists():
        raise CliError(f"input file not found: {args.input}")
    stats = RunStats(
        engine=args.engine,
        query_file=args.query_file,
        input=args.input,
        input_format=input_format.value,
        output=args.output,
        rejected_path=str(rejected_path),
    )
    from kleene.program import Program

    if args.engine == "spark" and isinstance(query, Program):
        raise CliError(
            f"{args.query_file} is a program (DEFINE or UNION), which runs on the local "
            "engine only: use --engine local",
            EXIT_USAGE,
        )
    sinks = _open_sinks(args.output, rejected_path, query)
    with sinks[0] as matches, sinks[1] as rejected:
        if args.engine == "spark" and not isinstance(query, Program):
            _run_spark(args, query, input_format, matches, rejected, stats)
        else:
            _run_local(args, query, input_format, matches, rejected, stats, err)
    stats.matches, stats.rejected = matches.count, rejected.count
    stats.seconds = time.perf_counter() - started
    if not args.quiet:
        out.print(summary_table(stats))
    return EXIT_OK


def _open_sinks(
    output: str, rejected: Path, query: Query | Program
) -> tuple[MatchSink, RejectedSink]:
    matches = MatchSink(
        output,
        variables=getattr(query, "variables", ()),
        partition_names=getattr(query, "partition_attributes", ()),
    )
    return matches, RejectedSink(rejected)


def _run_local(
    args: argparse.Namespace,
    query: Query | Program,
    input_format: Format,
    matches: MatchSink,
    rejected: RejectedSink,
    stats: RunStats,
    err: Console,
) -> None:
    """Read the whole file, then push it to one matcher in batches (with a progress bar)."""
    reading = err.status(f"reading {args.input} ...", spinner="dots")
    with reading if not args.quiet else contextlib.nullcontext():
        events = read_events(args.input, input_format)
    total = len(events)
    stats.events = total
    engine = getattr(getattr(query, "config", None), "engine", None)
    if engine:
        stats.engine = f"local ({engine})"
    matcher = query.matcher()
    with _progress(err, args.quiet) as progress:
        task = progress.add_task("matching", total=total)
        for start in range(0, total, args.batch_size):
            batch = _slice(events, start, args.batch_size)
            matches.add(matcher.push(batch))
            rejected.add(matcher.take_rejected())
            progress.update(task, advance=len(batch))
        matches.add(matcher.flush())
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


def _run_spark(
    args: argparse.Namespace,
    query: Query,
    input_format: Format,
    matches: MatchSink,
    rejected: RejectedSink,
    stats: RunStats,
) -> None:
    """Run the Spark batch pipeline (:func:`kleene.spark.match`) and bring its results
    back to the driver to write them in the same files as the local engine."""
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
    frame = _spark_read(session, args.input, input_format)
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
    matches.add(found)
    rejected.add(dropped)


def _spark_read(session: Any, path: str, fmt: Format) -> Any:
    reader = session.read
    if fmt is Format.CSV:
        return reader.option("header", True).option("inferSchema", True).csv(path)
    if fmt is Format.JSONL:
        return reader.json(path)
    return reader.parquet(path)


def summary_table(stats: RunStats) -> Table:
    """The one-screen summary printed after a run."""
    table = Table(title=f"kleene run: {stats.query_file}", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    working = stats.seconds - stats.startup_seconds
    rate = stats.events / working if working > 0 else 0.0
    table.add_row("engine", stats.engine)
    table.add_row("input", f"{stats.input} ({stats.input_format})")
    table.add_row("events read", f"{stats.events:,}")
    table.add_row("matches", f"{stats.matches:,}  -> {stats.output}")
    table.add_row("rejected events", f"{stats.rejected:,}  -> {stats.rejected_path}")
    wall = f"{stats.seconds:.2f} s ({rate:,.0f} events/s"
    if stats.startup_seconds:
        wall += f" after {stats.startup_seconds:.1f} s of engine start-up"
    table.add_row("wall time", wall + ")")
    for note in stats.notes:
        table.add_row("note", note)
    return table


# --- kleene explain --------------------------------------------------------------------


def cmd_explain(args: argparse.Namespace, out: Console) -> int:
    from kleene.program import Program

    query = load_query(args.query_file, args)
    out.print(query.explain(), markup=False, highlight=False, soft_wrap=True)
    if args.png and isinstance(query, Program):
        raise CliError("--png draws the automaton of a single query, not of a program")
    if args.png:
        from kleene.io.automaton import diagram_from_query, draw_png

        try:
            import matplotlib  # noqa: F401
        except ImportError as exc:
            raise CliError(
                "drawing the automaton needs matplotlib: pip install 'kleene[bench]'"
            ) from exc
        path = draw_png(diagram_from_query(query), args.png)
        out.print(f"automaton drawn to {path}", markup=False)
    return EXIT_OK


# --- kleene generate -------------------------------------------------------------------


def cmd_generate(args: argparse.Namespace, out: Console) -> int:
    from kleene.datagen import hadoop, stock

    fmt = infer_format(args.output, args.format)
    started = time.perf_counter()
    try:
        if args.workload == "hadoop":
            table = hadoop.generate(
                args.jobs, nodes=args.nodes, seed=args.seed, straggler_prob=args.straggler_prob
            )
            what = f"Hadoop trace events ({args.jobs} jobs, {args.nodes} nodes, seed {args.seed})"
        else:
            table = stock.generate(
                args.events,
                symbols=args.symbols,
                increase_prob=args.increase_prob,
                seed=args.seed,
                step=args.step,
            )
            what = (
                f"stock events ({args.symbols} symbols, p={args.increase_prob}, seed {args.seed})"
            )
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    write_table(table, args.output, fmt)
    seconds = time.perf_counter() - started
    out.print(
        f"wrote {table.num_rows:,} {what} to {args.output} ({fmt.value}) in {seconds:.2f} s",
        markup=False,
        highlight=False,
    )
    return EXIT_OK
