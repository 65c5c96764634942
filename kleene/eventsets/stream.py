"""Match windows over a stream, without pre-processing (match-window paper, section 4.1).

:class:`PlainWindows` buffers the admitted events; once an event arrives more than τ
after the first buffered one, that event's match window (Definition 3) is complete and
algorithm A (Definition 4) returns the matches starting there; then the first event
leaves the buffer. At the end of the stream every remaining window is evaluated. This
is the baseline the two-phase strategy (filtering, partitioning, necessary match
conditions) improves on; any pipeline with the same ``push``/``advance``/``flush``/
``to_data`` serves :class:`~kleene.eventsets.matcher.SesMatcher`.

Every step is lazy: a pipeline's methods are generators of the matches as algorithm A
finds them, so a consumer that stops (the ``max_matches`` limit) stops the enumeration.
Consume each call's generator before the next call: the pipeline's state advances as
it is read. ``max_runs`` bounds the events one match window holds (the buffer, here):
more raise :class:`~kleene.errors.RunLimitError`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kleene.errors import RunLimitError
from kleene.eventsets.compile import TIME, Row
from kleene.eventsets.model import SesMatch, SesPattern
from kleene.runtime import snapshot
from kleene.runtime.limits import DEFAULT_MAX_RUNS, run_limit


class Algorithm(Protocol):
    """Algorithm A: the matches whose earliest event is ``events[0]``, as found."""

    def each(self, events: Sequence[Row], positions: Sequence[int]) -> Iterator[SesMatch]: ...


@dataclass(frozen=True)
class Found:
    """A match and the rows of its events, by position."""

    match: SesMatch
    rows: dict[int, Row]


class Pipeline(Protocol):
    """What :class:`~kleene.eventsets.matcher.SesMatcher` drives: admitted events in
    time order in, matches of completed windows out (lazily, see the module docstring),
    and its state as snapshot data."""

    def push(self, position: int, row: Row) -> Iterator[Found]: ...
    def advance(self, time: Any) -> Iterator[Found]: ...
    def flush(self) -> Iterator[Found]: ...
    def drain(self, positions: Sequence[int], rows: Sequence[Row]) -> Iterator[Found]:
        """A finite input read to its end: what ``push`` of each event, then ``flush``,
        give."""

    def to_data(self) -> Any: ...
    def load(self, data: Any, below: int) -> None:
        """Take over :meth:`to_data`'s state (positions are under ``below``), checking
        it (SnapshotError through :func:`kleene.runtime.snapshot.fail`)."""


def found(algorithm: Algorithm, events: Sequence[Row], positions: Sequence[int]) -> Iterator[Found]:
    """A's matches on one window, each with its rows, as A finds them."""
    at = dict(zip(positions, events, strict=True))
    for m in algorithm.each(events, positions):
        yield Found(m, {p: at[p] for seq in m.bindings.values() for p in seq})


def window_limit(max_runs: int) -> RunLimitError:
    """The error for a match window of more than ``max_runs`` events."""
    return run_limit(max_runs, "events in one match window (those within WITHIN of its first)")


class PlainWindows:
    """The baseline pipeline: every admitted event in one match window buffer."""

    def __init__(
        self, pattern: SesPattern, algorithm: Algorithm, max_runs: int = DEFAULT_MAX_RUNS
    ) -> None:
        self.window = pattern.window
        self.algorithm = algorithm
        self.max_runs = max_runs
        self.buffer: deque[tuple[int, Row]] = deque()

    def _evaluate_first(self) -> Iterator[Found]:
        positions = [p for p, _ in self.buffer]
        events = [row for _, row in self.buffer]
        self.buffer.popleft()
        yield from found(self.algorithm, events, positions)

    def advance(self, time: Any) -> Iterator[Found]:
        """No event before ``time`` will come: evaluate the windows it completes."""
        while self.buffer and time - self.buffer[0][1][TIME] > self.window:
            yield from self._evaluate_first()

    def push(self, position: int, row: Row) -> Iterator[Found]:
        yield from self.advance(row[TIME])
        self.buffer.append((position, row))
        if len(self.buffer) > self.max_runs:
            raise window_limit(self.max_runs)

    def flush(self) -> Iterator[Found]:
        while self.buffer:
            yield from self._evaluate_first()

    def drain(self, positions: Sequence[int], rows: Sequence[Row]) -> Iterator[Found]:
        for position, row in zip(positions, rows, strict=True):
            yield from self.push(position, row)
        yield from self.flush()

    def to_data(self) -> Any:
        return [[p, row] for p, row in self.buffer]

    def load(self, data: Any, below: int) -> None:
        """Take over buffered events: increasing positions under ``below``, each with a
        row that has a numeric time."""
        events: list[tuple[int, Row]] = []
        last = -1
        for item in snapshot.sequence(data, "the buffer"):
            position, row = snapshot.sequence(item, "a buffered event", list, 2)
            position = snapshot.integer(position, "a position", last + 1, below)
            row = snapshot.mapping(row, "a buffered row")
            snapshot.number(row.get(TIME), "a buffered time")
            events.append((position, row))
            last = position
        self.buffer = deque(events)
