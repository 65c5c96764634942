"""``kleene explain``: print the compiled plan of query files and, with ``--png``, draw
each automaton (where the pictures go: :func:`picture_paths`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from kleene.cli._common import EXIT_OK, EXIT_USAGE, CliError, refuse_overwrites
from kleene.cli._kinds import kind_of
from kleene.cli._query import load_query
from kleene.imprecise import IntervalQuery
from kleene.io import is_stdio

if TYPE_CHECKING:
    from kleene.program import Program
    from kleene.query import Query


def cmd_explain(args: argparse.Namespace, out: Console) -> int:
    """Print each file's compiled plan (a header names the file when there are several);
    with ``--png``, draw every automaton: one per query, one per statement of a program."""
    loaded = [(path, load_query(path, args)) for path in args.query_files]
    for number, (path, query) in enumerate(loaded):
        if len(loaded) > 1:
            out.print(("\n" if number else "") + f"# {path}", markup=False, highlight=False)
        out.print(query.explain(), markup=False, highlight=False, soft_wrap=True)
    if args.png and args.time == "interval":
        raise CliError("--png draws the automata of point queries, not --time interval", EXIT_USAGE)
    if args.png:
        drawings = [
            (path, label, statement)
            for path, query in loaded
            if not isinstance(query, IntervalQuery)
            for label, statement in _statements(query)
        ]
        stems = [("stdin" if is_stdio(p) else Path(p).stem, label) for p, label, _ in drawings]
        targets = picture_paths(args.png, stems)
        refuse_overwrites(
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
            kind = kind_of(statement)
            if kind is not None and kind.draw is not None:
                drawn = kind.draw(statement, target, title)
                out.print(f"pattern drawn to {drawn}", markup=False, highlight=False)
                continue
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
