"""Event files in and match files out: CSV, JSON lines and Parquet.

Readers give a :class:`pyarrow.Table` (or a pandas DataFrame when a JSON lines file mixes
value kinds in one field); writers take tables, :class:`kleene.Match` objects and
:class:`kleene.match.RejectedEvent` objects.
"""

from kleene.io.formats import Format, FormatError, infer_format
from kleene.io.readers import read_events, read_table
from kleene.io.records import match_record, rejected_record
from kleene.io.sinks import MatchSink, RejectedSink, default_rejected_path
from kleene.io.writers import write_table

__all__ = [
    "Format",
    "FormatError",
    "MatchSink",
    "RejectedSink",
    "default_rejected_path",
    "infer_format",
    "match_record",
    "read_events",
    "read_table",
    "rejected_record",
    "write_table",
]
