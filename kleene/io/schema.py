"""The output schema of a query's matches, for every writer (local files and Spark).

A match, a collapsed match (SIGMOD 2014, section 5.2) and a rejected event are encoded
here and nowhere else, in two forms:

* **records** (:func:`match_record`, :func:`rejected_record`), the rows of match files,
  written alike by the local engine and the Spark engine (:mod:`kleene.io.sinks`):

  - a match is ``{"ids": {var: [ids]}, "start": t, "end": t, "partition": [values]}``
    followed by the RETURN values under their names (the alias, else the item's text).
    The variables appear in pattern order; ``partition`` lists the values of the
    inferred partition key in key order, with the input columns' types (``[]`` without
    a key). A RETURN name that clashes with one of :data:`MATCH_KEYS` is written
    ``"return:<name>"``;
  - a collapsed match is ``{"collapsed": {"singles", "candidates", "first_fixed",
    "last_fixed", "exact", "count"}, "start", "end", "partition"}``; ``count`` is the
    number of matches it stands for;
  - a result over interval events (VLDB 2010, section 2.3) is a match record whose
    ``start``/``end`` are the result's time range, with its ``confidence`` (a float)
    after ``partition`` (``[]``: interval queries have no partition output);
  - a TPStream match (EDBT 2018) is ``{"situations": {symbol: {"start", "end"}},
    "partition": [values], "time", "detected"}`` followed by the RETURN values:
    ``time`` is the match's largest situation end, ``detected`` when it was reported
    (an end is null for a situation still going on at detection);
  - a rejected event is ``{"id", "position", "reason", "record"}``, ``record`` being the
    event's fields as read;
  - datetimes are UTC (a naive one is taken as UTC, an aware one converted); JSON lines
    write them as ISO-8601 text with a ``+00:00`` offset, Parquet as
    ``timestamp[us, tz=UTC]``.

* **flat rows** (:func:`match_row`, :func:`collapsed_row`, :func:`rejected_row`), one
  column per value, as Spark carries them (:mod:`kleene.spark._rows`):

  - a match row has ``match_id`` (a digest of its variables and event ids, the same
    whichever engine found it), ``partition`` (the key values as text), one column per
    positive variable holding its event ids as a list, ``start``, ``end``, and one
    column per RETURN item, prefixed ``return:`` when its name clashes with a fixed
    column or a variable (:meth:`OutputColumns.return_columns`);
  - a collapsed row has ``collapsed_id``, ``partition``, per positive variable a single
    variable's event id or a Kleene variable's candidates ``[{"id", "label"}]``, then
    ``first_fixed``, ``last_fixed``, ``start``, ``end``, ``exact`` and ``count``;
  - a rejected row has ``id``, ``reason`` and ``record`` (the fields as a JSON object).

The facts about a query (its variables, Kleene variables and RETURN names) come from
the compiled plan (:meth:`OutputColumns.of`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from kleene.collapsed import CollapsedMatch
from kleene.errors import QueryError
from kleene.imprecise.result import ImpreciseMatch
from kleene.io.jsonl import dumps
from kleene.match import Match, MatchLike, RejectedEvent
from kleene.tpstream.model import TemporalMatch

if TYPE_CHECKING:
    from kleene.compiler.plan import Plan

MATCH_KEYS = ("ids", "start", "end", "partition")
INTERVAL_KEYS = (*MATCH_KEYS, "confidence")
TEMPORAL_KEYS = ("situations", "partition", "time", "detected")
REJECTED_KEYS = ("id", "position", "reason", "record")
RETURN_PREFIX = "return:"

FIXED_COLUMNS = ("match_id", "partition", "start", "end")
# a collapsed row: these columns, then one per positive variable, then the trailing ones
COLLAPSED_LEADING = ("collapsed_id", "partition")
COLLAPSED_TRAILING = ("first_fixed", "last_fixed", "start", "end", "exact", "count")
COLLAPSED_COLUMNS = (*COLLAPSED_LEADING, *COLLAPSED_TRAILING)
REJECTED_COLUMNS = ("id", "reason", "record")


@dataclass(frozen=True)
class OutputColumns:
    """The output columns of one query's flat rows."""

    variables: tuple[str, ...]  # positive variables in pattern order
    kleene: frozenset[str]  # those that are Kleene variables
    return_names: tuple[str, ...]

    @classmethod
    def of(cls, plan: Plan) -> OutputColumns:
        return cls(plan.positive_vars, plan.kleene_vars, plan.return_names)

    @property
    def return_columns(self) -> tuple[str, ...]:
        """The column of each RETURN item: its name, prefixed with ``return:`` when it
        clashes with a fixed column or a variable."""
        taken = {*FIXED_COLUMNS, *self.variables}
        return tuple(f"{RETURN_PREFIX}{n}" if n in taken else n for n in self.return_names)

    def check_matches(self) -> None:
        """QueryError when two match columns would share a name."""
        seen: set[str] = set()
        for name in [*FIXED_COLUMNS, *self.variables, *self.return_columns]:
            if name in seen:
                raise QueryError(
                    f"output column {name!r} appears twice: rename the variable or give the "
                    "RETURN item another alias"
                )
            seen.add(name)

    def check_collapsed(self) -> None:
        """QueryError when a variable is named like a fixed collapsed column."""
        clash = sorted(set(self.variables) & set(COLLAPSED_COLUMNS))
        if clash:
            raise QueryError(
                f"variable {clash[0]!r} clashes with a collapsed output column; rename it "
                f"({', '.join(COLLAPSED_COLUMNS)} are reserved)"
            )


