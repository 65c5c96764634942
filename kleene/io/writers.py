"""Writing a table of events to CSV, JSON lines or Parquet, chosen by file extension."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.parquet as pq

from kleene.io.formats import Format, infer_format
from kleene.io.jsonl import write_table_jsonl


def write_table(table: pa.Table, path: str | Path, fmt: str | Format | None = None) -> Format:
    """Write ``table`` to ``path`` (parent folders are created); returns the format used."""
    path = Path(path)
    kind = infer_format(path, fmt)
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind is Format.CSV:
        with pa.output_stream(str(path), compression="detect") as out:
            pa_csv.write_csv(table, out)
    elif kind is Format.JSONL:
        write_table_jsonl(table, path)
    else:
        pq.write_table(table, path)
    return kind
