"""Writing a table of events to CSV, JSON lines or Parquet, chosen by file extension.

Every file is written through a temporary file beside it, renamed over the target only
when complete (:func:`replacing`): a failed write never leaves a half-written file in
place of an old one, nor a temporary file behind. ``-`` writes to standard output.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from kleene.io.formats import Format, infer_format, is_stdio
from kleene.io.jsonl import write_table_jsonl


def write_table(table: pa.Table, path: str | Path, fmt: str | Format | None = None) -> Format:
    """Write ``table`` to ``path`` (parent folders are created, ``-`` is standard output);
    returns the format used."""
    kind = infer_format(path, fmt, option="--output-format")
    if is_stdio(path):
        with tempfile.TemporaryDirectory(prefix="kleene-stdout-") as folder:
            spooled = Path(folder) / f"out.{kind.value}"
            _write(table, spooled, kind)
            with spooled.open("rb") as data:
                shutil.copyfileobj(data, sys.stdout.buffer)
            sys.stdout.buffer.flush()
        return kind
    with replacing(Path(path)) as partial:
        _write(table, partial, kind)
    return kind


def _write(table: pa.Table, path: Path, kind: Format) -> None:
    if kind is Format.CSV:
        with pa.output_stream(str(path), compression="detect") as out:
            pa_csv.write_csv(table, out)
    elif kind is Format.JSONL:
        write_table_jsonl(table, path)
    else:
        pq.write_table(table, path)


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` (see :func:`partial_beside`) that replaces
    ``path`` when the block ends normally and is removed when it fails."""
    partial = partial_beside(path)
    try:
        yield partial
        commit(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def partial_beside(path: Path) -> Path:
    """A new empty temporary file in ``path``'s folder (created if needed) whose name ends
    with ``path``'s name, so its suffixes tell the same format and compression."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=path.parent, prefix=".kleene-", suffix="-" + path.name)
    except OSError as exc:  # name the file asked for, not the temporary one
        raise type(exc)(exc.errno, exc.strerror, str(path)) from exc
    os.close(handle)
    return Path(name)


def commit(partial: Path, path: Path) -> None:
    """Rename the finished ``partial`` over ``path``, with ``path``'s permissions."""
    os.chmod(partial, _mode(path))
    os.replace(partial, path)


def _mode(path: Path) -> int:
    """The permissions the file gets: those of the file it replaces, else the usual ones."""
    with contextlib.suppress(OSError):
        return path.stat().st_mode & 0o777
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask
