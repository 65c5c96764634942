"""How a matcher is configured: input fields, lateness, limits, core and time unit.

Its own module so that the matcher, the cores and the snapshot format can all read it
without importing the matcher.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kleene.events import EventFields
from kleene.runtime.limits import DEFAULT_MAX_RUNS


@dataclass(frozen=True)
class MatcherConfig:
    fields: EventFields = field(default_factory=EventFields)
    allowed_lateness: float = 0
    max_runs: int = DEFAULT_MAX_RUNS
    max_matches: int | None = None  # None: no limit
    engine: str = "nfa"  # a core of runtime.choice.ENGINES, never "auto" (resolved before)
    time_unit: str | None = None  # what one unit of a numeric time column is ("ms", ...)
