"""The shared match buffer (SIGMOD 2008, section 5.1), with slot-numbered pointers.

One stack per NFA^b state holds the events selected at that state, each stored once
however many runs selected it. Every selection adds a *pointer set* to the entry: the
run's previous selection(s), written as (entry, slot, start time) origins. Each
selection gets its own slot, numbered by its place in the entry's list of pointer sets,
and the run carries the (entry, slot) of its latest selection. Retrieval therefore
follows exactly the pointers that this run wrote, one step per selection, back to its
first event: the run's own match and no other run's. A run merged from several
(section 5.2.2) carries each member's latest (entry, slot); retrieval yields one match
per member.

The paper labels pointers with Dewey version numbers and, at retrieval, takes the
pointer whose version is compatible with the run's (section 5.1). Here no label needs
to be searched: a slot is written once, by one selection, and never changes, so the
pointer that a run's match continues with is named directly. Two runs that share a
prefix share its entries and slots; after a split each writes new slots of its own.

Pruning (section 5.3): entries older than the oldest live run can never be reached
again; :meth:`SharedMatchBuffer.prune` drops them from the bottom of each stack.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

from kleene.runtime.snapshot import Flat, Shapes, fail, integer, number, sequence

EntryKey = tuple[int, int]  # (state index, event position)
# the latest selection(s) of a run: (entry, the slot of its pointer set, start time)
Origins = tuple[tuple[EntryKey, int, Any], ...]
# An event selected at one state, stored once, with the pointers of each of its
# selections, by slot; always read by unpacking:  event_id, time, slots = entry
# (a plain tuple: one is made per selected event, see Run in nfa/engine.py)
Entry = tuple[Any, Any, list[Origins]]


class SharedMatchBuffer:
    """Storage of all partial and complete matches of one matcher."""

    __slots__ = ("entries", "stacks")

    def __init__(self, n_states: int) -> None:
        self.entries: dict[EntryKey, Entry] = {}
        self.stacks: list[deque[int]] = [deque() for _ in range(n_states)]

    def add(
        self, state: int, position: int, event_id: Any, time: Any, previous: Origins
    ) -> tuple[EntryKey, int]:
        """Record that a run selected this event at ``state`` after ``previous`` (its
        earlier selection; several for a merged run, none for a run's first event);
        return the entry and the slot that name this selection."""
        key = (state, position)
        entry = self.entries.get(key)
        if entry is None:
            self.entries[key] = (event_id, time, [previous])
            self.stacks[state].append(position)
            return key, 0
        _id, _time, slots = entry
        slots.append(previous)
        return key, len(slots) - 1

    def retrieve(self, origins: Origins) -> Iterator[list[tuple[int, int, Any, Any]]]:
        """Every match the pointers lead to, each as (state, position, id, time)
        selections in order: one for a plain run, one per member for a merged run.
        Lazy: a merged run's pointers may lead to exponentially many matches, which the
        matcher counts against ``max_matches`` as they come."""
        # each stack item: (entry, slot, the selections after it as a linked list)
        stack: list[tuple[EntryKey, int, Any]] = [(k, s, None) for k, s, _ in origins]
        while stack:
            key, slot, suffix = stack.pop()
            while True:
                event_id, time, slots = self.entries[key]
                state, position = key
                suffix = ((state, position, event_id, time), suffix)
                previous = slots[slot]
                if not previous:
                    break
                for other_key, other_slot, _start in previous[1:]:
                    stack.append((other_key, other_slot, suffix))
                key, slot, _start = previous[0]
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
        NFA^b state, written without a tag per value): per entry, the number of slots,
        then per slot its number of origins, then per origin the entry key (state,
        position), the slot and the start time."""
        entries = self.entries
        flat: list[Any] = []
        stacks = []
        for s, stack in enumerate(self.stacks):
            stack_entries = [(p, entries[(s, p)]) for p in stack]
            stacks.append([(p, event_id, time) for p, (event_id, time, _slots) in stack_entries])
            for _p, (_id, _time, slots) in stack_entries:
                flat.append(len(slots))
                for origins in slots:
                    flat.append(len(origins))
                    for (state, position), slot, start in origins:
                        flat += (state, position, slot, start)
        return (stacks, Flat(flat))

    @classmethod
    def from_data(cls, data: Any, shapes: Shapes) -> SharedMatchBuffer:
        """The buffer of :meth:`to_data`, checked: one stack per state, each entry
        once, pointers of the right shape."""
        stacks, flat = sequence(data, "the buffer", tuple, 2)
        if type(flat) is not Flat or not set(map(type, flat.items)) <= {int, float}:
            fail("the buffer's pointers are not a list of numbers")
        items, at = flat.items, 0
        buffer = cls(shapes.n_states)
        try:
            for state, stack in enumerate(sequence(stacks, "the buffer", list, shapes.n_states)):
                for item in sequence(stack, "a buffer stack"):
                    position, event_id, time = sequence(item, "a buffer entry", tuple, 3)
                    integer(position, "a buffer position", 0)
                    number(time, "a buffer entry's time")
                    slots = []
                    at += 1
                    for _ in range(integer(items[at - 1], "a slot count", 1)):
                        origins = []
                        at += 1
                        for _ in range(integer(items[at - 1], "an origin count", 0)):
                            key = (integer(items[at], "an entry key", 0), items[at + 1])
                            integer(key[1], "an entry key", 0)
                            slot = integer(items[at + 2], "a pointer slot", 0)
                            origins.append((key, slot, items[at + 3]))
                            at += 4
                        slots.append(tuple(origins))
                    if (state, position) in buffer.entries:
                        fail("a buffer entry twice")
                    buffer.entries[(state, position)] = (event_id, time, slots)
                    buffer.stacks[state].append(position)
        except (IndexError, TypeError):  # a count beyond the end, or not an integer
            fail("the buffer's pointers are cut short or hold a bad count")
        if at != len(items):
            fail("the buffer's pointers go on after the last entry")
        return buffer

    def check_reachable(self, origins: Origins, seen: set[tuple[EntryKey, int]]) -> None:
        """Every pointer chain from ``origins`` ends at a run's first selection, through
        entries and slots that exist (so that :meth:`retrieve` cannot fail)."""
        todo = [(key, slot) for key, slot, _start in origins]
        while todo:
            key, slot = todo.pop()
            if (key, slot) in seen:
                continue
            seen.add((key, slot))
            entry = self.entries.get(key)
            if entry is None:
                fail("a run points to a buffer entry that does not exist")
            _id, _time, slots = entry
            if not 0 <= slot < len(slots):
                fail("a run points to a buffer entry slot that does not exist")
            todo += [(k, s) for k, s, _start in slots[slot]]


def check_origins(x: Any, what: str) -> Origins:
    """Pointers: ((state, position), slot, start time) triples."""
    for origin in sequence(x, what, tuple):
        key, slot, start = sequence(origin, what, tuple, 3)
        state, position = sequence(key, "a buffer key", tuple, 2)
        integer(state, "a buffer key's state", 0)
        integer(position, "a buffer key's position", 0)
        integer(slot, "a pointer slot", 0)
        number(start, "a run's start time")
    return x
