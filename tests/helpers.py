"""Small builders shared by the test suites."""

from __future__ import annotations

from itertools import pairwise
from typing import Any


def stream(*specs: str, **attrs: list[Any]) -> list[dict[str, Any]]:
    """Events from compact specs like ``"a1@1"``: the type is the name's letters
    capitalized ("a1" -> "A", "shelf2" -> "Shelf"), the id the whole name, the timestamp
    what follows ``@``. Extra keyword lists give per-event attributes."""
    events = []
    for i, spec in enumerate(specs):
        name, _, time = spec.partition("@")
        event: dict[str, Any] = {
            "type": "".join(ch for ch in name if ch.isalpha()).capitalize(),
            "id": name,
            "timestamp": float(time) if "." in time else int(time),
        }
        for attr, values in attrs.items():
            event[attr] = values[i]
        events.append(event)
    return events


def id_sets(matches: Any) -> set[tuple[tuple[str, tuple[Any, ...]], ...]]:
    """Matches as a set of sorted (variable, ids) tuples, for order-free comparison."""
    out = set()
    for m in matches:
        ids = m.ids() if callable(getattr(m, "ids", None)) else m.ids
        out.add(tuple(sorted((k, tuple(v)) for k, v in ids.items())))
    return out


def match(**ids: Any) -> tuple[tuple[str, tuple[Any, ...]], ...]:
    """One expected match: ``match(a="a1", b=("b1", "b2"))``."""
    return tuple(sorted((k, v if isinstance(v, tuple) else (v,)) for k, v in ids.items()))


def pieces(events: list[dict[str, Any]], cuts: list[int]) -> list[list[dict[str, Any]]]:
    """``events`` cut at the given positions (out-of-range cuts ignored), without empty
    pieces: the batches a test pushes one after another."""
    bounds = [0, *sorted(c for c in cuts if c <= len(events)), len(events)]
    return [events[lo:hi] for lo, hi in pairwise(bounds) if hi > lo]


def push_arrow_pieces(matcher: Any, events: list[dict[str, Any]], cuts: list[int]) -> list[Any]:
    """Push ``events`` as pyarrow tables cut at ``cuts``, then flush; all that came out."""
    import pyarrow as pa

    found: list[Any] = []
    for part in pieces(events, cuts):
        found += matcher.push(pa.Table.from_pylist(part))
    return found + matcher.flush()
