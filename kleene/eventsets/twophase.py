"""The two-phase strategy: pre-processing in match windows, then lazy matching
(match-windows paper, section 4 and Algorithm 1).

Events are read in time order. *Filtering* (Theorem 1) drops an event that satisfies
the properties of no variable; *partitioning* (Definition 6) sends each event to the
match window of its values of the partitioning attributes, and the equality
relationships those values guarantee are removed from the pattern the algorithm sees;
the necessary match *conditions* (Theorem 2, through the summary statistics) decide
whether the algorithm is called on a complete window at all. The matching algorithm A
is called lazily, once per candidate window, and returns the matches that start at the
window's first event; after the last event every window is drained (the end-of-stream
loop). Each technique can be switched off; with all three off this is the plain match
window (the experiments' baseline).

Algorithm 1's drain loop stops at the first window that fails conditions 4 to 7; here a
window whose first event fails condition 5 only is skipped (a later start may still
match), and the loop stops once no later start can match (:meth:`MatchWindow.hopeless`).

The pipeline is lazy (:mod:`kleene.eventsets.stream`): A runs as its matches are read,
so a consumer that stops at ``max_matches`` stops it. ``max_runs`` bounds the events one
match window holds, after filtering and partitioning: checked as each event joins its
window while streaming, and on every window of a whole batch before A is called.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from kleene.errors import KleeneError
from kleene.eventsets.batch import Conditions, NotColumnar, windows
from kleene.eventsets.filtering import PropertyBits
from kleene.eventsets.model import SesMatch, SesPattern, Time
from kleene.eventsets.partitioning import (
    partition_attributes,
    partition_key,
    removed,
    without_partitioning,
)
from kleene.eventsets.sources import RowSource, Source, source_of
from kleene.eventsets.stream import Algorithm, Found, found, window_limit
from kleene.eventsets.windows import TIME, MatchWindow
from kleene.runtime import snapshot
from kleene.runtime.limits import DEFAULT_MAX_RUNS

Event = Mapping[str, Any]


@dataclass
class Counters:
    """What the strategy did: events read and kept, calls of A and the events passed."""

    events: int = 0
    kept: int = 0
    windows: int = 0
    calls: int = 0
    events_to_a: int = 0


@dataclass(frozen=True)
class Flags:
    """The pruning techniques in use, named as in the experiments (f, p, c)."""

    filtering: bool = True
    partitioning: bool = True
    conditions: bool = True

    @property
    def name(self) -> str:
        on = "f" * self.filtering + "p" * self.partitioning + "c" * self.conditions
        return on or "none"

    @classmethod
    def parse(cls, name: str) -> Flags:
        """``none``, ``f``, ``fp``, ``fpc`` or any other combination of the letters."""
        letters = "" if name == "none" else name
        if set(letters) - set("fpc"):
            raise KleeneError(f"unknown pruning {name!r}; use none or letters of 'fpc'")
        return cls("f" in letters, "p" in letters, "c" in letters)


@dataclass(frozen=True)
class _Plan:
    """A whole batch's candidate windows: ``order[start:end]`` per span, the rows by
    batch index, and the property fits for A (rows, positions, bit vectors) if known."""

    positions: Sequence[int]
    order: np.ndarray
    spans: list[tuple[int, int]]
    rows: Any
    fits: tuple[list[Event], list[int], list[int]] | None


class TwoPhase:
    """Algorithm 1 with a matching algorithm built by ``algorithm(pattern)``."""

    def __init__(
        self,
        pattern: SesPattern,
        algorithm: Callable[[SesPattern], Algorithm],
        filtering: bool = True,
        partitioning: bool = True,
        conditions: bool = True,
        max_runs: int = DEFAULT_MAX_RUNS,
    ) -> None:
        self.pattern = pattern
        self.flags = Flags(filtering, partitioning, conditions)
        self.max_runs = max_runs  # the events one match window may hold
        self.attributes = partition_attributes(pattern) if partitioning else ()
        #: the pattern A sees: without the relationships partitioning guarantees
        self.reduced = without_partitioning(pattern, self.attributes)
        self.algorithm = algorithm(self.reduced)
        self.bits = PropertyBits(pattern)
        self._needs_bits = filtering or conditions
        self._conditions = Conditions(pattern) if conditions else None
        self.reset()

    def explain(self) -> list[str]:
        """Which pre-processing steps apply to this pattern, and why (one line each)."""
        unfiltered = [v.name for v in self.pattern.variables if not self.pattern.properties(v.name)]
        lines = [f"match windows of τ = {self.pattern.window:g} (Definition 3)"]
        if not self.flags.filtering:
            lines.append("filtering: off")
        elif unfiltered:
            lines.append(
                f"filtering: no effect, {', '.join(unfiltered)} has no property "
                "(every event may match it)"
            )
        else:
            lines.append(
                "filtering: events satisfying the properties of no variable are dropped (Theorem 1)"
            )
        if not self.flags.partitioning:
            lines.append("partitioning: off")
        elif self.attributes:
            gone = ", ".join(
                f"{c.variables[0]}.{c.attributes[0]} = {c.variables[1]}.{c.attributes[1]}"
                for c in removed(self.pattern, self.attributes)
            )
            lines.append(
                f"partitioning: one window per {', '.join(self.attributes)} (Definition 6); "
                f"A no longer tests {gone}"
            )
        else:
            lines.append(
                "partitioning: no effect, no attribute relates every pair of variables "
                "by equalities (Definition 6)"
            )
        if self.flags.conditions:
            lines.append(
                "conditions: A is called only on windows with at least "
                f"{len(self.pattern.variables)} events whose first event may bind a variable "
                "of the first set and whose summary statistics are all positive (Theorem 2; "
                "over a whole input, as run() reads it, every variable's event in the window "
                "and each set's before the next one's are tested directly)"
            )
        else:
            lines.append("conditions: off (A is called on every window)")
        return lines

    def reset(self) -> None:
        """Forget every window (a fresh stream)."""
        self.windows: dict[tuple[Any, ...], MatchWindow] = {}
        self.counters = Counters()
        self._last: Time | None = None

    def run(self, events: Iterable[Event]) -> list[SesMatch]:
        """Every match in a stream in time order (positions are indices), afresh."""
        self.reset()
        batch = list(events)
        bits = self.bits.of_batch(batch) if self._needs_bits else [0] * len(batch)
        out: list[SesMatch] = []
        for position, (event, b) in enumerate(zip(batch, bits, strict=True)):
            out += [f.match for f in self._push(position, event, b)]
        out += [f.match for f in self.flush()]
        return out

    def run_columns(self, events: Any) -> list[SesMatch]:
        """:meth:`run` with the pre-processing computed column-wise (:meth:`drain`).
        ``events``: a sequence of dict rows, an Arrow Table or RecordBatch or a pandas
        DataFrame; a table's columns are read as arrays and dict rows are built only for
        the events of the windows A is called on."""
        self.reset()
        source = source_of(events)
        positions = range(source.n)
        try:
            calls = self._calls(self._plan(positions, source))
        except NotColumnar:
            self.reset()
            calls = self._stepwise(positions, source.all_rows())
        return [f.match for f in calls]

    def drain(self, positions: Sequence[int], rows: Sequence[Event]) -> Iterator[Found]:
        """The matches of a finite input read to its end (a fresh stream's every
        window, as :meth:`push` for each event then :meth:`flush` find), with the
        pre-processing computed over the whole batch at once
        (:mod:`kleene.eventsets.batch`). Read event by event when windows are open or
        the times are not plain numbers. Lazy: A runs as the matches are read."""
        if not self.windows and self._last is None:
            try:
                return self._calls(self._plan(positions, RowSource(rows)))
            except NotColumnar:
                pass
        return self._stepwise(positions, rows)

    def _stepwise(self, positions: Sequence[int], rows: Sequence[Event]) -> Iterator[Found]:
        for position, row in zip(positions, rows, strict=True):
            yield from self.push(position, row)
        yield from self.flush()

    def _plan(self, positions: Sequence[int], source: Source) -> _Plan:
        """The windows of a whole batch and the rows A will read (NotColumnar when the
        times are not plain numbers; RunLimitError for a window beyond ``max_runs``)."""
        f = self.flags
        n = source.n
        bits = self.bits.array(source) if self._needs_bits else np.zeros(n, np.int64)
        w = windows(
            source,
            positions,
            bits,
            f.filtering,
            self.attributes,
            self.pattern.window,
            self._conditions,
        )
        if len(w.order) and int((w.ends - np.arange(len(w.order))).max()) > self.max_runs:
            raise window_limit(self.max_runs)
        if n:
            self._last = source.time_at(n - 1)
        c = self.counters
        c.events += n
        c.kept += len(w.order)
        c.windows += w.partitions
        c.calls += len(w.candidates)
        spans = list(zip(w.candidates.tolist(), w.ends[w.candidates].tolist(), strict=True))
        needed: list[int] = []  # the events of the candidate windows
        if spans and (self._needs_bits or not isinstance(source, RowSource)):
            every = len(spans) == len(w.order)
            needed = (
                w.order if every else np.unique(np.concatenate([w.order[a:b] for a, b in spans]))
            ).tolist()
        at: Any = source.all_rows() if isinstance(source, RowSource) else {}
        if needed and not isinstance(source, RowSource):
            # only the candidates' events leave the columns, each read once
            at = dict(zip(needed, source.rows(needed), strict=True))
        # A takes the fits from the bit vectors where they were computed (and needed)
        fits = None
        if self._needs_bits and needed:
            fits = ([at[i] for i in needed], [positions[i] for i in needed], bits[needed].tolist())
        return _Plan(positions, w.order, spans, at, fits)

    def _calls(self, plan: _Plan) -> Iterator[Found]:
        """A on each candidate window of a planned batch, lazily."""
        take_fits = getattr(self.algorithm, "take_fits", None) if plan.fits else None
        if take_fits is not None and plan.fits is not None:
            take_fits(*plan.fits)
        try:
            for start, end in plan.spans:
                chosen = plan.order[start:end].tolist()
                self.counters.events_to_a += len(chosen)
                window = [plan.rows[i] for i in chosen]
                yield from found(self.algorithm, window, [plan.positions[i] for i in chosen])
        finally:
            if take_fits is not None:
                take_fits([], [], [])  # A keeps no rows of this batch, even if it raised

    # --- the pipeline a SesMatcher drives (kleene.eventsets.stream.Pipeline) ---------

    def push(self, position: int, row: Event) -> Iterator[Found]:
        """Read the event at input ``position``; the matches of the windows it
        completes."""
        return self._push(position, row, self.bits.of(row) if self._needs_bits else 0)

    def advance(self, time: Any) -> Iterator[Found]:
        """No event before ``time`` will come: call A on the windows that completes."""
        for key, window in list(self.windows.items()):
            yield from self._complete(window, time)
            if not len(window):
                del self.windows[key]  # a partition seen again starts afresh

    def flush(self) -> Iterator[Found]:
        """The end of the stream: drain every window."""
        for window in self.windows.values():
            while len(window) and not window.hopeless():
                yield from self._call(window)
                window.dequeue()
        self.windows.clear()

    def to_data(self) -> dict[str, Any]:
        """The state as plain data for :mod:`kleene.runtime.snapshot`: each window's
        events with their input positions, the last time read and the counters. The
        bit vectors and summary statistics are not saved: loading reads each window's
        events again, which counts no more than the incremental statistics did and
        still every event of a match in the window."""
        c = self.counters
        return {
            "last": self._last,
            "counters": (c.events, c.kept, c.windows, c.calls, c.events_to_a),
            "windows": [
                (key, [(e.position, dict(e.event)) for e in window.entries])
                for key, window in self.windows.items()
            ],
        }

    def load(self, data: Any, below: int) -> None:
        """Resume from :meth:`to_data`'s data, positions under ``below`` (SnapshotError
        if it is malformed)."""
        with snapshot.loading():
            last, counters, windows = snapshot.fields_of(
                data, "the event-set state", "last", "counters", "windows"
            )
            self.reset()
            self._last = snapshot.optional_number(last, "the last time")
            counts = snapshot.sequence(counters, "the counters", tuple, 5)
            self.counters = Counters(*(snapshot.integer(n, "a counter", 0) for n in counts))
            for item in snapshot.sequence(windows, "the windows"):
                key, entries = snapshot.sequence(item, "a window", tuple, 2)
                self.windows[snapshot.partition_key(key)] = self._window(key, entries, below)

    # --- Algorithm 1 ------------------------------------------------------------------

    def _push(self, position: int, event: Event, bits: int) -> Iterator[Found]:
        self.counters.events += 1
        time = event[TIME]
        if self._last is not None and time < self._last:
            raise KleeneError(
                f"event {position} at {time!r} is earlier than the one before it: "
                "event-set matching reads events in time order (sort them first)"
            )
        self._last = time
        if self.flags.filtering and not bits:
            return  # Theorem 1
        key: tuple[Any, ...] = ()
        if self.attributes:
            values = partition_key(event, self.attributes)
            if values is None:
                return  # it fails the equalities: in no match
            key = values
        window = self.windows.get(key)
        if window is None:
            window = self.windows[key] = MatchWindow(self.pattern, self.flags.conditions)
            self.counters.windows += 1
        yield from self._complete(window, time)
        window.enqueue(position, event, time, bits)
        self.counters.kept += 1
        if len(window) > self.max_runs:
            raise window_limit(self.max_runs)

    def _complete(self, window: MatchWindow, time: Any) -> Iterator[Found]:
        """Call A on each window an event at ``time`` completes, dequeueing."""
        while window.complete(time, self.pattern.window):
            yield from self._call(window)
            window.dequeue()

    def _call(self, window: MatchWindow) -> Iterator[Found]:
        """A on a complete window, if it is a candidate (lazy evaluation)."""
        if not window.candidate():
            return iter(())
        entries = window.entries
        self.counters.calls += 1
        self.counters.events_to_a += len(entries)
        return found(self.algorithm, [e.event for e in entries], [e.position for e in entries])

    def _window(self, key: tuple[Any, ...], entries: Any, below: int) -> MatchWindow:
        window = MatchWindow(self.pattern, self.flags.conditions)
        previous = -1
        for entry in snapshot.sequence(entries, "a window's events"):
            at, event = snapshot.sequence(entry, "a window's event", tuple, 2)
            at = snapshot.integer(at, "an event's position", previous + 1, below)
            time = snapshot.number(snapshot.mapping(event, "an event").get(TIME), "a time")
            if self.attributes and partition_key(event, self.attributes) != key:
                snapshot.fail(f"event {at} is not of its window's partition {key!r}")
            bits = self.bits.of(event) if self._needs_bits else 0
            window.enqueue(at, event, time, bits)
            previous = at
        return window