# --- records: the rows of match files ---------------------------------------------------


def return_key(name: str, keys: Sequence[str] = MATCH_KEYS) -> str:
    """The record key of a RETURN value named ``name`` in records of ``keys``."""
    return f"{RETURN_PREFIX}{name}" if name in keys else name


def utc(value: Any) -> Any:
    """``value`` with every datetime in it made UTC (naive ones are taken as UTC)."""
    if isinstance(value, pd.Timestamp):
        value = None if value is pd.NaT else value.to_pydatetime()
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            return value.replace(tzinfo=dt.UTC)
        return value.astimezone(dt.UTC)
    if isinstance(value, Mapping):
        return {k: utc(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [utc(v) for v in value]
    return value


def match_record(
    match: Match | CollapsedMatch | ImpreciseMatch | TemporalMatch | MatchLike,
) -> dict[str, Any]:
    """The output record of one match (or collapsed match, interval result or TPStream
    match); the match of any other kind is written as a SASE+ match is, from what every
    match has (:class:`kleene.match.MatchLike`)."""
    if isinstance(match, TemporalMatch):
        return _temporal_record(match)
    if isinstance(match, ImpreciseMatch):
        return _interval_record(match)
    if isinstance(match, CollapsedMatch):
        return {
            "collapsed": {
                "singles": utc(dict(match.singles)),
                "candidates": {
                    v: [[utc(i), label] for i, label in cs] for v, cs in match.candidates.items()
                },
                "first_fixed": sorted(match.first_fixed),
                "last_fixed": sorted(match.last_fixed),
                "exact": bool(match.exact),
                "count": match.count(),
            },
            "start": utc(match.start),
            "end": utc(match.end),
            "partition": utc(list(match.partition)),
        }
    record: dict[str, Any] = {
        "ids": {var: utc(list(ids)) for var, ids in match.ids().items()},
        "start": utc(match.start),
        "end": utc(match.end),
        "partition": utc(list(match.partition)),
    }
    for name, value in match.values().items():
        record[return_key(name)] = utc(value)
    return record


def _temporal_record(match: TemporalMatch) -> dict[str, Any]:
    record: dict[str, Any] = {
        "situations": {
            name: {"start": utc(s.start), "end": utc(s.end)} for name, s in match.situations.items()
        },
        "partition": utc(list(match.partition)),
        "time": utc(match.time),
        "detected": utc(match.detected),
    }
    for name, value in match.returned.items():
        record[return_key(name, TEMPORAL_KEYS)] = utc(value)
    return record


def _interval_record(result: ImpreciseMatch) -> dict[str, Any]:
    record: dict[str, Any] = {
        "ids": {var: utc(list(ids)) for var, ids in result.ids().items()},
        "start": result.start,
        "end": result.end,
        "partition": [],
        "confidence": float(result.confidence),
    }
    for name, value in result.values().items():
        record[return_key(name, INTERVAL_KEYS)] = utc(value)
    return record


def rejected_record(event: RejectedEvent) -> dict[str, Any]:
    """The output record of one rejected event: its id, position, reason and fields."""
    return {
        "id": utc(event.id),
        "position": event.position,
        "reason": event.reason,
        "record": utc(dict(event.record)),
    }


# --- flat rows: one column per value ------------------------------------------------------


def plain(value: Any) -> Any:
    """numpy and pandas scalars as Python values; NaN and NaT as None."""
    if value is None:
        return None
    if isinstance(value, pd.Timestamp):
        return None if value is pd.NaT else value.to_pydatetime()
    if hasattr(value, "item") and not isinstance(value, dt.datetime | str | bytes):
        try:
            value = value.item()
        except (ValueError, AttributeError):
            return value
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _digest(body: Any) -> str:
    text = json.dumps(body, default=str, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def match_id(variables: Mapping[str, Sequence[Any]]) -> str:
    """A deterministic digest of a match: its variables and their event ids."""
    return _digest(sorted((var, [plain(i) for i in ids]) for var, ids in variables.items()))


def collapsed_id(c: CollapsedMatch) -> str:
    """A deterministic digest of a collapsed result: its events, labels and fixed ends."""
    return _digest(
        [
            sorted((v, plain(i)) for v, i in c.singles.items()),
            sorted((v, [[plain(i), lab] for i, lab in cs]) for v, cs in c.candidates.items()),
            sorted(c.first_fixed),
            sorted(c.last_fixed),
        ]
    )


def partition_text(partition: Sequence[Any]) -> list[str | None]:
    """Partition key values as text (a flat row's partition has one element type)."""
    return [None if v is None else str(plain(v)) for v in partition]


def record_json(record: Mapping[str, Any]) -> str:
    """A rejected event's fields as a JSON object in field order, encoded as match files
    encode them (datetimes as ISO-8601 UTC, NaN as null)."""
    return dumps(utc({k: plain(v) for k, v in record.items()}))


def match_row(columns: OutputColumns, m: Match) -> dict[str, Any]:
    """The flat row of one match."""
    ids = m.ids()
    values = m.values()
    row: dict[str, Any] = {
        "match_id": match_id(ids),
        "partition": partition_text(m.partition),
        "start": plain(m.start),
        "end": plain(m.end),
    }
    for var in columns.variables:
        row[var] = [plain(i) for i in ids.get(var, ())]
    for name, column in zip(columns.return_names, columns.return_columns, strict=True):
        row[column] = plain(values.get(name))
    return row


def collapsed_row(columns: OutputColumns, c: CollapsedMatch) -> dict[str, Any]:
    """The flat row of one collapsed match."""
    row: dict[str, Any] = {
        "collapsed_id": collapsed_id(c),
        "partition": partition_text(c.partition),
        "first_fixed": sorted(c.first_fixed),
        "last_fixed": sorted(c.last_fixed),
        "start": plain(c.start),
        "end": plain(c.end),
        "exact": bool(c.exact),
        "count": c.count(),
    }
    for var in columns.variables:
        if var in columns.kleene:
            row[var] = [{"id": plain(i), "label": lab} for i, lab in c.candidates.get(var, ())]
        else:
            row[var] = plain(c.singles.get(var))
    return row


def rejected_row(r: RejectedEvent) -> dict[str, Any]:
    """The flat row of one rejected event."""
    return {"id": plain(r.id), "reason": r.reason, "record": record_json(r.record)}
