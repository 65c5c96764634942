"""TEMPORARY (issue 25): bridges to the one matcher contract while the kinds move onto it.

Delete this module once every kind follows :mod:`kleene.runtime.contract` and
:class:`kleene.match.MatchLike` exactly (the interval matcher's ``advance_to``, a
TPStream match's ``partition`` attribute), replacing each call by what it stands for:
``advance(m, t)`` by ``m.advance_to(t)`` and ``partition_of(m)`` by ``m.partition``.
"""

from __future__ import annotations

from typing import Any


def advance(matcher: Any, time: Any) -> list[Any]:
    """``matcher.advance_to(time)``; the interval matcher's ``heartbeat`` before it has one."""
    step = getattr(matcher, "advance_to", None)
    if step is None:
        return list(matcher.heartbeat(time) or [])
    return list(step(time))


def partition_of(match: Any) -> tuple[Any, ...]:
    """``match.partition``: the key values as a tuple (a TPStream match's ``key``
    attribute before it is renamed; () for a result without one)."""
    value: Any = getattr(match, "partition", None)
    if value is None or callable(value):
        value = getattr(match, "key", ())
        if callable(value):  # Match.key() is the match's identity, not its partition
            return ()
    return tuple(value)
