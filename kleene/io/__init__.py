"""Event files in and match files out: CSV, JSON lines (or a JSON array) and Parquet
(a file or a dataset directory); ``-`` is standard input or output.

Readers give a :class:`pyarrow.Table` (or a pandas DataFrame when a JSON lines file mixes
value kinds in one field); writers take tables, :class:`kleene.Match` objects and
:class:`kleene.match.RejectedEvent` objects, and write each file through a temporary
file renamed when complete.
"""

from kleene.io.formats import STDIO, Format, FormatError, infer_format, is_stdio
from kleene.io.readers import input_format, is_json_array, read_events, read_table
from kleene.io.schema import match_record, rejected_record
from kleene.io.sinks import MatchSink, RejectedSink, UnwrittenRejected, default_rejected_path
from kleene.io.writers import write_table

__all__ = [
    "STDIO",
    "Format",
    "FormatError",
    "MatchSink",
    "RejectedSink",
    "UnwrittenRejected",
    "default_rejected_path",
    "infer_format",
    "input_format",
    "is_json_array",
    "is_stdio",
    "match_record",
    "read_events",
    "read_table",
    "rejected_record",
    "write_table",
]
