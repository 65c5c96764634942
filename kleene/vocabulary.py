"""The words the front end, the compiler and the runtimes share: event selection
strategies, output formats and time units.

A leaf module (it imports only kleene.errors), so the AST (:mod:`kleene.lang.ast`, which
re-exports these names), the compiled plan and the runtimes can all name them without
the runtimes depending on the front end.
"""

from __future__ import annotations

from difflib import get_close_matches
from enum import Enum
from typing import Self, TypeVar

from kleene.errors import QueryError


class _Parsed(Enum):
    @classmethod
    def parse(cls, name: str) -> Self:
        """Accepts the spelling with underscores or hyphens, any case."""
        return cls(name.strip().lower().replace("-", "_"))


class Strategy(_Parsed):
    """The four event selection strategies (SIGMOD 2008, section 2)."""

    STRICT_CONTIGUITY = "strict_contiguity"
    PARTITION_CONTIGUITY = "partition_contiguity"
    SKIP_TILL_NEXT_MATCH = "skip_till_next_match"
    SKIP_TILL_ANY_MATCH = "skip_till_any_match"


DEFAULT_STRATEGY = Strategy.SKIP_TILL_NEXT_MATCH


class OutputFormat(_Parsed):
    """All matches, one match per partition among those overlapping in time, or the
    collapsed intermediate matches of postponed evaluation (SIGMOD 2014, section 5.2)."""

    ALL = "all"
    NON_OVERLAP = "non_overlap"
    COLLAPSED = "collapsed"


class TimeUnit(Enum):
    """The units of ``WITHIN amount unit``, in seconds."""

    SECONDS = 1
    MINUTES = 60
    HOURS = 3600
    DAYS = 86400


E = TypeVar("E", bound=_Parsed)


def option(enum: type[E], value: E | str | None, name: str) -> E | None:
    """An API option naming a member of ``enum`` (the member itself or its spelling),
    or None; QueryError with the closest spelling otherwise."""
    if value is None or isinstance(value, enum):
        return value
    try:
        return enum.parse(str(value))
    except ValueError:
        choices = [m.value for m in enum]
        close = get_close_matches(str(value).lower().replace("-", "_"), choices, n=1, cutoff=0.6)
        guess = f" (did you mean {close[0]}?)" if close else ""
        raise QueryError(
            f"unknown {name} {value!r}{guess}; expected one of: {', '.join(choices)}"
        ) from None
