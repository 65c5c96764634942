"""Reading event files (CSV with a header row, JSON lines, Parquet) into tables.

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

import contextlib
import io
import json
from pathlib import Path
from typing import TypeAlias

import pandas as pd
import pyarrow as pa
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from kleene.errors import EventError
from kleene.io.formats import Format, infer_format
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
    path = Path(path)
    kind = infer_format(path, fmt)
    if not path.exists():
        raise FileNotFoundError(f"input file not found: {path}")
    if path.is_dir():
        raise EventError(f"input is a directory, not a file: {path}")
    try:
        if kind is Format.CSV:
            return _read_csv(path, schema)
        if kind is Format.JSONL:
            return _read_jsonl(path)
        return pq.read_table(path)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise EventError(f"cannot read {path} as {kind.value}: {_first_line(exc)}") from exc


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


def read_dataframe(path: str | Path, fmt: str | Format | None = None) -> pd.DataFrame:
    """Like :func:`read_events` but always a pandas DataFrame."""
    events = read_events(path, fmt)
    return events.to_pandas() if isinstance(events, pa.Table) else events


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
    with pa.input_stream(str(path)) as raw, io.TextIOWrapper(raw, encoding="utf-8") as lines:
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
