"""Typed CSV reading: each column keeps one type, and a cell that does not fit it
rejects its row (never the whole column).

A column's type is declared in a schema, or inferred from the file:

* a column whose every non-empty cell parses as one type (integer, floating, boolean,
  ISO-8601 timestamp) has that type, as pyarrow infers it;
* a text column where more than half of the non-empty cells are numbers is numeric
  (integer when all of those are integers, else double), and one where more than half
  are ISO-8601 timestamps is a timestamp column;
* any other column is text.

A cell that does not parse as its column's type becomes null, and its row gets a reason
in the :data:`kleene.events.PROBLEM_COLUMN` column, naming the column and the value; the
matcher rejects such a row with that reason. An empty cell (or a null marker pyarrow
knows: ``NA``, ``N/A``, ``null``, ``NaN``, ...) is a missing value, not a bad one.

A schema is text ``name:type,name:type`` (types ``int``, ``double``, ``string``,
``bool``, ``timestamp``; aliases ``integer``, ``long``, ``float``, ``text``, ``str``,
``boolean``, ``datetime``) or a mapping of names to those type names. Columns the schema
does not name are inferred.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from kleene.errors import EventError
from kleene.events import PROBLEM_COLUMN

Schema = str | Mapping[str, str]

TYPES: dict[str, pa.DataType] = {
    "int": pa.int64(),
    "integer": pa.int64(),
    "long": pa.int64(),
    "double": pa.float64(),
    "float": pa.float64(),
    "string": pa.string(),
    "str": pa.string(),
    "text": pa.string(),
    "bool": pa.bool_(),
    "boolean": pa.bool_(),
    "timestamp": pa.timestamp("us"),
    "datetime": pa.timestamp("us"),
}

_INT = r"^\s*[+-]?\d+\s*$"
_NUMBER = r"^\s*[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|(?i:inf|infinity|nan))\s*$"
_TIMESTAMP = r"^\s*\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?\s*$"
_BOOLS = {"true": True, "false": False, "1": True, "0": False}


def parse_schema(schema: Schema) -> dict[str, pa.DataType]:
    """The column types a schema declares; EventError for a malformed schema."""
    if isinstance(schema, str):
        pairs = []
        for part in schema.split(","):
            if not part.strip():
                continue
            name, sep, kind = part.rpartition(":")
            if not sep or not name.strip():
                raise EventError(
                    f"schema entry {part.strip()!r} is not name:type "
                    '(e.g. "price:double,symbol:string")'
                )
            pairs.append((name.strip(), kind.strip()))
    else:
        pairs = [(str(k), str(v)) for k, v in schema.items()]
    out = {}
    for name, kind in pairs:
        if kind.lower() not in TYPES:
            known = ", ".join(TYPES)
            raise EventError(f"schema: unknown type {kind!r} for {name!r}; expected one of {known}")
        out[name] = TYPES[kind.lower()]
    return out


def read_typed_csv(path: Path, schema: Schema | None = None) -> pa.Table:
    """The CSV file as a typed table (see the module docstring)."""
    declared = parse_schema(schema) if schema is not None else {}
    options = pa_csv.ConvertOptions(
        strings_can_be_null=True, column_types={name: pa.string() for name in declared}
    )
    table = pa_csv.read_csv(path, convert_options=options)
    unknown = [name for name in declared if name not in table.column_names]
    if unknown:
        raise EventError(
            f"{path}: the schema names {', '.join(map(repr, unknown))}, which the file has "
            f"no column for (columns: {', '.join(map(repr, table.column_names))})"
        )
    return typed_table(table, declared)


def typed_table(table: pa.Table, declared: Mapping[str, pa.DataType]) -> pa.Table:
    """``table`` with each declared column converted from text and each text column of
    a mostly numeric or timestamp content typed, bad cells flagged."""
    columns: list[pa.ChunkedArray | pa.Array] = []
    problems: list[str | None] = [None] * table.num_rows
    for name, col in zip(table.column_names, table.columns, strict=True):
        target = declared.get(name)
        source = "declared in the schema"
        if target is None and pa.types.is_string(col.type):
            target, source = _inferred(col), "inferred from the file"
        if target is None or target == pa.string():
            columns.append(col)
            continue
        converted, bad = _convert(col, target)
        for j in bad:
            value = col[j].as_py()
            reason = f"column {name!r}: {value!r} is not {_a(target)} (the type {source})"
            problems[j] = reason if problems[j] is None else f"{problems[j]}; {reason}"
        columns.append(converted)
    names = list(table.column_names)
    if any(p is not None for p in problems):
        columns.append(pa.array(problems, pa.string()))
        names.append(PROBLEM_COLUMN)
    return pa.Table.from_arrays(columns, names=names)


def _inferred(col: pa.ChunkedArray) -> pa.DataType | None:
    """The type of a text column by the majority rule; None to keep it text."""
    filled = len(col) - col.null_count
    if not filled:
        return None
    numbers = _count(col, _NUMBER)
    if 2 * numbers > filled:
        return pa.int64() if _count(col, _INT) == numbers else pa.float64()
    if 2 * _count(col, _TIMESTAMP) > filled:
        return pa.timestamp("us")
    return None


def _count(col: pa.ChunkedArray, pattern: str) -> int:
    return int(pc.sum(pc.match_substring_regex(col, pattern)).as_py() or 0)


def _convert(col: pa.ChunkedArray, target: pa.DataType) -> tuple[pa.Array, list[int]]:
    """The text column in ``target`` type and the rows whose cell does not parse."""
    values = col.to_pylist()
    out: list[Any] = []
    bad: list[int] = []
    for j, text in enumerate(values):
        if text is None:
            out.append(None)
            continue
        value = _parse(text, target)
        if value is None:
            bad.append(j)
        out.append(value)
    return pa.array(out, target), bad


def _parse(text: str, target: pa.DataType) -> Any:
    """The cell's value in ``target`` type, or None when it does not parse."""
    text = text.strip()
    try:
        if pa.types.is_integer(target):
            value = int(text)
            return value if -(2**63) <= value < 2**63 else None
        if pa.types.is_floating(target):
            number = float(text)
            return None if math.isnan(number) and text.lower() != "nan" else number
        if pa.types.is_boolean(target):
            return _BOOLS.get(text.lower())
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        if moment.tzinfo is not None:
            moment = moment.astimezone(dt.UTC).replace(tzinfo=None)
        return moment
    except (ValueError, OverflowError):
        return None


def _a(target: pa.DataType) -> str:
    if pa.types.is_integer(target):
        return "an integer"
    if pa.types.is_floating(target):
        return "a number"
    if pa.types.is_boolean(target):
        return "a boolean"
    return "an ISO-8601 timestamp"
