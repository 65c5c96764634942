"""``kleene explain``: print the compiled plan of query files and, with ``--png``, draw
each automaton (where the pictures go: :func:`picture_paths`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from kleene.cli._common import EXIT_OK, EXIT_USAGE, CliError, refuse_overwrites
from kleene.cli._query import Loaded, load_query
from kleene.io import is_stdio


def cmd_explain(args: argparse.Namespace, out: Console) -> int:
    """Print each file's compiled plan (a header names the file when there are several);
    with ``--png``, draw each query as its kind draws it (a SASE+ query its automaton,
    a program one automaton per statement, a TPStream query its time line)."""
    loaded = [(path, load_query(path, args)) for path in args.query_files]
    for number, (path, query) in enumerate(loaded):
        if len(loaded) > 1:
            out.print(("\n" if number else "") + f"# {path}", markup=False, highlight=False)
        out.print(query.query.explain(), markup=False, highlight=False, soft_wrap=True)
    if args.png:
        _draw(args.png, loaded, out)
    return EXIT_OK


def _draw(png: str, loaded: list[tuple[str, Loaded]], out: Console) -> None:
    """Draw every query to its picture (:func:`picture_paths`); the kinds of the
    queries all draw (``--png`` is refused for the others when they are loaded)."""
    drawings = [
        (path, label, statement, query.part)
        for path, query in loaded
        for label, statement in query.part.statements(query.query)
    ]
    stems = [("stdin" if is_stdio(p) else Path(p).stem, label) for p, label, _, _ in drawings]
    targets = picture_paths(png, stems)
    refuse_overwrites(
        [("query file", str(p)) for p, _, _, _ in drawings], [("--png", str(t)) for t in targets]
    )
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise CliError("drawing needs matplotlib: pip install 'kleene[bench]'") from exc
    for (path, label, statement, part), target in zip(drawings, targets, strict=True):
        title = ("stdin" if is_stdio(path) else Path(path).name) + (f" · {label}" if label else "")
        assert part.draw is not None  # the flags' check: only kinds that draw take --png
        drawn = part.draw(statement, target, title)
        out.print(f"{part.drawing} drawn to {drawn}", markup=False, highlight=False)


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
