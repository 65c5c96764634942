"""The contract between the matcher and an evaluation core.

The matcher (:mod:`kleene.runtime.matcher`) admits events, keeps time, checks negations
and formats output; a *core* finds the matches of the positive pattern. Every core
evaluates the same compiled plan and must report exactly the same completions; they
differ in how they get there (the NFA^b basic algorithm with or without run merging,
postponed predicates, backtracking).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from kleene.events import EventBatch
    from kleene.runtime.config import MatcherConfig

# One selected event: (state index, stream position, event id, time)
Selection = tuple[int, int, Any, Any]


class Completion(NamedTuple):
    """A match of the positive pattern: its selections in pattern order and the final
    computation-state vector (which RETURN and negation checks read)."""

    partition: tuple[Any, ...]
    selections: list[Selection]
    vector: tuple[Any, ...]


class Intermediate(NamedTuple):
    """An intermediate match of postponed evaluation (SIGMOD 2014, section 5.1): its
    anchors and candidate segments, reported as is for the collapsed output format."""

    partition: tuple[Any, ...]
    items: list[Any]


class Core(Protocol):
    """An evaluation core. All of its mutable state lives in the object ``new_state``
    returns, whose class turns it into plain data (``to_data``) and back, checked
    against the plan (``from_data(data, shapes)``), for matcher snapshots
    (:mod:`kleene.runtime.snapshot`)."""

    def new_state(self) -> Any: ...

    def process(
        self,
        st: Any,
        e: tuple[Any, ...],
        position: int,
        partition: tuple[Any, ...],
        window: float | None,
    ) -> Iterable[Completion] | list[Intermediate]:
        """Consume one event of ``partition``; return the matches it completes (an
        iterator where there may be very many: the matcher consumes it at once, counting
        the matches against ``max_matches``)."""
        ...

    def sweep(self, st: Any, now: Any, window: float | None) -> None:
        """Drop state that can no longer lead to a match (SIGMOD 2008, section 5.3)."""
        ...

    def drop_partition(self, st: Any, partition: tuple[Any, ...]) -> None:
        """Forget every partial match of a partition (non-overlap output)."""
        ...

    def live_runs(self, st: Any) -> int: ...

    def flush(self, st: Any, window: float | None) -> Iterable[Completion]:
        """End of stream: the matches still held back (none for most cores)."""
        ...


class BatchHost(Protocol):
    """What a core that evaluates whole batches (the vector core) needs from the matcher
    driving it. The matcher implements it, so the core never imports the matcher."""

    @property
    def st(self) -> Any:
        """The matcher's state: ``core`` (this core's state), ``time_kind``, ``tz``,
        ``arrived``, ``position``, ``clock`` and ``non_overlap``."""
        ...

    @property
    def config(self) -> MatcherConfig: ...

    @property
    def reported(self) -> int:
        """Matches reported so far (counted against ``config.max_matches``)."""
        ...

    def window(self) -> float | None:
        """The WITHIN size in the stream's time units."""
        ...

    def time_out(self, value: Any) -> Any:
        """A stream time as the user sees it."""
        ...

    def push_relevant(self, batch: EventBatch, clean: set[str], out: list[Any]) -> None:
        """Evaluate an admitted batch event by event (the fallback of batch cores)."""
        ...


def expire(partitions: dict[tuple[Any, ...], list[Any]], now: Any, window: float) -> int:
    """Drop the runs (tuples whose third field is their start time) that the window has
    passed, and partitions left empty; return how many runs were dropped."""
    dropped = 0
    for key in list(partitions):
        runs = partitions[key]
        alive = [r for r in runs if now - r[2] <= window]
        dropped += len(runs) - len(alive)
        if alive:
            partitions[key] = alive
        else:
            del partitions[key]
    return dropped
