"""Reading and compiling the query file a command is given."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kleene.cli._common import EXIT_USAGE, CliError, shown
from kleene.cli._interval import check_point_options, interval_options
from kleene.cli._kinds import kind_of_text, register
from kleene.cli._ses import SES_KIND
from kleene.cli._tpstream import TPSTREAM_KIND
from kleene.errors import QueryError
from kleene.io import is_stdio

if TYPE_CHECKING:
    from kleene.program import Program
    from kleene.query import Query

T = TypeVar("T")

register(SES_KIND)  # the kinds of query beside point and interval queries
register(TPSTREAM_KIND)


def load_query(path: str, args: argparse.Namespace, **fields: Any) -> Any:
    """Read and compile a query file (one query, or a program with DEFINE and UNION;
    with ``--time interval``, a query over interval events; a query of a registered
    kind, :mod:`kleene.cli._kinds`, such as an event-set pattern); query errors name
    the file and show the caret."""
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
        raise CliError(f"{shown(path, 'standard input')}: the query is not UTF-8 text") from exc
    except OSError as exc:
        raise CliError(f"cannot read the query file {path}: {exc.strerror or exc}") from exc
    if getattr(args, "match_windows", False) and (args.time == "interval" or kind_of_text(text)):
        raise CliError("--match-windows applies to SASE+ queries over point events", EXIT_USAGE)
    if args.time == "interval":
        return _compiled(
            path,
            text,
            lambda: kleene.compile(text, time="interval", **interval_options(args, fields)),
        )
    kind = kind_of_text(text)
    if kind is not None:
        return _compiled(path, text, lambda: kind.compile(text, args, fields))
    check_point_options(args)
    given = [o for o in ("algorithm", "preprocessing") if getattr(args, o, None)]
    if given:
        raise CliError(f"--{given[0]} applies to event-set patterns only", EXIT_USAGE)
    options: dict[str, Any] = dict(fields)
    if args.strategy:
        options["strategy"] = args.strategy
    if args.non_overlap:
        options["output"] = "non_overlap"
    if getattr(args, "match_windows", False):
        options["match_windows"] = True

    def compiled() -> Query | Program:
        if parse_program(text).single is None:
            if options.pop("match_windows", False):
                raise CliError("--match-windows applies to one query, not a program", EXIT_USAGE)
            return kleene.compile_program(text, **options)
        return kleene.compile(text, **options)

    return _compiled(path, text, compiled)


def _compiled(path: str, text: str, compile_it: Callable[[], T]) -> T:
    """The compiled query; query errors name the file and show the caret."""
    try:
        return compile_it()
    except QueryError as exc:
        rendered = exc if exc.text else exc.with_text(text)
        raise CliError(f"{shown(path, 'standard input')}: {rendered}", EXIT_USAGE) from exc
