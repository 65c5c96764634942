"""Reading event files (CSV with a header row, JSON lines or a JSON array, Parquet) into
tables.

A directory is read as a Parquet dataset (its files in name order; names starting with
``_`` or ``.`` are skipped, as Spark writes them). ``-`` reads standard input, whose format
must be given. A JSON file whose first character (after white space) is ``[`` is a JSON
array of objects, typed like JSON lines. An empty text file (or ``[]``) holds zero events.
A file that cannot be read (binary data, text that is not UTF-8, a truncated Parquet
file, no permission) is an :class:`kleene.errors.EventError` that names it.

Types are inferred by pyarrow: integer, floating, boolean, string and ISO-8601 timestamp
columns come out as such, and an empty CSV cell is a missing value. A CSV column keeps
one type: declared by a ``schema``, or inferred by the majority rule of
:mod:`kleene.io.typed_csv`, whose bad cells reject their rows only. A JSON lines file
whose field holds values of different kinds (``5`` in one line, ``"five"`` in another)
cannot become an Arrow column; it is read into a pandas DataFrame (Python objects in
that field) instead, so the engine can reject just the events whose values are of the
wrong kind.
"""

from __future__ import annotations

import codecs
import contextlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TypeAlias

import pandas as pd
import pyarrow as pa
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from kleene.errors import EventError
from kleene.io.formats import Format, FormatError, infer_format, is_stdio
from kleene.io.typed_csv import Schema, read_typed_csv

Events: TypeAlias = pa.Table | pd.DataFrame


def read_events(
    path: str | Path, fmt: str | Format | None = None, schema: Schema | None = None
) -> Events:
    """Read an event file; the format is taken from ``fmt`` or else the file extension.

    Raises FileNotFoundError for a missing file, :class:`kleene.io.FormatError` for an
    unknown format and :class:`kleene.errors.EventError` for a file that cannot be parsed.
    ``schema`` declares CSV column types (see :mod:`kleene.io.typed_csv`).
    """
    if is_stdio(path):
        return _read_stdin(infer_format(path, fmt), schema)
    path = Path(path)
    kind = input_format(path, fmt)
    if not path.exists():
        raise FileNotFoundError(f"input file not found: {path}")
    if path.is_dir() and kind is not Format.PARQUET:
        raise EventError(
            f"{path} is a directory: only a Parquet dataset can be read from a directory, "
            f"give a {kind.value} file"
        )
    try:
        if kind is Format.PARQUET:
            return pq.read_table(path)
        head = _text_head(path, kind)
        if kind is Format.CSV:
            return _text_columns(_read_csv(path, schema), path)
        if head.lstrip().startswith(b"["):
            return _valid_text(_read_json_array(path), path)
        return _valid_text(_read_jsonl(path), path)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise EventError(f"cannot read {path} as {kind.value}: {_describe(exc)}") from exc


def input_format(
    path: str | Path, fmt: str | Format | None = None, *, option: str | None = None
) -> Format:
    """The format of an input: ``fmt`` when given, else the extension, else Parquet for a
    directory (a dataset). Raises :class:`kleene.io.FormatError` when none tells (its
    advice names ``option``, the command-line option that gives the format)."""
    try:
        return infer_format(path, fmt, option=option)
    except FormatError:
        if not is_stdio(path) and Path(path).is_dir():
            return Format.PARQUET
        raise


def is_json_array(path: str | Path) -> bool:
    """Whether a JSON file holds an array (its first non-space character is ``[``)."""
    try:
        with pa.input_stream(str(path), compression="detect") as stream:
            head = stream.read(_HEAD_BYTES)
    except (OSError, pa.ArrowException):
        return False
    return head.removeprefix(codecs.BOM_UTF8).lstrip().startswith(b"[")


def _read_stdin(kind: Format, schema: Schema | None) -> Events:
    """Standard input, spooled to a temporary file so every reader works on it."""
    with tempfile.TemporaryDirectory(prefix="kleene-stdin-") as folder:
        spooled = Path(folder) / f"stdin.{kind.value}"
        with spooled.open("wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out)
        try:
            return read_events(spooled, kind, schema)
        except EventError as exc:
            raise EventError(str(exc).replace(str(spooled), "standard input")) from exc


_HEAD_BYTES = 1 << 16


def _text_head(path: Path, kind: Format) -> bytes:
    """The first bytes of a text file (decompressed), refused when they are binary or not
    UTF-8, so that garbage is never parsed or echoed."""
    with pa.input_stream(str(path), compression="detect") as stream:
        head = stream.read(_HEAD_BYTES)
    if head.startswith(codecs.BOM_UTF8):
        head = head[len(codecs.BOM_UTF8) :]
    nul = head.find(b"\0")
    if nul >= 0:
        raise EventError(
            f"{path} is not {kind.value} text: it holds binary data (a NUL byte at byte {nul})"
        )
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)
    except UnicodeDecodeError as exc:
        raise EventError(f"{path} is not UTF-8 text (invalid byte at {exc.start})") from exc
    return head


