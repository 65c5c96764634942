"""TEMPORARY (issue 25): bridges to the one matcher contract while the kinds move onto it.

Delete this module once every kind's results follow :class:`kleene.match.MatchLike`
exactly (a TPStream match's ``partition`` attribute, today ``key``), replacing each
``partition_of(m)`` by ``m.partition``. (The matchers need no bridge: the Spark
pipelines call only ``push``, ``advance_to`` (kinds behind a watermark: SASE+ and
event-set matchers, which have it), ``flush``, ``run``, ``take_rejected``, ``snapshot``
and ``query.matcher(state=...)`` with keywords, which every kind's matcher has.)
"""

from __future__ import annotations

from typing import Any


def partition_of(match: Any) -> tuple[Any, ...]:
    """``match.partition``: the key values as a tuple (a TPStream match's ``key``
    attribute before it is renamed; () for a result without one)."""
    value: Any = getattr(match, "partition", None)
    if value is None or callable(value):
        value = getattr(match, "key", ())
        if callable(value):  # Match.key() is the match's identity, not its partition
            return ()
    return tuple(value)
