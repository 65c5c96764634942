"""File formats kleene reads and writes, and how a format is told from a file name.

``-`` names standard input (when reading) or standard output (when writing); it has no
extension, so its format must be given.
"""

from __future__ import annotations

from enum import Enum
from pathlib import Path

from kleene.errors import KleeneError

STDIO = "-"


def is_stdio(path: str | Path) -> bool:
    """Whether ``path`` is ``-``: standard input or output."""
    return str(path) == STDIO


class FormatError(KleeneError, ValueError):
    """A file format that is unknown, or cannot be told from the file name."""


class Format(Enum):
    CSV = "csv"
    JSONL = "jsonl"
    PARQUET = "parquet"

    @classmethod
    def parse(cls, name: str) -> Format:
        key = name.strip().lower().lstrip(".")
        key = _ALIASES.get(key, key)
        try:
            return cls(key)
        except ValueError:
            known = ", ".join(f.value for f in cls)
            raise FormatError(f"unknown format {name!r} (known: {known})") from None


_ALIASES = {"json": "jsonl", "ndjson": "jsonl", "pq": "parquet"}
_EXTENSIONS = {
    ".csv": Format.CSV,
    ".jsonl": Format.JSONL,
    ".ndjson": Format.JSONL,
    ".json": Format.JSONL,
    ".parquet": Format.PARQUET,
    ".pq": Format.PARQUET,
}


def infer_format(
    path: str | Path, explicit: str | Format | None = None, *, option: str | None = None
) -> Format:
    """The explicit format when given, else the one named by the file extension.

    A trailing ``.gz`` is looked through for CSV and JSON lines (``events.csv.gz``).
    ``option`` names the command-line option that gives the format, for the advice in
    the error message.
    """
    if isinstance(explicit, Format):
        return explicit
    if explicit:
        return Format.parse(explicit)
    advice = f"give it with {option}" if option else "give the format explicitly"
    if is_stdio(path):
        raise FormatError(f"'-' (standard input or output) has no extension: {advice}")
    suffixes = [s.lower() for s in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in _EXTENSIONS:
        return _EXTENSIONS[suffixes[-1]]
    known = ", ".join(sorted(_EXTENSIONS))
    raise FormatError(
        f"cannot tell the format of {str(path)!r} from its extension (known: {known}); {advice}"
    )
