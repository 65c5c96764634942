"""The ``kleene`` command: run a query over an event file, explain a query, generate data.

    kleene run QUERY_FILE --input EVENTS --output MATCHES [--engine local|spark] ...
    kleene explain QUERY_FILE... [--png FILE.png|DIR]
    kleene generate stock --events N --symbols K --increase-prob P --seed S -o FILE
    kleene generate hadoop --jobs J --nodes K --seed S -o FILE
    kleene --version

``-`` as ``--input`` reads standard input (give ``--input-format``); as ``--output``
it writes standard output (give ``--output-format``), and the progress and summary go
to standard error. Outputs are written through a temporary file renamed at the end, and
an output that is an input (the events or the query file) is refused.

Exit codes: 0 success; 2 a usage error (unknown option, bad ``--input-format``, a file
extension that names no format, an output that would overwrite an input) or a query
error (printed with line, column and a caret, no traceback); 1 a failure while running
(a missing query or input file, an unreadable input, a resource limit, Spark not
installed).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
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

from kleene.errors import EventError, KleeneError, QueryError, RunLimitError
from kleene.events import TIME_UNITS
from kleene.io import (
    Format,
    FormatError,
    MatchSink,
    RejectedSink,
    UnwrittenRejected,
    default_rejected_path,
    infer_format,
    input_format,
    is_json_array,
    is_stdio,
    read_events,
    write_table,
)
from kleene.runtime.ingest import check_column_names
from kleene.runtime.limits import DEFAULT_MAX_RUNS

if TYPE_CHECKING:
    from kleene.program import Program
    from kleene.query import Query

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2
FORMATS = [f.value for f in Format]
RESULT_FORMATS = [Format.JSONL.value, Format.PARQUET.value]
DEFAULT_BATCH = 65_536
# matches are written as they are found, so the default can be well above the API's
CLI_MAX_MATCHES = 10_000_000
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
    stopped: RunLimitError | None = None  # the limit the run stopped at


# --- argument parsing ------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kleene",
        description="Complex event processing with SASE+ pattern queries.",
        epilog="Exit codes: 0 ok, 1 runtime failure, 2 usage or query error.",
    )
    parser.add_argument("--version", action="version", version=f"kleene {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="match a query over an event file")
    run.add_argument(
        "query_file", metavar="QUERY_FILE", help="file holding the query text (- for stdin)"
    )
    run.add_argument(
        "--input",
        "-i",
        required=True,
        help="events: .csv, .jsonl, .json (lines or an array), .parquet or a Parquet "
        "dataset directory; - for standard input",
    )
    run.add_argument(
        "--input-format",
        "--format",
        dest="input_format",
        choices=FORMATS,
        help="input format, when the extension does not tell (--format: older name)",
    )
    run.add_argument(
        "--output", "-o", required=True, help="matches: .jsonl or .parquet; - for standard output"
    )
    run.add_argument("--output-format", choices=RESULT_FORMATS, help="format of the matches file")
    run.add_argument(
        "--rejected",
        help="where rejected events go (default: <output>.rejected.jsonl; with --output -, "
        "they are only counted unless given)",
    )
    run.add_argument("--engine", choices=("local", "spark"), default="local")
    run.add_argument("--master", help="Spark master URL (default local[*]); spark engine only")
    run.add_argument("--time-field", default="timestamp", help="time column (timestamp)")
    run.add_argument("--type-field", default="type", help="event type column (type)")
    run.add_argument("--id-field", default="id", help="event id column (id)")
    run.add_argument(
        "--schema",
        help='CSV column types, e.g. "price:double,symbol:string" (else inferred)',
    )
    run.add_argument(
        "--time-unit",
        choices=list(TIME_UNITS),
        help="unit of a numeric time column; needed by WITHIN with a unit (e.g. ms)",
    )
    _add_query_options(run)
    run.add_argument(
        "--allowed-lateness",
        type=_non_negative_float,
        default=0.0,
        help="how far (in time units) an event may arrive out of time order",
    )
    run.add_argument(
        "--batch-size", type=_positive_int, default=DEFAULT_BATCH, help="events per push"
    )
    run.add_argument(
        "--max-runs",
        type=_positive_int,
        default=DEFAULT_MAX_RUNS,
        help=f"live runs (partial matches) the engine may hold (default {DEFAULT_MAX_RUNS:,})",
    )
    run.add_argument(
        "--max-matches",
        type=_non_negative_int,
        default=CLI_MAX_MATCHES,
        help=f"stop with an error after this many matches, 0 for no limit "
        f"(default {CLI_MAX_MATCHES:,})",
    )
    run.add_argument("--quiet", "-q", action="store_true", help="no progress bar or summary")

    explain = commands.add_parser(
        "explain", help="show the compiled automaton of queries and programs"
    )
    explain.add_argument("query_files", metavar="QUERY_FILE", nargs="+")
    explain.add_argument(
        "--png",
        metavar="PATH",
        help="also draw each automaton. X.png: one picture to X.png, several to "
        "X.<statement>.png (X.<file>.<statement>.png for several files); any other PATH is "
        "a folder of <file>.png and <file>.<statement>.png",
    )
    _add_query_options(explain)

    generate = commands.add_parser("generate", help="generate a workload")
    workloads = generate.add_subparsers(dest="workload", required=True, metavar="WORKLOAD")
    stock = workloads.add_parser("stock", help="the stock ticker stream of SIGMOD 2008, section 6")
    stock.add_argument("--events", "-n", type=_non_negative_int, default=100_000)
    stock.add_argument("--symbols", "-k", type=_positive_int, default=2)
    stock.add_argument("--increase-prob", "-p", type=float, default=0.7)
    stock.add_argument("--seed", "-s", type=int, default=0)
    stock.add_argument("--step", type=_non_negative_int, default=1, help="price step (1)")
    _add_output_options(stock)
    hadoop = workloads.add_parser(
        "hadoop", help="a Hadoop cluster-monitoring trace (SIGMOD 2014, section 6.5)"
    )
    hadoop.add_argument("--jobs", "-j", type=_positive_int, default=100)
    hadoop.add_argument("--nodes", type=_positive_int, default=20)
    hadoop.add_argument("--seed", "-s", type=int, default=0)
    hadoop.add_argument("--straggler-prob", type=float, default=0.02)
    _add_output_options(hadoop)
    return parser


def _version() -> str:
    from kleene import __version__

    return __version__


def _add_output_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--output", "-o", required=True, help="a .csv, .jsonl or .parquet file; - for stdout"
    )
    parser.add_argument(
        "--output-format",
        "--format",
        dest="output_format",
        choices=FORMATS,
        help="output format, when the extension does not tell (--format: older name)",
    )


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


def _non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number of at least 0, got {text}")
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
        return cmd_generate(args, out, err)
    except CliError as exc:
        _error(err, str(exc))
        return exc.code
    except QueryError as exc:
        _error(err, str(exc))
        return EXIT_USAGE
    except FormatError as exc:
        _error(err, str(exc))
        return EXIT_USAGE
    except EventError as exc:
        _error(err, _naming_input(args, str(exc)))
        return EXIT_FAILURE
    except KleeneError as exc:
        _error(err, str(exc))
        return EXIT_FAILURE
    except KeyboardInterrupt:
        _error(err, "interrupted")
        return 130
    except BrokenPipeError:
        # the reader of standard output went away (``kleene ... -o - | head``)
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
        return EXIT_FAILURE
    except OSError as exc:
        _error(err, _os_message(exc))
        return EXIT_FAILURE
    except Exception as exc:
        if os.environ.get("KLEENE_TRACEBACK"):
            traceback.print_exc()
        _error(err, f"unexpected {type(exc).__name__}: {exc} (set KLEENE_TRACEBACK=1 to see where)")
        return EXIT_FAILURE


def _error(console: Console, message: str) -> None:
    console.print(f"kleene: error: {message}", markup=False, highlight=False, soft_wrap=True)


def _naming_input(args: argparse.Namespace, message: str) -> str:
    """An event error of ``kleene run`` names the input it came from."""
    source = getattr(args, "input", None)
    if args.command != "run" or source is None:
        return message
    name = "standard input" if is_stdio(source) else str(source)
    return message if name in message else f"{name}: {message}"


def _os_message(exc: OSError) -> str:
    if exc.strerror and exc.filename:
        return f"{exc.filename}: {exc.strerror}"
    return str(exc) or type(exc).__name__


# --- query files -----------------------------------------------------------------------


def load_query(path: str, args: argparse.Namespace, **fields: Any) -> Query | Program:
    """Read and compile a query file (one query, or a program with DEFINE and UNION);
    query errors name the file and show the caret."""
    import kleene
    from kleene.lang import parse_program

    query_path = Path(path)
    if not is_stdio(path) and query_path.is_dir():
        raise CliError(f"the query file {path} is a directory")
    if not is_stdio(path) and not query_path.is_file():
        raise CliError(f"query file not found: {path}")
    try:
        data = sys.stdin.buffer.read() if is_stdio(path) else query_path.read_bytes()
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"{_shown(path, 'standard input')}: the query is not UTF-8 text") from exc
    except OSError as exc:
        raise CliError(f"cannot read the query file {path}: {exc.strerror or exc}") from exc
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
        raise CliError(f"{_shown(path, 'standard input')}: {rendered}", EXIT_USAGE) from exc


# --- kleene run ------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace, out: Console, err: Console) -> int:
    started = time.perf_counter()
    if is_stdio(args.query_file) and is_stdio(args.input):
        raise CliError("the query file and --input cannot both be standard input", EXIT_USAGE)
    input_format = _run_formats(args)
    rejected_path = _rejected_path(args)
    _check_rejected_format(rejected_path)
    _refuse_overwrites(
        [("input", args.input), ("query file", args.query_file)],
        [("--output", args.output), ("--rejected", rejected_path)],
    )
    fields = {
        "time_field": args.time_field,
        "type_field": args.type_field,
        "id_field": args.id_field,
    }
    limits = {"max_runs": args.max_runs, "max_matches": args.max_matches or None}
    query = load_query(
        args.query_file,
        args,
        allowed_lateness=args.allowed_lateness,
        time_unit=args.time_unit,
        **limits,
        **fields,
    )
    if not is_stdio(args.input) and not Path(args.input).exists():
        raise CliError(f"input file not found: {args.input}")
    if args.schema and input_format is not Format.CSV:
        raise CliError("--schema declares CSV column types; the input is not CSV", EXIT_USAGE)
    stats = RunStats(
        engine=args.engine,
        query_file=args.query_file,
        input=_shown(args.input, "standard input"),
        input_format=input_format.value,
        output=_shown(args.output),
        rejected_path=_shown(rejected_path) if rejected_path else "not written (no --rejected)",
    )
    from kleene.program import Program

    if args.engine == "spark" and isinstance(query, Program):
        raise CliError(
            f"{args.query_file} is a program (DEFINE or UNION), which runs on the local "
            "engine only: use --engine local",
            EXIT_USAGE,
        )
    if args.engine == "spark":
        _check_spark_input(args.input, input_format)
    sinks = _open_sinks(args.output, args.output_format, rejected_path, query)
    with sinks[0] as matches, sinks[1] as rejected:
        if args.engine == "spark" and not isinstance(query, Program):
            _run_spark(args, query, input_format, matches, rejected, stats)
        else:
            _run_local(args, query, input_format, matches, rejected, stats, err)
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


def _refuse_overwrites(
    inputs: Sequence[tuple[str, str]], outputs: Sequence[tuple[str, str | None]]
) -> None:
    """Refuse an output that is an input (the same file, also through a link), that is
    another output, or that is a directory. Each item is (what it is, its path)."""
    written = [(name, path) for name, path in outputs if path and not is_stdio(path)]
    for name, path in written:
        if Path(path).is_dir():
            raise CliError(f"{name} {path} is a directory: give a file name", EXIT_USAGE)
        for source_name, source in inputs:
            if not is_stdio(source) and _same_file(source, path):
                raise CliError(
                    f"{name} {path} is the {source_name}: refusing to overwrite it, "
                    "choose another output path",
                    EXIT_USAGE,
                )
    for i, (first, first_path) in enumerate(written):
        for second, second_path in written[i + 1 :]:
            if _same_file(first_path, second_path):
                raise CliError(
                    f"{first} and {second} name the same file ({first_path})", EXIT_USAGE
                )


def _same_file(first: str | Path, second: str | Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:  # one does not exist yet
        return Path(first).resolve() == Path(second).resolve()


def _shown(path: str | Path, stdio: str = "standard output") -> str:
    return stdio if is_stdio(path) else str(path)


def _check_spark_input(path: str, fmt: Format) -> None:
    if is_stdio(path):
        raise CliError("the spark engine reads files, not standard input", EXIT_USAGE)
    if fmt is Format.JSONL and Path(path).is_file() and is_json_array(path):
        raise CliError(
            f"{path} is a JSON array; the spark engine reads JSON lines (one object per "
            "line): convert it, or use --engine local",
            EXIT_USAGE,
        )


def _open_sinks(
    output: str, output_format: str | None, rejected: str | None, query: Query | Program
) -> tuple[MatchSink, RejectedSink]:
    matches = MatchSink(
        output,
        output_format,
        variables=getattr(query, "variables", ()),
        partition_names=getattr(query, "partition_attributes", ()),
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
    query: Query | Program,
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
    query.check_columns(events)
    total = len(events)
    stats.events = total
    engine = getattr(getattr(query, "config", None), "engine", None)
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
    frame = _spark_read(session, args.input, input_format, args.schema)
    if frame.columns:  # an empty file has none
        check_column_names([query.plan], frame.columns, query.fields)
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


def _spark_read(session: Any, path: str, fmt: Format, schema: str | None = None) -> Any:
    """The input as a Spark DataFrame. A CSV or JSON lines file is read by kleene's own
    reader (the same column types and order, and for CSV the same bad-cell reasons, as
    the local engine), then handed to Spark; a JSON lines file whose fields mix value
    kinds is read by Spark, its columns in the file's order."""
    if fmt is Format.PARQUET:
        return session.read.parquet(path)
    events = read_events(path, fmt, schema=schema)
    if isinstance(events, pa.Table):
        return session.createDataFrame(events)
    return session.read.json(path).select(*[str(c) for c in events.columns])


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
    """Print each file's compiled plan (a header names the file when there are several);
    with ``--png``, draw every automaton: one per query, one per statement of a program."""
    loaded = [(path, load_query(path, args)) for path in args.query_files]
    for number, (path, query) in enumerate(loaded):
        if len(loaded) > 1:
            out.print(("\n" if number else "") + f"# {path}", markup=False, highlight=False)
        out.print(query.explain(), markup=False, highlight=False, soft_wrap=True)
    if args.png:
        drawings = [
            (path, label, statement)
            for path, query in loaded
            for label, statement in _statements(query)
        ]
        stems = [("stdin" if is_stdio(p) else Path(p).stem, label) for p, label, _ in drawings]
        targets = picture_paths(args.png, stems)
        _refuse_overwrites(
            [("query file", str(p)) for p, _, _ in drawings], [("--png", str(t)) for t in targets]
        )
        try:
            import matplotlib  # noqa: F401
        except ImportError as exc:
            raise CliError(
                "drawing the automaton needs matplotlib: pip install 'kleene[bench]'"
            ) from exc
        from kleene.io.automaton import diagram_from_query, draw_png

        for (path, label, statement), target in zip(drawings, targets, strict=True):
            title = ("stdin" if is_stdio(path) else Path(path).name) + (
                f" · {label}" if label else ""
            )
            drawn = draw_png(diagram_from_query(statement, title=title), target)
            out.print(f"automaton drawn to {drawn}", markup=False, highlight=False)
    return EXIT_OK


