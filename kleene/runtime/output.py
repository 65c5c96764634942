"""What a matcher reports: the non-overlap output format (SIGMOD 2008, sections 2
and 5.2.1), the ``max_matches`` limit and the chunks handed to ``on_matches``.

Per partition, matches are ordered by (last position, first position, positions, then
each variable's positions in pattern order to tell apart selections of the same events); the
first is output and every match starting at or before its last position is dropped.
Matches arrive in order of their last event, except those held back by a trailing
negation, so a candidate is released only when no undecided candidate precedes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any, Generic, TypeVar

from kleene.runtime.limits import match_limit
from kleene.runtime.snapshot import boolean, integer, mapping, partition_key, sequence

CHUNK = 1024  # matches per on_matches call
R = TypeVar("R")

Order = tuple[Any, ...]  # (last position, first position, positions, per variable)


class Candidate:
    """A match offered for output, decided now or once its trailing negation is."""

    __slots__ = ("accepted", "decided", "order", "payload")

    def __init__(self, order: Order, decided: bool, accepted: bool, payload: Any) -> None:
        self.order = order
        self.decided = decided
        self.accepted = accepted
        self.payload = payload


class NonOverlapState:
    """Per-partition candidates and the last output match's end."""

    def __init__(self) -> None:
        self.candidates: dict[tuple[Any, ...], list[Candidate]] = {}
        self.last_end: dict[tuple[Any, ...], int] = {}

    def offer(self, partition: tuple[Any, ...], order: Order, payload: Any, decided: bool) -> None:
        """Add a candidate (decided now, or pending a trailing negation); call
        :meth:`release` once all candidates of the current event are offered."""
        candidate = Candidate(order, decided, decided, payload)
        self.candidates.setdefault(partition, []).append(candidate)

    def decide(self, partition: tuple[Any, ...], payload: Any, accepted: bool) -> list[Any]:
        for entry in self.candidates.get(partition, []):
            if entry.payload is payload:
                entry.decided, entry.accepted = True, accepted
        return self.release(partition)

    def release(self, partition: tuple[Any, ...]) -> list[Any]:
        entries = self.candidates.get(partition)
        if not entries:
            return []
        entries.sort(key=lambda c: c.order)
        out = []
        while entries and entries[0].decided:
            entry = entries.pop(0)
            last, first = entry.order[:2]
            if entry.accepted and first > self.last_end.get(partition, -1):
                self.last_end[partition] = last
                out.append(entry.payload)
        if not entries:
            del self.candidates[partition]
        return out

    # --- snapshots (kleene.runtime.snapshot) ------------------------------------------

    def to_data(self, ref: Callable[[Any], int]) -> Any:
        """Plain data; ``ref`` names a payload (the matcher writes them once, with
        their order)."""
        candidates = {
            key: [(c.decided, c.accepted, ref(c.payload)) for c in entries]
            for key, entries in self.candidates.items()
        }
        return (candidates, self.last_end)

    @classmethod
    def from_data(cls, data: Any, payload: Callable[[Any], tuple[Order, Any]]) -> NonOverlapState:
        """The state of :meth:`to_data`; ``payload`` turns a reference back into the
        payload's order and the payload."""
        candidates, last_end = sequence(data, "the non-overlap state", tuple, 2)
        st = cls()
        for key, entries in mapping(candidates, "non-overlap candidates").items():
            st.candidates[partition_key(key)] = [
                _entry(entry, payload) for entry in sequence(entries, "non-overlap candidates")
            ]
        for key, end in mapping(last_end, "non-overlap ends").items():
            st.last_end[partition_key(key)] = integer(end, "a non-overlap end", -1)
        return st


def _entry(x: Any, payload: Callable[[Any], tuple[Order, Any]]) -> Candidate:
    decided, accepted, ref = sequence(x, "a non-overlap candidate", tuple, 3)
    order, found = payload(ref)
    return Candidate(order, boolean(decided, "a flag"), boolean(accepted, "a flag"), found)


class Reporter(Generic[R]):
    """Counts the matches one matcher reports against ``max_matches`` (``limit``, None
    for no limit) and hands them to the ``on_matches`` callback (``sink``) if any."""

    def __init__(self, limit: int | None, sink: Callable[[list[R]], object] | None) -> None:
        self.limit = limit
        self.sink = sink
        self.reported = 0  # matches reported since the matcher was created

    def room(self) -> int | None:
        """How many matches may still come, one past the limit (None: no limit)."""
        return None if self.limit is None else max(self.limit - self.reported + 1, 0)

    def call(self) -> Output[R]:
        """The output of one call (push, advance_to, flush)."""
        return Output(self)


class Output(list[R]):
    """The matches one call reports, counted against ``max_matches`` as they come and,
    with an ``on_matches`` callback, handed to it in chunks of :data:`CHUNK`. On the
    limit the matches before it are handed out first, then :class:`MatchLimitError` is
    raised. Iterators given to ``extend`` are consumed only as far as needed, so a
    core's lazy result construction stops at the limit."""

    __slots__ = ("reporter",)

    def __init__(self, reporter: Reporter[R]) -> None:
        super().__init__()
        self.reporter = reporter

    def append(self, match: R) -> None:
        super().append(match)
        self._counted(1)

    def extend(self, matches: Iterable[R]) -> None:
        items = iter(matches)
        while True:
            part = list(islice(items, self._room()))
            if not part:
                return
            super().extend(part)
            self._counted(len(part))

    def __iadd__(self, matches: Iterable[R]) -> Output[R]:  # type: ignore[override,misc]
        self.extend(matches)
        return self

    def _room(self) -> int:
        """How many matches may come before the next check (one past the limit)."""
        r = self.reporter
        room = CHUNK - len(self) if r.sink is not None else 1 << 62
        if r.limit is not None:
            room = min(room, r.limit + 1 - r.reported)
        return max(room, 1)

    def _counted(self, n: int) -> None:
        r = self.reporter
        r.reported += n
        if r.limit is not None and r.reported > r.limit:
            del self[len(self) - (r.reported - r.limit) :]
            r.reported = r.limit
            self._drain()
            raise match_limit(r.limit)
        if r.sink is not None and len(self) >= CHUNK:
            self._drain()

    def _drain(self) -> None:
        if self.reporter.sink is not None and len(self):
            chunk = list(self)
            self.clear()
            self.reporter.sink(chunk)

    def finish(self) -> list[R]:
        """The call's matches (none left when a callback took them)."""
        self._drain()
        return list(self)
