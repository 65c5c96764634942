"""Reading and compiling the query file a command is given: its kind told by the kind
registry (:func:`kleene.kinds.kind_of_text`, from its tokens and ``--time``), its
options from the command's flags (:mod:`kleene.cli._flags`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from kleene import kinds
from kleene.cli._common import EXIT_USAGE, CliError, shown
from kleene.cli._flags import compile_options
from kleene.cli._kinds import CliPart, part_of
from kleene.errors import QueryError
from kleene.io import is_stdio
from kleene.kinds import Kind

T = TypeVar("T")


@dataclass(frozen=True)
class Loaded:
    """A compiled query file: its kind and its query."""

    kind: Kind
    query: Any

    @property
    def part(self) -> CliPart:
        return part_of(self.kind)


def load_query(path: str, args: argparse.Namespace) -> Loaded:
    """Read and compile a query file of any kind; a flag its kind does not take is a
    usage error, and query errors name the file and show the caret."""
    text = read_query(path)
    kind = _compiled(path, text, lambda: kinds.kind_of_text(text, time=args.time))
    options = compile_options(kind, args)
    return Loaded(kind, _compiled(path, text, lambda: kind.compile(text, **options)))


def read_query(path: str) -> str:
    """The text of a query file (``-``: standard input)."""
    query_path = Path(path)
    if not is_stdio(path) and query_path.is_dir():
        raise CliError(f"the query file {path} is a directory")
    if not is_stdio(path) and not query_path.is_file():
        raise CliError(f"query file not found: {path}")
    try:
        data = sys.stdin.buffer.read() if is_stdio(path) else query_path.read_bytes()
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CliError(f"{shown(path, 'standard input')}: the query is not UTF-8 text") from exc
    except OSError as exc:
        raise CliError(f"cannot read the query file {path}: {exc.strerror or exc}") from exc


def _compiled(path: str, text: str, compile_it: Callable[[], T]) -> T:
    """The compiled query; query errors name the file and show the caret."""
    try:
        return compile_it()
    except QueryError as exc:
        rendered = exc if exc.text else exc.with_text(text)
        raise CliError(f"{shown(path, 'standard input')}: {rendered}", EXIT_USAGE) from exc
