"""Resource limits: the errors a matcher raises when a query explodes on its input.

Two limits bound what a matcher holds and produces (docs/semantics.md, "Limits"):

* ``max_runs`` bounds the *live state*: the partial matches (runs) every core keeps,
  the candidate events the postponing core collects for them, the runs a merged run
  stands for, the postponed branches of the backtrack core, the partial matches of a
  vectorized batch and the matches held back for a trailing negation. Exceeding it
  raises :class:`~kleene.errors.RunLimitError`.
* ``max_matches`` bounds the matches one matcher reports (counted from its creation or
  resumption). Exceeding it raises :class:`~kleene.errors.MatchLimitError` after the
  matches before the limit were handed out (to the ``on_matches`` callback when there is
  one), so a streaming consumer keeps them.
"""

from __future__ import annotations

from kleene.errors import MatchLimitError, RunLimitError

DEFAULT_MAX_RUNS = 1_000_000
DEFAULT_MAX_MATCHES = 1_000_000

RAISE_RUNS = "raise the limit with max_runs=N (kleene.compile) or --max-runs N (kleene run)"
RAISE_MATCHES = (
    "raise the limit with max_matches=N, or None for no limit (kleene.compile), or "
    "--max-matches N, 0 for no limit (kleene run)"
)
NARROW = "narrow the window (WITHIN) or use a stricter selection strategy"


def run_limit(limit: int, what: str, where: str = "") -> RunLimitError:
    """The error for live state beyond ``max_runs``: ``what`` says what was counted."""
    at = f" {where}" if where else ""
    return RunLimitError(
        f"run limit reached: more than max_runs={limit:,} {what}{at}; the pattern is too "
        f"permissive for this stream: {NARROW}, or {RAISE_RUNS}"
    )


def match_limit(limit: int) -> MatchLimitError:
    """The error for more than ``max_matches`` matches."""
    return MatchLimitError(
        f"match limit reached: the query found more than max_matches={limit:,} matches; "
        f"{NARROW}, or {RAISE_MATCHES}"
    )
