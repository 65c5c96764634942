"""The output schema: matches and rejected events as plain records.

Every match file has this shape, whichever engine (local or Spark) wrote it:

* a match record is ``{"ids": {var: [ids]}, "start": t, "end": t, "partition":
  [values]}`` followed by the RETURN values under their names (the alias, else the
  item's text). The variables appear in pattern order; ``partition`` lists the values of
  the inferred partition key in key order, with the types of the input columns (``[]``
  without a key). A RETURN name that clashes with one of the four fixed keys is written
  as ``"return:<name>"``.
* a collapsed match (SIGMOD 2014, section 5.2) is ``{"collapsed": {"singles",
  "candidates", "first_fixed", "last_fixed", "exact", "count"}, "start", "end",
  "partition"}``; ``count`` is the number of matches it stands for.
* a rejected event is ``{"id", "position", "reason", "record"}``, ``record`` being the
  event's fields as read.
* times and other datetimes are UTC: a naive datetime is taken as UTC (as the engines
  take it), an aware one is converted; JSON lines write them as ISO-8601 text with a
  ``+00:00`` offset, Parquet as ``timestamp[us, tz=UTC]``.

The order of records in a file is the order the engine found them in; :func:`match_order`
and :func:`rejected_order` give the documented sort under which the files of the local
and the Spark engine are identical: matches by end time, then start time, then their
event ids; rejected events by id, then reason, then their fields.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping
from typing import Any

import pandas as pd

from kleene.collapsed import CollapsedMatch
from kleene.io.jsonl import to_jsonable
from kleene.match import Match, RejectedEvent

MATCH_KEYS = ("ids", "start", "end", "partition")
REJECTED_KEYS = ("id", "position", "reason", "record")
RETURN_PREFIX = "return:"


def return_key(name: str) -> str:
    """The record key of a RETURN value named ``name``."""
    return f"{RETURN_PREFIX}{name}" if name in MATCH_KEYS else name


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


def match_record(match: Match | CollapsedMatch) -> dict[str, Any]:
    """The output record of one match (or collapsed match)."""
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


def rejected_record(event: RejectedEvent) -> dict[str, Any]:
    """The output record of one rejected event: its id, position, reason and fields."""
    return {
        "id": utc(event.id),
        "position": event.position,
        "reason": event.reason,
        "record": utc(dict(event.record)),
    }


def match_order(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """The documented sort key of a match record (as built, or read back from JSON):
    end time, start time, then the event ids."""
    events = record["collapsed"] if "collapsed" in record else record.get("ids")
    return (_sortable(record.get("end")), _sortable(record.get("start")), _text(events))


def rejected_order(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """The documented sort key of a rejected-event record: id, reason, fields."""
    return (_sortable(record.get("id")), record.get("reason") or "", _text(record.get("record")))


def sort_matches(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(records, key=match_order)


def sort_rejected(records: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(records, key=rejected_order)


def _sortable(value: Any) -> tuple[int, Any]:
    """A key that orders missing values first, then numbers, then text and datetimes
    (ISO-8601 UTC text sorts like the datetimes it stands for)."""
    if value is None:
        return (0, 0)
    if isinstance(value, bool):
        return (1, int(value))
    if isinstance(value, int | float):
        return (1, value)
    if isinstance(value, dt.datetime):
        return (2, utc(value).isoformat())
    return (2, str(value))


def _text(value: Any) -> str:
    return json.dumps(to_jsonable(utc(value)), sort_keys=True, ensure_ascii=False)
