"""The contract between the matcher and an evaluation core: a batch protocol.

The matcher (:mod:`kleene.runtime.matcher`) admits events, keeps time, checks negations
and formats output; a *core* finds the matches of the positive pattern. Every core
evaluates the same compiled plan and must report exactly the same completions; they
differ in how they get there (the NFA^b basic algorithm with or without run merging,
postponed predicates, backtracking, whole batches as columns).

The matcher drives every core the same way: it hands :meth:`Core.evaluate` an
:class:`Admitted` batch and a :class:`Context`, and reads back the
:data:`Evaluated` results, one per event that reached the automaton, in stream order.
The per-event cores inherit that loop from :class:`EventCore` and only say what one
event does (``process``); the vector core evaluates a clean columnar batch natively.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from kleene.events import EVENT_TIME
from kleene.runtime.routing import Router

if TYPE_CHECKING:
    from kleene.compiler.plan import Plan
    from kleene.events import EventBatch


# One selected event of a match: (state index, stream position, event id, time). A
# plain tuple, built once per event of every match: read it by unpacking.
Selection = tuple[int, int, Any, Any]


# variable -> event ids, variable -> positions (pattern order), start and end times
Grouped = tuple[dict[str, tuple[Any, ...]], dict[str, tuple[int, ...]], Any, Any]


def group(
    selections: list[Selection], var_of_state: Sequence[str], names: Sequence[str]
) -> Grouped:
    """A match's event ids and positions per variable, and its first and last times."""
    by_var: dict[str, list[Any]] = {v: [] for v in names}
    at: dict[str, list[int]] = {v: [] for v in names}
    for state, position, event_id, _time in selections:
        var = var_of_state[state]
        by_var[var].append(event_id)
        at[var].append(position)
    _, _, _, start = selections[0]
    _, _, _, end = selections[-1]
    variables = {v: tuple(x) for v, x in by_var.items()}
    return variables, {v: tuple(x) for v, x in at.items()}, start, end


class Completion(NamedTuple):
    """A match of the positive pattern: its selections in pattern order and the final
    computation-state vector (which RETURN and negation checks read)."""

    partition: tuple[Any, ...]
    selections: list[Selection]
    vector: tuple[Any, ...]

    def grouped(self, var_of_state: Sequence[str], names: Sequence[str]) -> Grouped:
        """Its events per variable (a core that builds them so may say so directly)."""
        return group(self.selections, var_of_state, names)


class Intermediate(NamedTuple):
    """An intermediate match of postponed evaluation (SIGMOD 2014, section 5.1): its
    anchors and candidate segments, reported as is for the collapsed output format."""

    partition: tuple[Any, ...]
    items: list[Any]


# (position, event tuple, whether some state may accept it): one admitted event
AdmittedEvent = tuple[int, tuple[Any, ...], bool]

# What evaluating one event gave, in stream order: (time, position, event, partition,
# results). ``partition`` is None when no run can see the event (it may still be a
# negation candidate); ``results`` are completions (intermediate matches for the
# collapsed format), possibly a lazy iterator the matcher consumes before the next
# event. A core evaluating a whole batch natively reports it as one item with ``event``
# None whose results are finished matches, the output format already applied.
Evaluated = tuple[Any, int, "tuple[Any, ...] | None", "tuple[Any, ...] | None", Iterable[Any]]


class Admitted:
    """Events the matcher admitted for a core, in stream order.

    ``events()`` gives them one by one as :data:`AdmittedEvent` (decoded from the typed
    columns once, lazily). ``batch`` is set when the events are a whole clean batch:
    every event typed and valid, one time kind, in time order and none late, its row
    ``j`` at stream position ``base + j``; a core may then evaluate the batch's columns
    itself instead of reading ``events()``.
    """

    __slots__ = ("base", "batch", "source")

    def __init__(
        self,
        source: Iterable[AdmittedEvent],
        batch: EventBatch | None = None,
        base: int = 0,
    ) -> None:
        self.source = source
        self.batch = batch
        self.base = base

    def events(self) -> Iterable[AdmittedEvent]:
        return self.source


class Context(NamedTuple):
    """What a core may need from the matcher for one batch."""

    window: Callable[[], float | None]  # the WITHIN size in the stream's time units
    time_out: Callable[[Any], Any]  # a stream time as the user sees it
    room: int | None  # matches the output can still take, one past max_matches
    last_end: dict[tuple[Any, ...], int]  # non-overlap: each partition's last match end


class Core(Protocol):
    """An evaluation core. All of its mutable state lives in the object ``new_state``
    returns, whose class turns it into plain data (``to_data``) and back, checked
    against the plan (``from_data(data, shapes)``), for matcher snapshots
    (:mod:`kleene.runtime.snapshot`)."""

    every_event: bool  # whether events no state accepts must reach it as well

    def new_state(self) -> Any: ...

    def evaluate(self, st: Any, admitted: Admitted, ctx: Context) -> Iterator[Evaluated]:
        """Evaluate the admitted events; one result per event that reached the runs."""
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


class EventCore:
    """The batch protocol for cores that evaluate one event at a time: a loop over the
    admitted events that routes each to its partition (:class:`Router`) and calls
    ``process``. An event no state accepts is skipped under the skip-till strategies
    and ends its partition's runs under strict and partition contiguity (no edge of
    theirs could follow it)."""

    every_event = False

    def __init__(self, plan: Plan) -> None:
        self.router = Router(plan)

    def process(
        self,
        st: Any,
        e: tuple[Any, ...],
        position: int,
        partition: tuple[Any, ...],
        window: float | None,
    ) -> Iterable[Any]:
        """Consume one event of ``partition``; return the matches it completes (an
        iterator where there may be very many: the matcher consumes it at once, counting
        the matches against ``max_matches``)."""
        raise NotImplementedError

    def drop_partition(self, st: Any, partition: tuple[Any, ...]) -> None:
        raise NotImplementedError

    def evaluate(self, st: Any, admitted: Admitted, ctx: Context) -> Iterator[Evaluated]:
        return self.each_event(st, admitted.events(), ctx)

    def each_event(
        self, st: Any, events: Iterable[AdmittedEvent], ctx: Context
    ) -> Iterator[Evaluated]:
        """The per-event loop, written once for every core. The window is read at each
        event: the first event admitted fixes the stream's time kind and so its unit."""
        route = self.router.partition
        contiguous = not self.router.skips
        process, drop, window = self.process, self.drop_partition, ctx.window
        time_index = EVENT_TIME  # a local name for the per-event loop
        for position, e, useful in events:
            partition = route(e)
            if not useful:
                if contiguous and partition is not None:
                    drop(st, partition)
                continue
            t = e[time_index]
            if partition is None:
                yield t, position, e, None, ()
            else:
                yield t, position, e, partition, process(st, e, position, partition, window())


def expire(
    partitions: dict[tuple[Any, ...], list[Any]],
    now: Any,
    window: float,
    start: Callable[[Any], Any],
) -> int:
    """Drop the runs that the window has passed (``start`` reads a run's start time),
    and partitions left empty; return how many runs were dropped."""
    dropped = 0
    for key in list(partitions):
        runs = partitions[key]
        alive = [r for r in runs if now - start(r) <= window]
        dropped += len(runs) - len(alive)
        if alive:
            partitions[key] = alive
        else:
            del partitions[key]
    return dropped
