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

from kleene.runtime.snapshot import Flat, Shapes, fail, integer, number, sequence

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

    # --- snapshots (kleene.runtime.snapshot) ------------------------------------------

    def to_data(self) -> Any:
        """Plain data: per state, its stack of entries as (position, id, time), bottom
        first, and every entry's pointers as one flat list of numbers (the bulk of an
        NFA^b state, written without a tag per value): per entry, the number of
        versions, then per version its length, its digits and its number of origins,
        then per origin the entry key (state, position), the version's length and
        digits, and the start time."""
        entries = self.entries
        flat: list[Any] = []
        stacks = []
        for s, stack in enumerate(self.stacks):
            stacks.append([(p, *entries[(s, p)][:2]) for p in stack])
            for p in stack:
                versions = entries[(s, p)][2]
                flat.append(len(versions))
                for version, origins in versions.items():
                    flat += (len(version), *version, len(origins))
                    for (state, position), label, start in origins:
                        flat += (state, position, len(label), *label, start)
        return (stacks, Flat(flat))

    @classmethod
    def from_data(cls, data: Any, shapes: Shapes) -> SharedVersionedBuffer:
        """The buffer of :meth:`to_data`, checked: one stack per state, each entry
        once, pointers of the right shape."""
        stacks, flat = sequence(data, "the buffer", tuple, 2)
        if type(flat) is not Flat or not set(map(type, flat.items)) <= {int, float}:
            fail("the buffer's pointers are not a list of numbers")
        items, at = flat.items, 0
        versions_seen: dict[Version, Version] = {}

        def version(start: int) -> Version:
            n = items[start]
            v = tuple(items[start + 1 : start + 1 + n])
            known = versions_seen.get(v)
            if known is None:  # each distinct version is checked once, and shared
                known = versions_seen[v] = check_version(v)
            if type(n) is not int or len(v) != n:
                fail("the buffer's pointers end early")
            return known

        buffer = cls(shapes.n_states)
        try:
            for state, stack in enumerate(sequence(stacks, "the buffer", list, shapes.n_states)):
                for item in sequence(stack, "a buffer stack"):
                    position, event_id, time = sequence(item, "a buffer entry", tuple, 3)
                    integer(position, "a buffer position", 0)
                    number(time, "a buffer entry's time")
                    versions = {}
                    at += 1
                    for _ in range(items[at - 1]):
                        label = version(at)
                        at += 1 + len(label)
                        origins = []
                        for _ in range(items[at]):
                            key = (integer(items[at + 1], "an entry key", 0), items[at + 2])
                            integer(key[1], "an entry key", 0)
                            previous = version(at + 3)
                            at += 4 + len(previous)
                            origins.append((key, previous, items[at]))
                        at += 1
                        versions[label] = tuple(origins)
                    if (state, position) in buffer.entries:
                        fail("a buffer entry twice")
                    buffer.entries[(state, position)] = [event_id, time, versions]
                    buffer.stacks[state].append(position)
        except (IndexError, TypeError):  # a count beyond the end, or not an integer
            fail("the buffer's pointers are cut short or hold a bad count")
        if at != len(items):
            fail("the buffer's pointers go on after the last entry")
        return buffer

    def check_reachable(self, origins: Origins, seen: set[tuple[EntryKey, Version]]) -> None:
        """Every pointer chain from ``origins`` ends at a run's first selection, through
        entries that exist (so that :meth:`retrieve` cannot fail)."""
        todo = [(key, label) for key, label, _start in origins]
        while todo:
            key, label = todo.pop()
            if (key, label) in seen:
                continue
            seen.add((key, label))
            entry = self.entries.get(key)
            if entry is None or label not in entry[2]:
                fail("a run points to a buffer entry that does not exist")
            todo += [(k, v) for k, v, _start in entry[2][label]]


def check_version(x: Any) -> Version:
    """A Dewey version: a non-empty tuple of positive integers."""
    if type(x) is not tuple or not x or any(type(d) is not int or d < 1 for d in x):
        fail("a run version is not a tuple of positive integers")
    return x


def check_origins(x: Any, what: str) -> Origins:
    """Pointers: ((state, position), version, start time) triples."""
    for origin in sequence(x, what, tuple):
        key, version, start = sequence(origin, what, tuple, 3)
        state, position = sequence(key, "a buffer key", tuple, 2)
        integer(state, "a buffer key's state", 0)
        integer(position, "a buffer key's position", 0)
        check_version(version)
        number(start, "a run's start time")
    return x
