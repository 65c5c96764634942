"""Event sources: an event file read as kleene reads it, and streaming sources described
by a plain options dict.

A source is ``{"format": ..., "path": ..., "schema": ..., "options": {...},
"value_format": ...}``; only ``format`` is required. A folder of Parquet or JSON files
(new files are picked up as they appear) and Kafka differ only in this dict::

    {"format": "parquet", "path": "/data/events"}
    {"format": "json", "path": "/data/events", "schema": "id long, type string, ..."}
    {"format": "kafka",
     "options": {"kafka.bootstrap.servers": "host:9092", "subscribe": "events"},
     "value_format": "json", "schema": "id long, type string, ..."}

With ``value_format="json"`` the source's binary ``value`` column is parsed with the
schema and its fields become the event columns (as Kafka delivers events). File
sources need a schema up front; when none is given it is inferred once from the files
already in the folder.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from kleene.errors import EventError
from kleene.io import Format, read_events

FILE_FORMATS = ("parquet", "json", "csv", "orc")


def read_event_file(
    spark: SparkSession, path: str, fmt: Format, schema: str | None = None
) -> DataFrame:
    """An event file as a DataFrame. A CSV or JSON lines file is read by kleene's own
    reader (the same column types and order, and for CSV the same bad-cell reasons, as
    the local engine), then handed to Spark; a JSON lines file whose fields mix value
    kinds is read by Spark, its columns in the file's order; Parquet is read by Spark."""
    if fmt is Format.PARQUET:
        return spark.read.parquet(path)
    events = read_events(path, fmt, schema=schema)
    if isinstance(events, pa.Table):
        return spark.createDataFrame(events)
    return spark.read.json(path).select(*[str(c) for c in events.columns])


def read_event_stream(spark: SparkSession, source: Mapping[str, Any]) -> DataFrame:
    """A streaming DataFrame of events from a source dict (see the module docstring)."""
    fmt = str(source.get("format", "")).lower()
    if not fmt:
        raise ValueError("a source needs a 'format' (parquet, json, kafka, ...)")
    options = {k: str(v) for k, v in dict(source.get("options", {})).items()}
    path = source.get("path")
    schema = _schema(source.get("schema"))
    value_format = source.get("value_format")
    reader = spark.readStream.format(fmt).options(**options)
    if value_format is None:
        if schema is None and fmt in FILE_FORMATS:
            schema = infer_file_schema(spark, fmt, str(path), options)
        if schema is not None:
            reader = reader.schema(schema)
        return reader.load(path) if path is not None else reader.load()
    if value_format != "json":
        raise ValueError(f"unsupported value_format {value_format!r}; expected 'json'")
    if schema is None:
        raise ValueError("value_format='json' needs the event 'schema'")
    raw = reader.load(path) if path is not None else reader.load()
    return decode_json_values(raw, schema)


def decode_json_values(df: DataFrame, schema: T.StructType) -> DataFrame:
    """Events from a ``value`` column holding one JSON object per row (binary or text)."""
    value = F.col("value").cast("string")
    parsed = df.select(F.from_json(value, schema).alias("kleene__event"))
    return parsed.select("kleene__event.*")


def infer_file_schema(
    spark: SparkSession, fmt: str, path: str, options: Mapping[str, str] | None = None
) -> T.StructType:
    """The schema of the files already in a folder (EventError when there are none)."""
    try:
        schema = spark.read.format(fmt).options(**dict(options or {})).load(path).schema
    except Exception as exc:  # Spark raises several kinds of errors here
        raise EventError(f"cannot infer the schema of {fmt} files in {path}: {exc}") from exc
    if not schema.fields:
        raise EventError(f"no {fmt} files to infer a schema from in {path}")
    return schema


def _schema(schema: Any) -> T.StructType | None:
    if schema is None or isinstance(schema, T.StructType):
        return schema
    if isinstance(schema, str):
        parsed = T._parse_datatype_string(schema)
        if not isinstance(parsed, T.StructType):
            raise ValueError(f"schema {schema!r} is not a struct")
        return parsed
    raise TypeError(f"schema must be a StructType or DDL string, got {type(schema).__name__}")
