"""The argument parser of the ``kleene`` command and the validators of its options."""

from __future__ import annotations

import argparse

from kleene import kinds
from kleene.io import Format
from kleene.runtime.limits import DEFAULT_MAX_RUNS
from kleene.times import TIME_UNITS

FORMATS = [f.value for f in Format]
INTERVAL_ENGINES = ("auto", "points", "events")
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kleene",
        description="Complex event processing with SASE+ pattern queries.",
        epilog="Exit codes: 0 ok, 1 runtime failure, 2 usage or query error.",
    )
    parser.add_argument("--version", action="version", version=f"kleene {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run_arguments(commands.add_parser("run", help="match a query over an event file"))
    _add_explain_arguments(
        commands.add_parser("explain", help="show the compiled automaton of queries and programs")
    )
    _add_generate_arguments(commands.add_parser("generate", help="generate a workload"))
    return parser


def _add_run_arguments(run: argparse.ArgumentParser) -> None:
    """The options of ``kleene run``."""
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
    run.add_argument(
        "--engine",
        choices=("local", "spark", *INTERVAL_ENGINES),
        default="local",
        help="local or spark; with --time interval: auto (the default), points or events",
    )
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


def _add_explain_arguments(explain: argparse.ArgumentParser) -> None:
    """The options of ``kleene explain``."""
    explain.add_argument("query_files", metavar="QUERY_FILE", nargs="+")
    explain.add_argument(
        "--png",
        metavar="PATH",
        help="also draw each automaton. X.png: one picture to X.png, several to "
        "X.<statement>.png (X.<file>.<statement>.png for several files); any other PATH is "
        "a folder of <file>.png and <file>.<statement>.png",
    )
    _add_query_options(explain)
    explain.add_argument(
        "--engine",
        choices=INTERVAL_ENGINES,
        help="with --time interval: the framework (auto, points or events)",
    )


def _add_generate_arguments(generate: argparse.ArgumentParser) -> None:
    """The workloads of ``kleene generate`` and their options."""
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
    hadoop.add_argument(
        "--imprecise",
        action="store_true",
        help="add lower/upper interval columns in units of 0.1 s: +-0.5 s for Hadoop "
        "events, +-7.5 s for Ganglia samples (VLDB 2010, section 5.2)",
    )
    _add_output_options(hadoop)
    uncertain = workloads.add_parser(
        "uncertain",
        help="events with uncertainty intervals [t - delta, t + delta] (VLDB 2010, 5.1)",
    )
    uncertain.add_argument("--events", "-n", type=_non_negative_int, default=100_000)
    uncertain.add_argument(
        "--delta", "-d", type=_non_negative_int, default=5, help="half interval size (5)"
    )
    uncertain.add_argument(
        "--period", type=_positive_int, default=1000, help="value cycles 1..period (1000)"
    )
    _add_output_options(uncertain)
    _add_temporal_workloads(workloads)
    _add_event_set_workloads(workloads)


def _add_temporal_workloads(workloads: argparse._SubParsersAction) -> None:
    """``kleene generate cars`` and ``situations``: the data of TPStream, section 6.1."""
    cars = workloads.add_parser(
        "cars", help="Linear-Road-like car reports every second (TPStream, section 6.1)"
    )
    cars.add_argument("--cars", "-c", type=_positive_int, default=1000, help="cars (1000)")
    cars.add_argument(
        "--duration", "-d", type=_positive_int, default=3600, help="seconds simulated (3600)"
    )
    cars.add_argument("--seed", "-s", type=int, default=0)
    cars.add_argument(
        "--aggressive",
        "-a",
        type=float,
        default=0.05,
        help="share of aggressive drivers, 0-1 (0.05)",
    )
    cars.add_argument(
        "--episodes",
        type=_non_negative_float,
        default=6.0,
        help="aggressive episodes per hour an aggressive driver is on the road (6)",
    )
    _add_output_options(cars)
    situations = workloads.add_parser(
        "situations",
        help="boolean situation streams holding 10-100 s with gaps of 10-50 s "
        "(TPStream, section 6.1)",
    )
    situations.add_argument(
        "--duration", "-n", type=_non_negative_int, default=100_000, help="events, one a second"
    )
    situations.add_argument(
        "--attributes", "-k", type=_positive_int, help="boolean attributes A, B, ... (3)"
    )
    situations.add_argument("--names", help="comma-separated attribute names instead of A, B, ...")
    situations.add_argument(
        "--ratio",
        action="append",
        metavar="W:W:...",
        help="occurrence ratio of the attributes, like 1:50:50; repeat for phases that "
        "split the stream evenly (1:1:1 -> 1:50:50 -> 50:1:50 of section 6.4.2)",
    )
    situations.add_argument(
        "--hold",
        action="append",
        metavar="[NAME=]LOW-HIGH",
        help="seconds a situation lasts (10-100); NAME=LOW-HIGH for one attribute only",
    )
    situations.add_argument(
        "--gap", metavar="LOW-HIGH", help="seconds between two situations (10-50)"
    )
    situations.add_argument("--seed", "-s", type=int, default=0)
    _add_output_options(situations)


def _add_event_set_workloads(workloads: argparse._SubParsersAction) -> None:
    """``kleene generate chemo`` and ``trades``: the data of the match-window paper."""
    chemo = workloads.add_parser(
        "chemo", help="chemotherapy events PID, L, V, U (match-window paper, Figure 1)"
    )
    chemo.add_argument("--patients", "-p", type=_non_negative_int, default=100)
    chemo.add_argument("--days", "-d", type=_positive_int, default=365)
    chemo.add_argument("--seed", "-s", type=int, default=0)
    _add_output_options(chemo)
    trades = workloads.add_parser(
        "trades", help="share trades with millisecond timestamps (match-window paper, 6.1)"
    )
    trades.add_argument("--events", "-n", type=_non_negative_int, default=1_000_000)
    trades.add_argument("--symbols", "-k", type=_positive_int, default=10)
    trades.add_argument("--rate", type=float, default=8.0, help="trades per second on average (8)")
    trades.add_argument("--seed", "-s", type=int, default=0)
    _add_output_options(trades)


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
        "--time",
        choices=kinds.time_models(),
        default="point",
        help="the events' time model (kleene.kinds): point: events occur at their time; "
        "interval: at an unknown instant of an uncertainty interval (VLDB 2010)",
    )
    parser.add_argument("--lower-field", default="lower", help="--time interval: lower bound")
    parser.add_argument("--upper-field", default="upper", help="--time interval: upper bound")
    parser.add_argument(
        "--uncertainty",
        type=_non_negative_int,
        help="--time interval: the interval [t - D, t + D] around the time column",
    )
    parser.add_argument(
        "--u-max",
        type=_non_negative_int,
        help="--time interval: the largest upper - lower (longer intervals are rejected); "
        "results then stream, else it is measured over the input",
    )
    parser.add_argument(
        "--confidence",
        type=float,
        help="--time interval: keep results with confidence above this",
    )
    parser.add_argument(
        "--strategy", choices=STRATEGIES, help="override the query's event selection strategy"
    )
    parser.add_argument(
        "--algorithm",
        choices=("auto", "automaton", "jointree"),
        help="event-set patterns: the matching algorithm (auto: the automaton)",
    )
    parser.add_argument(
        "--preprocessing",
        help="event-set patterns: the two-phase strategy's steps, letters of fpc "
        "(filtering, partitioning, conditions; default fpc) or none",
    )
    parser.add_argument(
        "--non-overlap", action="store_true", help="output non-overlapping matches only"
    )
    parser.add_argument(
        "--match-windows",
        action="store_true",
        help="SASE+ queries: only the events of candidate match windows reach the engine "
        "(SEQ without negation, skip till next or any match; refused otherwise)",
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