def _statements(query: Query | Program) -> list[tuple[str | None, Query]]:
    """The queries to draw, each with its label: none for a single query; for a program,
    the DEFINE name or ``returned``, with ``-2``, ``-3``... for further UNION branches."""
    from kleene.program import Program

    if not isinstance(query, Program):
        return [(None, query)]
    groups = [*query.definitions.items(), ("returned", query.queries)]
    return [
        (name if k == 0 else f"{name}-{k + 1}", branch)
        for name, branches in groups
        for k, branch in enumerate(branches)
    ]


def picture_paths(target: str, drawings: Sequence[tuple[str, str | None]]) -> list[Path]:
    """Where ``--png TARGET`` draws each automaton, given its (file stem, statement label).

    A TARGET ending in ``.png`` is the file of a single automaton; with several, each goes
    to ``TARGET-without-.png.NAME.png``, NAME being the statement label, prefixed with the
    file stem when several files are drawn. Any other TARGET is a folder (created when
    missing) holding ``STEM.png`` per query file and ``STEM.LABEL.png`` per statement.
    """
    base = Path(target)
    several_files = len({stem for stem, _ in drawings}) > 1
    if base.suffix.lower() == ".png":
        if len(drawings) == 1:
            return [base]
        names = [
            ".".join(part for part in (stem if several_files else None, label) if part)
            for stem, label in drawings
        ]
        paths = [base.with_name(f"{base.stem}.{name}.png") for name in names]
    else:
        if base.exists() and not base.is_dir():
            raise CliError(f"--png {target} is neither a .png file name nor a folder", EXIT_USAGE)
        paths = [
            base / (".".join(part for part in (stem, label) if part) + ".png")
            for stem, label in drawings
        ]
    seen: set[Path] = set()
    for path in paths:
        if path in seen:
            raise CliError(
                f"two automata would be drawn to {path}: give query files of different names",
                EXIT_USAGE,
            )
        seen.add(path)
    return paths


# --- kleene generate -------------------------------------------------------------------


def cmd_generate(args: argparse.Namespace, out: Console, err: Console) -> int:
    from kleene.datagen import hadoop, stock

    fmt = infer_format(args.output, args.output_format, option="--output-format")
    _refuse_overwrites([], [("--output", args.output)])
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
    (err if is_stdio(args.output) else out).print(
        f"wrote {table.num_rows:,} {what} to {_shown(args.output)} ({fmt.value}) "
        f"in {seconds:.2f} s",
        markup=False,
        highlight=False,
    )
    return EXIT_OK
