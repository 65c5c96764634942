"""Match windows over a stream, without pre-processing (match-window paper, section 4.1).

:class:`PlainWindows` buffers the admitted events; once an event arrives more than τ
after the first buffered one, that event's match window (Definition 3) is complete and
algorithm A (Definition 4) returns the matches starting there; then the first event
leaves the buffer. At the end of the stream every remaining window is evaluated. This
is the baseline the two-phase strategy (filtering, partitioning, necessary match
conditions) improves on; any pipeline with the same ``push``/``advance``/``flush``/
``to_data`` serves :class:`~kleene.eventsets.matcher.SesMatcher`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kleene.eventsets.compile import TIME, Row
from kleene.eventsets.model import SesMatch, SesPattern
from kleene.runtime import snapshot


class Algorithm(Protocol):
    """Algorithm A: the matches whose earliest event is ``events[0]``."""

    def matches(self, events: Sequence[Row], positions: Sequence[int]) -> list[SesMatch]: ...


@dataclass(frozen=True)
class Found:
    """A match and the rows of its events, by position."""

    match: SesMatch
    rows: dict[int, Row]


class Pipeline(Protocol):
    """What :class:`~kleene.eventsets.matcher.SesMatcher` drives: admitted events in
    time order in, matches of completed windows out, and its state as snapshot data."""

    def push(self, position: int, row: Row) -> list[Found]: ...
    def advance(self, time: Any) -> list[Found]: ...
    def flush(self) -> list[Found]: ...
    def drain(self, positions: Sequence[int], rows: Sequence[Row]) -> list[Found]:
        """A finite input read to its end: what ``push`` of each event, then ``flush``,
        give."""

    def to_data(self) -> Any: ...
    def load(self, data: Any, below: int) -> None:
        """Take over :meth:`to_data`'s state (positions are under ``below``), checking
        it (SnapshotError through :func:`kleene.runtime.snapshot.fail`)."""


def found(algorithm: Algorithm, events: Sequence[Row], positions: Sequence[int]) -> list[Found]:
    """A's matches on one window, each with its rows."""
    out = []
    at = dict(zip(positions, events, strict=True))
    for m in algorithm.matches(events, positions):
        out.append(Found(m, {p: at[p] for seq in m.bindings.values() for p in seq}))
    return out


class PlainWindows:
    """The baseline pipeline: every admitted event in one match window buffer."""

    def __init__(self, pattern: SesPattern, algorithm: Algorithm) -> None:
        self.window = pattern.window
        self.algorithm = algorithm
        self.buffer: deque[tuple[int, Row]] = deque()

    def _evaluate_first(self) -> list[Found]:
        positions = [p for p, _ in self.buffer]
        events = [row for _, row in self.buffer]
        self.buffer.popleft()
        return found(self.algorithm, events, positions)

    def advance(self, time: Any) -> list[Found]:
        """No event before ``time`` will come: evaluate the windows it completes."""
        out: list[Found] = []
        while self.buffer and time - self.buffer[0][1][TIME] > self.window:
            out += self._evaluate_first()
        return out

    def push(self, position: int, row: Row) -> list[Found]:
        out = self.advance(row[TIME])
        self.buffer.append((position, row))
        return out

    def flush(self) -> list[Found]:
        out: list[Found] = []
        while self.buffer:
            out += self._evaluate_first()
        return out

    def drain(self, positions: Sequence[int], rows: Sequence[Row]) -> list[Found]:
        out: list[Found] = []
        for position, row in zip(positions, rows, strict=True):
            out += self.push(position, row)
        return out + self.flush()

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
