"""``max_runs`` over interval events (:mod:`kleene.runtime.limits`): each framework
counts the partial state that grows with the input faster than the input itself, and
raises :class:`~kleene.errors.RunLimitError` past the limit while it grows, so a query
that explodes stops in bounded memory.

What is counted (docs/semantics.md, "Limits"):

* the point-based framework (VLDB 2010, section 3): its runs (partial point matches)
  and the point matches waiting to be collapsed into a signature's result;
* the event-based framework (section 4): its runs, the matches completed and not yet
  given a confidence, and under skip till next match the signatures waiting for every
  event that could spoil them;
* Kleene closure (SASE++ section 4, Algorithm 1): the partial signatures of the two
  levels of the lattice held at once.

The admitted events a framework buffers (held until the end of the input while U_max is
measured, sorted for query or selectivity order, or kept for Kleene closure) are the
input itself and are not counted.
"""

from __future__ import annotations

from kleene.runtime.limits import run_limit


class RunBudget:
    """The ``max_runs`` of one framework (``limit`` None: no limit) and what it counts."""

    __slots__ = ("limit", "what")

    def __init__(self, limit: int | None, what: str) -> None:
        self.limit = limit
        self.what = what

    def check(self, live: int) -> None:
        """RunLimitError when ``live`` units of partial state exceed the limit."""
        if self.limit is not None and live > self.limit:
            raise run_limit(self.limit, self.what, "over interval events")


#: no limit: the frameworks built directly (tests, benchmarks) unless given one
UNLIMITED = RunBudget(None, "")
