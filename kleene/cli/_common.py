"""What every command of the ``kleene`` CLI shares: the exit codes, the error carrying
one, and the checks on the paths a command reads and writes."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from kleene.io import is_stdio

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class CliError(Exception):
    """An error to report in one message, with the exit code to leave with."""

    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


def refuse_overwrites(
    inputs: Sequence[tuple[str, str]], outputs: Sequence[tuple[str, str | None]]
) -> None:
    """Refuse an output that is an input (the same file, also through a link), that is
    another output, or that is a directory. Each item is (what it is, its path)."""
    written = [(name, path) for name, path in outputs if path and not is_stdio(path)]
    for name, path in written:
        if Path(path).is_dir():
            raise CliError(f"{name} {path} is a directory: give a file name", EXIT_USAGE)
        for source_name, source in inputs:
            if not is_stdio(source) and same_file(source, path):
                raise CliError(
                    f"{name} {path} is the {source_name}: refusing to overwrite it, "
                    "choose another output path",
                    EXIT_USAGE,
                )
    for i, (first, first_path) in enumerate(written):
        for second, second_path in written[i + 1 :]:
            if same_file(first_path, second_path):
                raise CliError(
                    f"{first} and {second} name the same file ({first_path})", EXIT_USAGE
                )


def same_file(first: str | Path, second: str | Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:  # one does not exist yet
        return Path(first).resolve() == Path(second).resolve()


def shown(path: str | Path, stdio: str = "standard output") -> str:
    return stdio if is_stdio(path) else str(path)