def _text_columns(table: pa.Table, path: Path) -> pa.Table:
    """Refuse a CSV table with a binary column: pyarrow reads text that is not UTF-8 as
    bytes, which would never equal a query's strings."""
    for name, column in zip(table.column_names, table.columns, strict=True):
        if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
            row = next((i for i, v in enumerate(column.to_pylist()) if not _is_utf8(v)), None)
            where = "" if row is None else f" (data row {row + 1})"
            raise EventError(f"{path}: column {name!r} is not UTF-8 text{where}")
    return table


def _valid_text(events: Events, path: Path) -> Events:
    """Refuse a JSON table with text that is not UTF-8 (pyarrow's JSON reader keeps such
    bytes in a string column, where they would never equal a query's strings)."""
    if not isinstance(events, pa.Table):
        return events
    for name, column in zip(events.column_names, events.columns, strict=True):
        try:
            column.validate(full=True)
        except pa.ArrowInvalid as exc:
            raise EventError(f"{path}: field {name!r} holds text that is not UTF-8") from exc
    return events


def _is_utf8(value: bytes | None) -> bool:
    if value is None:
        return True
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_table(
    path: str | Path, fmt: str | Format | None = None, schema: Schema | None = None
) -> pa.Table:
    """Like :func:`read_events` but always a pyarrow Table (EventError when impossible)."""
    events = read_events(path, fmt, schema)
    if isinstance(events, pa.Table):
        return events
    try:
        return pa.Table.from_pandas(events, preserve_index=False)
    except (pa.ArrowException, TypeError, ValueError) as exc:
        raise EventError(f"{path} mixes value kinds in a field: {_first_line(exc)}") from exc


def _read_csv(path: Path, schema: Schema | None = None) -> pa.Table:
    if path.stat().st_size == 0:
        return pa.table({})
    return read_typed_csv(path, schema)


def _read_jsonl(path: Path) -> Events:
    if path.stat().st_size == 0:
        return pa.table({})
    try:
        return pa_json.read_json(path)
    except pa.ArrowInvalid:
        # Mixed value kinds in a field, or a malformed line: read line by line so that
        # a malformed line is reported with its number.
        return _read_jsonl_objects(path)


def _read_jsonl_objects(path: Path) -> pd.DataFrame:
    records: list[dict[str, object]] = []
    with (
        pa.input_stream(str(path), compression="detect") as raw,
        io.TextIOWrapper(raw, encoding="utf-8") as lines,
    ):
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line)
            except json.JSONDecodeError as exc:
                raise EventError(f"{path}, line {number}: not valid JSON ({exc.msg})") from exc
            if not isinstance(value, dict):
                raise EventError(f"{path}, line {number}: expected a JSON object per line")
            records.append(value)
    return _frame(records)


def _read_json_array(path: Path) -> Events:
    """A JSON array of objects, typed as the same objects on JSON lines would be."""
    with pa.input_stream(str(path), compression="detect") as raw:
        text = raw.read().decode("utf-8-sig")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise EventError(
            f"{path}, line {exc.lineno}, column {exc.colno}: not valid JSON ({exc.msg})"
        ) from exc
    if not isinstance(value, list):
        raise EventError(f"{path}: expected a JSON array of objects")
    for number, item in enumerate(value, start=1):
        if not isinstance(item, dict):
            raise EventError(f"{path}: element {number} of the array is not a JSON object")
    if not value:
        return pa.table({})
    lines = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in value)
    try:
        return pa_json.read_json(pa.BufferReader(lines.encode("utf-8")))
    except pa.ArrowInvalid:
        return _frame(value)


def _frame(records: list[dict[str, object]]) -> pd.DataFrame:
    names = list(dict.fromkeys(k for r in records for k in r))
    return pd.DataFrame({name: _typed([r.get(name) for r in records]) for name in names})


def _typed(values: list[object]) -> pd.Series:
    """A column as pyarrow would type it when its values share one kind (ISO-8601 text
    becomes timestamps), else a column of Python objects."""
    try:
        array = pa.array(values)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return pd.Series(values, dtype=object)
    if pa.types.is_string(array.type) and array.null_count < len(array):
        with contextlib.suppress(pa.ArrowException):
            array = array.cast(pa.timestamp("us"))
    return array.to_pandas()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _describe(exc: BaseException, limit: int = 160) -> str:
    """A one-line reason for a read failure, with no raw bytes of the file echoed."""
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, OSError) and not isinstance(exc, pa.ArrowException) and exc.strerror:
        return exc.strerror
    text = "".join(c if c.isprintable() and c != "\ufffd" else "?" for c in _first_line(exc))
    return text if len(text) <= limit else text[: limit - 1] + "…"
