"""Reading and compiling the query file a command is given."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kleene.cli._common import EXIT_USAGE, CliError, shown
from kleene.errors import QueryError
from kleene.io import is_stdio

if TYPE_CHECKING:
    from kleene.program import Program
    from kleene.query import Query


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
        raise CliError(f"{shown(path, 'standard input')}: the query is not UTF-8 text") from exc
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
        raise CliError(f"{shown(path, 'standard input')}: {rendered}", EXIT_USAGE) from exc
