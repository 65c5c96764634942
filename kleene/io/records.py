"""Matches and rejected events as plain records, the shape every output file takes.

A match record is ``{"ids": {var: [ids]}, "start": t, "end": t, "partition": [values]}``
followed by the RETURN values under their names. A RETURN name that clashes with one of
the four fixed keys is written as ``"return:<name>"``. A collapsed match (SIGMOD 2014,
section 5.2) keeps its compact form under ``"collapsed"`` next to start, end and partition.
"""

from __future__ import annotations

from typing import Any

from kleene.collapsed import CollapsedMatch
from kleene.match import Match, RejectedEvent

MATCH_KEYS = ("ids", "start", "end", "partition")
REJECTED_KEYS = ("id", "position", "reason", "record")


def match_record(match: Match | CollapsedMatch) -> dict[str, Any]:
    """The output record of one match."""
    if isinstance(match, CollapsedMatch):
        body = match.to_dict()
        return {
            "collapsed": {k: v for k, v in body.items() if k not in MATCH_KEYS},
            "start": match.start,
            "end": match.end,
            "partition": list(match.partition),
        }
    record: dict[str, Any] = {
        "ids": {var: list(ids) for var, ids in match.ids().items()},
        "start": match.start,
        "end": match.end,
        "partition": list(match.partition),
    }
    for name, value in match.values().items():
        record[f"return:{name}" if name in MATCH_KEYS else name] = value
    return record


def rejected_record(event: RejectedEvent) -> dict[str, Any]:
    """The output record of one rejected event: its id, position, reason and fields."""
    return {
        "id": event.id,
        "position": event.position,
        "reason": event.reason,
        "record": dict(event.record),
    }
