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

The package holds one module per job: ``_args`` the argument parser, ``_common`` the
exit codes, :class:`CliError` and the path checks, ``_query`` reading query files (their
kind told by the registry, :mod:`kleene.kinds`), ``_flags`` the one check of the flags
against the kind, ``_kinds`` what a kind's command-line part holds (its ``Kind.cli``
entry: ``_sase``, ``_interval``, ``_ses``, ``_tpstream``),
``_run``/``_spark``/``_summary`` the ``run`` command, ``_explain`` and ``_generate``
the other two. This module parses the arguments, dispatches, and turns errors into
messages and exit codes.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import traceback
from collections.abc import Sequence

from rich.console import Console

from kleene.cli._args import (
    CLI_MAX_MATCHES,
    DEFAULT_BATCH,
    FORMATS,
    RESULT_FORMATS,
    STRATEGIES,
    build_parser,
)
from kleene.cli._common import EXIT_FAILURE, EXIT_OK, EXIT_USAGE, CliError
from kleene.cli._explain import cmd_explain, picture_paths
from kleene.cli._generate import cmd_generate
from kleene.cli._kinds import CliPart
from kleene.cli._query import load_query
from kleene.cli._run import cmd_run
from kleene.cli._summary import RunStats, summary_table
from kleene.errors import EventError, KleeneError, QueryError
from kleene.io import FormatError, is_stdio

__all__ = [
    "CLI_MAX_MATCHES",
    "DEFAULT_BATCH",
    "EXIT_FAILURE",
    "EXIT_OK",
    "EXIT_USAGE",
    "FORMATS",
    "RESULT_FORMATS",
    "STRATEGIES",
    "CliError",
    "CliPart",
    "RunStats",
    "build_parser",
    "cmd_explain",
    "cmd_generate",
    "cmd_run",
    "load_query",
    "main",
    "picture_paths",
    "summary_table",
]


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
