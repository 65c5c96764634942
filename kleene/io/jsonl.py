"""JSON lines: turning engine values into JSON, and writing whole tables fast.

Values that JSON lacks are mapped as follows: datetimes, dates and times to ISO-8601
strings, numpy scalars to Python numbers, NaN, infinities and missing values to ``null``,
tuples to lists, bytes to UTF-8 text (or hex when not text), anything else to ``str``.
"""

from __future__ import annotations

import datetime as dt
import json
import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

_ROWS_PER_CHUNK = 500_000
_UNSAFE_TEXT = r'["\\\x00-\x1f]'


def to_jsonable(value: Any) -> Any:
    """``value`` as plain JSON data (dict, list, str, int, float, bool, None)."""
    if value is None or isinstance(value, bool | str | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [to_jsonable(v) for v in value]
    if value is pd.NaT:
        return None
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, np.datetime64):
        return None if np.isnat(value) else pd.Timestamp(value).isoformat()
    if isinstance(value, np.timedelta64 | dt.timedelta):
        return pd.Timedelta(value).total_seconds()
    if isinstance(value, np.generic):
        return to_jsonable(value.item())
    if isinstance(value, Decimal):
        return float(value) if value.is_finite() else None
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value.hex()
    return str(value)


def dumps(record: Mapping[str, Any]) -> str:
    """One JSON line (without the newline) for a record."""
    return json.dumps(
        to_jsonable(record), ensure_ascii=False, allow_nan=False, separators=(",", ":")
    )


def write_table_jsonl(table: pa.Table, path: str | Path) -> None:
    """Write every row of ``table`` as one JSON object per line."""
    with pa.output_stream(str(path), compression="detect") as out:
        for start in range(0, table.num_rows, _ROWS_PER_CHUNK):
            chunk = table.slice(start, _ROWS_PER_CHUNK)
            lines = _fast_lines(chunk)
            if lines is None:
                out.write("".join(dumps(r) + "\n" for r in chunk.to_pylist()).encode("utf-8"))
            else:
                out.write(_string_data(lines))


def write_lines(stream: IO[str], records: Iterable[Mapping[str, Any]]) -> None:
    """Append records to an open text stream, one JSON line each."""
    stream.writelines(dumps(r) + "\n" for r in records)


def _fast_lines(table: pa.Table) -> pa.Array | None:
    """The JSON lines of ``table`` built column-wise by Arrow kernels, or None when a column
    needs the general path (timestamps, nested values, text with characters to escape)."""
    if table.num_columns == 0:
        return None
    parts: list[pa.Array | str] = []
    for index, name in enumerate(table.column_names):
        text = _column_text(table.column(index).combine_chunks())
        if text is None:
            return None
        opening = "{" if index == 0 else ","
        parts.extend([opening + json.dumps(name, ensure_ascii=False) + ":", text])
    parts.append("}\n")
    arrays = [p for p in parts if isinstance(p, pa.Array)]
    length = len(arrays[0])
    columns = [p if isinstance(p, pa.Array) else pa.repeat(pa.scalar(p), length) for p in parts]
    return pc.binary_join_element_wise(*columns, "")


def _column_text(column: pa.Array) -> pa.Array | None:
    kind = column.type
    if pa.types.is_integer(kind):
        text = column.cast(pa.string())
    elif pa.types.is_boolean(kind):
        text = pc.if_else(column, "true", "false")
    elif pa.types.is_floating(kind):
        if (
            column.null_count < len(column)
            and not pc.all(pc.or_kleene(pc.is_finite(column), pc.is_null(column))).as_py()
        ):
            return None
        raw = column.cast(pa.string())
        plain = pc.invert(pc.match_substring_regex(raw, r"[.e]"))
        text = pc.if_else(plain, pc.binary_join_element_wise(raw, ".0", ""), raw)
    elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
        column = column.cast(pa.string())
        if pc.any(pc.match_substring_regex(column, _UNSAFE_TEXT)).as_py():
            return None
        text = pc.binary_join_element_wise('"', column, '"', "")
    else:
        return None
    return pc.fill_null(text, "null")


def _string_data(lines: pa.Array) -> pa.Buffer:
    """The bytes of all strings of a null-free string array, back to back."""
    lines = pa.concat_arrays([lines]) if isinstance(lines, pa.Array) else lines
    offsets_buffer, data_buffer = lines.buffers()[1], lines.buffers()[2]
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)
    begin = int(offsets[lines.offset])
    end = int(offsets[lines.offset + len(lines)])
    if data_buffer is None:
        return pa.py_buffer(b"")
    return data_buffer[begin:end]
