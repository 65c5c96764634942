"""Match windows (match-windows paper, section 4.1, Definition 3, and 4.3).

The match window starting at event ``e_i`` holds every later event within τ of it:
``W_i = ⟨e ∈ E | 0 ≤ e.T − e_i.T ≤ τ⟩``. A window is a queue that collects the events
a match starting at its first event may use; once an event more than τ after the first
arrives, the window is complete, the matching algorithm may be called on it, and its
first event leaves. With the summary statistics the window also answers whether it is
a *candidate*: whether it meets the necessary match conditions 4 to 7 of Theorem 2.
:func:`candidates` reads a batch's windows so, by columns of times and bit vectors: the
reference the SASE+ engines' window front (:mod:`kleene.runtime.matchwindows`) is
tested against.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np

from kleene.eventsets.model import SesPattern, Time
from kleene.eventsets.summary import SummaryStatistics, Tag

#: The attribute holding an event's occurrence time T.
TIME = "timestamp"


class Entry(NamedTuple):
    """An event in a window: its input position, the event, its time, its bit vector
    ``ē`` and what its arrival counted in the summary statistics."""

    position: int
    event: Mapping[str, Any]
    time: Time
    bits: int
    tag: Tag | None


class MatchWindow:
    """One match window with (optionally) its summary statistics."""

    def __init__(self, pattern: SesPattern, statistics: bool) -> None:
        self.m = len(pattern.variables)
        self.summary = SummaryStatistics(pattern) if statistics else None
        self.entries: deque[Entry] = deque()

    def __len__(self) -> int:
        return len(self.entries)

    def enqueue(self, position: int, event: Mapping[str, Any], time: Time, bits: int) -> None:
        tag = self.summary.add(bits) if self.summary is not None else None
        self.entries.append(Entry(position, event, time, bits, tag))

    def dequeue(self) -> Entry:
        entry = self.entries.popleft()
        if self.summary is not None and entry.tag is not None:
            self.summary.remove(entry.tag)
        return entry

    def complete(self, time: Time, window: Time) -> bool:
        """Whether an event at ``time`` lies beyond τ of the first event."""
        return bool(self.entries) and time - self.entries[0].time > window

    def conditions(self) -> tuple[bool, bool, bool]:
        """Conditions 4 (|W| ≥ m), 5 (the first event satisfies the properties of a
        variable of B_1) and 6-7 (every counter positive, Theorem 3)."""
        assert self.summary is not None
        first = bool(self.entries) and self.summary.starts(self.entries[0].bits)
        return len(self.entries) >= self.m, first, self.summary.satisfied

    def candidate(self) -> bool:
        """Whether a match may start at the first event (all conditions hold); without
        statistics every non-empty window is a candidate."""
        summary = self.summary
        if summary is None:
            return bool(self.entries)
        return (  # conditions 6-7, 4 and 5, the cheapest first
            not summary.zero
            and len(self.entries) >= self.m
            and bool(self.entries[0].bits & summary.first_set)
        )

    def hopeless(self) -> bool:
        """With no event still to come, whether no later start can match either: too
        few events, or a counter at zero (counters only fall as events leave)."""
        if self.summary is None:
            return not self.entries
        return len(self.entries) < self.m or not self.summary.satisfied


def each_window(
    events: list[Mapping[str, Any]], window: Time
) -> Iterator[tuple[list[Mapping[str, Any]], list[int]]]:
    """Every match window of a stream in time order (Definition 3): for each event, it
    and the events after it within τ, with their positions."""
    end = 0
    for start, first in enumerate(events):
        end = max(end, start)
        limit = first[TIME] + window
        while end < len(events) and events[end][TIME] <= limit:
            end += 1
        yield events[start:end], list(range(start, end))


_NO_EVENT: dict[str, object] = {}  # the windows of candidates need no event


def candidates(
    pattern: SesPattern,
    times: np.ndarray,
    bits: np.ndarray,
    codes: np.ndarray | None,
    fresh: bool,
) -> np.ndarray:
    """Which events of a batch in time order lie in a candidate window, with summary
    statistics, per partition: ``bits`` are the events' bit vectors ``ē`` (0: dropped,
    Theorem 1), ``codes`` their partition codes (None: one partition). Windows the batch
    cannot complete are kept whole: those still open at its end whose first event may
    start a match and, unless ``fresh`` says no event came before the batch, the events
    of its first τ (their windows may have begun earlier)."""
    n = len(times)
    keep = np.zeros(n, dtype=bool)
    if not n:
        return keep
    tau = pattern.window
    at = times.tolist()
    windows: dict[int, MatchWindow] = {}
    marked: dict[int, int] = {}  # per partition, the last position kept

    def keep_window(key: int, window: MatchWindow) -> None:
        last = marked.get(key, -1)
        for entry in reversed(window.entries):
            if entry.position <= last:
                break
            keep[entry.position] = True
        marked[key] = window.entries[-1].position

    def complete(key: int, window: MatchWindow, time: Any) -> None:
        while window.complete(time, tau):
            if window.candidate():
                keep_window(key, window)
            window.dequeue()

    for j in np.flatnonzero(bits).tolist():
        key = 0 if codes is None else int(codes[j])
        window = windows.get(key)
        if window is None:
            window = windows[key] = MatchWindow(pattern, True)
        complete(key, window, at[j])
        window.enqueue(j, _NO_EVENT, at[j], int(bits[j]))
    end = at[-1]
    for key, window in windows.items():
        complete(key, window, end)
        while len(window) and not window.conditions()[1]:
            window.dequeue()  # no match starts at it (condition 5)
        if len(window):  # windows a later event may still add to
            keep_window(key, window)
    if not fresh:
        keep |= times <= times[0] + tau
    return keep
