"""The shared versioned match buffer (SIGMOD 2008, section 5.1).

One stack per NFA^b state holds the events selected at that state, each stored once
however many runs selected it. Every selection adds a *versioned pointer* to the entry:
labelled with the selecting run's Dewey version number, it points to the run's previous
entry. Because a run's version changes when it splits or moves on, each pointer also
records the version under which its predecessor pointer was written, so retrieval
follows exactly one chain: the versioned view that is the run's match. A run merged
from several (section 5.2.2) points to each member's previous entry; retrieval then
yields one chain per member.

Dewey numbers (section 5.1): a run started by the k-th initiation has version ``(k,)``;
a run that moves to the next state appends a digit, a run that splits off at the same
state replaces the last digit with a larger one. Digits come from one counter, so every
live run has a distinct version and two runs never write the same pointer label into
one entry. :func:`compatible` states the paper's compatibility relation between a
version and an ancestor's.

Pruning (section 5.3): entries older than the oldest live run can never be reached
again; :meth:`SharedVersionedBuffer.prune` drops them from the bottom of each stack.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

Version = tuple[int, ...]
EntryKey = tuple[int, int]  # (state index, event position)
# the latest selection(s) of a run: (entry, the label its pointer has, start time)
Origins = tuple[tuple[EntryKey, Version, Any], ...]


def compatible(version: Version, ancestor: Version) -> bool:
    """Whether ``version`` descends from ``ancestor``: it extends it, or differs only in
    a larger last digit (SIGMOD 2008, section 5.1)."""
    if len(version) > len(ancestor):
        return version[: len(ancestor)] == ancestor
    if len(version) == len(ancestor):
        return version[:-1] == ancestor[:-1] and version[-1] >= ancestor[-1]
    return False


class SharedVersionedBuffer:
    """Storage of all partial and complete matches of one matcher."""

    __slots__ = ("entries", "stacks")

    def __init__(self, n_states: int) -> None:
        # entry -> [event id, timestamp, {version: origins of the selection before it}]
        self.entries: dict[EntryKey, list[Any]] = {}
        self.stacks: list[deque[int]] = [deque() for _ in range(n_states)]

    def add(
        self,
        state: int,
        position: int,
        event_id: Any,
        time: Any,
        version: Version,
        previous: Origins,
    ) -> EntryKey:
        """Record that the run ``version`` selected this event at ``state``;
        ``previous`` points to the run's earlier selection (several for a merged run,
        none for a run's first event)."""
        key = (state, position)
        entry = self.entries.get(key)
        if entry is None:
            entry = [event_id, time, {}]
            self.entries[key] = entry
            self.stacks[state].append(position)
        entry[2][version] = previous
        return key

    def retrieve(self, origins: Origins) -> Iterator[list[tuple[int, int, Any, Any]]]:
        """Every match the pointers lead to, each as (state, position, id, time)
        selections in order: one for a plain run, one per member for a merged run.
        Lazy: a merged run's pointers may lead to exponentially many matches, which the
        matcher counts against ``max_matches`` as they come."""
        # each stack item: (entry, label, the selections after it as a linked list)
        stack: list[tuple[EntryKey, Version, Any]] = [(k, v, None) for k, v, _ in origins]
        while stack:
            key, label, suffix = stack.pop()
            while True:
                entry = self.entries[key]
                suffix = ((key[0], key[1], entry[0], entry[1]), suffix)
                previous = entry[2][label]
                if not previous:
                    break
                for other in previous[1:]:
                    stack.append((other[0], other[1], suffix))
                key, label = previous[0][0], previous[0][1]
            selections = []
            while suffix is not None:
                selections.append(suffix[0])
                suffix = suffix[1]
            yield selections

    def prune(self, oldest_position: int) -> None:
        """Drop entries of events before ``oldest_position`` (section 5.3)."""
        for state, stack in enumerate(self.stacks):
            while stack and stack[0] < oldest_position:
                del self.entries[(state, stack.popleft())]

    def __len__(self) -> int:
        return len(self.entries)
