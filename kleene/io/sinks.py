"""Output files for matches and rejected events, filled as a run goes.

JSON lines sinks write each record as it arrives. Parquet sinks gather the records and
write one table on close, with typed columns: ``ids`` is a struct of one list per
variable, ``partition`` a struct keyed by the partition attributes when they are known
(else a list), and each RETURN value its own column. A column whose values cannot share
one Arrow type is written as JSON text. A sink writes a temporary file beside its target
and renames it over the target on close; used as a context manager it removes the
temporary file when the block fails, so a failed run leaves no partial output and an
older file of that name intact. The path ``-`` writes to standard output.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Self

import pyarrow as pa
import pyarrow.parquet as pq

from kleene.collapsed import CollapsedMatch
from kleene.imprecise.result import ImpreciseMatch
from kleene.io.formats import Format, FormatError, infer_format, is_stdio
from kleene.io.jsonl import dumps, to_jsonable, write_lines
from kleene.io.schema import MATCH_KEYS, match_record, rejected_record
from kleene.io.writers import commit, partial_beside
from kleene.match import Match, MatchLike, RejectedEvent
from kleene.tpstream.model import TemporalMatch


def default_rejected_path(output: str | Path) -> Path:
    """Where rejected events go when no path is given: ``<output>.rejected.jsonl``."""
    output = Path(output)
    return output.with_name(output.name + ".rejected.jsonl")


class _RecordSink:
    """Records to a JSON lines file (streamed) or a Parquet file (written on close)."""

    def __init__(self, path: str | Path, fmt: str | Format | None = None) -> None:
        self.path = Path(path)
        self.format = infer_format(self.path, fmt, option="--output-format")
        if self.format is Format.CSV:
            raise FormatError(f"{self.path}: results are written as JSON lines or Parquet")
        self.count = 0
        self._records: list[dict[str, Any]] = []
        self._stream: IO[str] | None = None
        self._partial = None if is_stdio(path) else partial_beside(self.path)
        if self.format is Format.JSONL:
            if self._partial is None:
                self._stream = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8")
            else:
                self._stream = self._partial.open("w", encoding="utf-8")

    def _write(self, records: list[dict[str, Any]]) -> None:
        self.count += len(records)
        if self._stream is not None:
            write_lines(self._stream, records)
            self._stream.flush()  # written as found: a reader sees a run's progress
        else:
            self._records.extend(records)

    def _table(self, records: list[dict[str, Any]]) -> pa.Table:
        raise NotImplementedError

    def close(self) -> None:
        """Finish the file. Safe to call twice."""
        if self._stream is not None:
            self._end_stream()
        elif self.format is Format.PARQUET and self._records is not None:
            table = self._table(self._records)
            if self._partial is None:
                data = io.BytesIO()
                pq.write_table(table, data)
                sys.stdout.buffer.write(data.getvalue())
                sys.stdout.buffer.flush()
            else:
                pq.write_table(table, self._partial)
            self._records = []
            self.format = Format.JSONL  # nothing left to write on a second close
        if self._partial is not None:
            commit(self._partial, self.path)
            self._partial = None

    def abort(self) -> None:
        """Give up: close and remove the temporary file, so a failed run leaves no partial
        output (and an older file at the path is left as it was)."""
        if self._stream is not None:
            self._end_stream()
        self._records = []
        if self._partial is not None:
            self._partial.unlink(missing_ok=True)
            self._partial = None

    def _end_stream(self) -> None:
        assert self._stream is not None
        if isinstance(self._stream, io.TextIOWrapper) and self._partial is None:
            self._stream.flush()
            self._stream.detach()  # standard output stays open
        else:
            self._stream.close()
        self._stream = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is None:
            self.close()
        else:
            self.abort()


class MatchSink(_RecordSink):
    """Matches to a file. ``variables`` and ``partition_names`` (optional) give an empty
    Parquet file its column types and name the partition struct's fields; ``keys``
    are an empty file's columns (a kind's record keys: kleene.cli.CliPart.output_keys)."""

    def __init__(
        self,
        path: str | Path,
        fmt: str | Format | None = None,
        *,
        variables: Sequence[str] = (),
        partition_names: Sequence[str] = (),
        keys: Sequence[str] = MATCH_KEYS,
    ) -> None:
        super().__init__(path, fmt)
        self.keys = tuple(keys)
        self.variables = tuple(variables)
        self.partition_names = tuple(partition_names)

    def add(
        self, matches: Iterable[Match | CollapsedMatch | ImpreciseMatch | TemporalMatch | MatchLike]
    ) -> int:
        """Write matches; returns how many."""
        records = [match_record(m) for m in matches]
        self._write(records)
        return len(records)

    def _table(self, records: list[dict[str, Any]]) -> pa.Table:
        named = len(set(self.partition_names)) == len(self.partition_names) > 0
        columns: dict[str, pa.Array] = {}
        names = list(dict.fromkeys(k for r in records for k in r))
        for name in names or list(self.keys):
            values = [r.get(name) for r in records]
            if name == "partition" and named:
                values = [
                    dict(zip(self.partition_names, v, strict=False)) if v is not None else None
                    for v in values
                ]
            columns[name] = _column(values, self._empty_type(name, named))
        return pa.table(columns)

    def _empty_type(self, name: str, named: bool) -> pa.DataType | None:
        if name == "ids" and self.variables:
            return pa.struct([(v, pa.list_(pa.int64())) for v in self.variables])
        if name == "partition" and named:
            return pa.struct([(p, pa.null()) for p in self.partition_names])
        if name in ("start", "end"):
            return pa.int64()
        if name == "confidence":
            return pa.float64()
        return None


class RejectedSink(_RecordSink):
    """Rejected events, with their reasons, to a file."""

    def add(self, events: Iterable[RejectedEvent]) -> int:
        """Write rejected events; returns how many."""
        records = [rejected_record(e) for e in events]
        self._write(records)
        return len(records)

    def _table(self, records: list[dict[str, Any]]) -> pa.Table:
        types: dict[str, pa.DataType] = {
            "id": pa.int64(),
            "position": pa.int64(),
            "reason": pa.string(),
            "record": pa.string(),
        }
        return pa.table({key: _column([r[key] for r in records], types[key]) for key in types})


class UnwrittenRejected(RejectedSink):
    """Rejected events counted but written nowhere: where matches go to standard output
    and no file for the rejected events was given."""

    def __init__(self) -> None:
        self.path = Path("-")
        self.format = Format.JSONL
        self.count = 0
        self._records = []
        self._stream = None
        self._partial = None

    def _write(self, records: list[dict[str, Any]]) -> None:
        self.count += len(records)


def _column(values: list[Any], empty_type: pa.DataType | None) -> pa.Array:
    """An Arrow column of ``values``: typed when Arrow can, else JSON text per value."""
    if not values and empty_type is not None:
        return pa.array([], type=empty_type)
    attempts: list[Callable[[], pa.Array]] = [
        lambda: pa.array(values),
        lambda: pa.array([to_jsonable(v) for v in values]),
    ]
    for attempt in attempts:
        try:
            return attempt()
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            continue
    return pa.array(
        [None if v is None else json.dumps(to_jsonable(v), ensure_ascii=False) for v in values],
        type=pa.string(),
    )


__all__ = ["MatchSink", "RejectedSink", "UnwrittenRejected", "default_rejected_path", "dumps"]
