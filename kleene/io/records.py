"""The documented order of output records, under which the match files of the local and
the Spark engine are identical.

The records themselves (matches, collapsed matches, rejected events) are defined in
:mod:`kleene.io.schema`. The order of records in a file is the order the engine found
them in; :func:`match_order` and :func:`rejected_order` give the documented sort:
matches by end time, then start time, then their event ids; rejected events by id,
then reason, then their fields."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

from kleene.io.jsonl import to_jsonable
from kleene.io.schema import utc


def match_order(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """The documented sort key of a match record (as built, or read back from JSON):
    end time, start time, then the event ids."""
    events = record["collapsed"] if "collapsed" in record else record.get("ids")
    return (_sortable(record.get("end")), _sortable(record.get("start")), _text(events))


def rejected_order(record: Mapping[str, Any]) -> tuple[Any, ...]:
    """The documented sort key of a rejected-event record: id, reason, fields."""
    return (_sortable(record.get("id")), record.get("reason") or "", _text(record.get("record")))


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
