"""Result construction for postponed matching (SIGMOD 2014, section 5.1).

An intermediate match is a list of *items* in pattern order: anchors (the event chosen
for a single variable) and segments (the candidate events collected for a Kleene
variable). Construction enumerates every way to pick a non-empty, ordered subsequence
of each segment and applies the exact edge formulas of the plan (begin for a Kleene
array's first element, take for the others, proceed when the array ends) as it goes.

The enumeration is a depth-first walk that shares every common prefix (section 5.1: "the
enumeration cost ... repeated operations like edge evaluation on the same event can be
carefully shared"): a prefix that fails is abandoned with everything that extends it,
the state vector of a prefix is computed once for all its extensions, and so are the
ids and positions of the events it picked, grouped per variable as a match reports
them. A result is therefore built without walking its events again; the flat list of
selections (which negation checks and non-overlap ordering read) is derived only when
asked for (:attr:`Built.selections`).
"""

# ruff: noqa: RUF005 -- `t + (x,)` builds one tuple; `(*t, x)` builds a list first

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from kleene.compiler import codegen
from kleene.compiler.plan import State
from kleene.events import EVENT_ID, EVENT_TIME
from kleene.runtime.core import Completion, Grouped, Selection
from kleene.runtime.limits import match_limit

# (state index, position, event) for a single variable
Anchor = tuple[int, int, tuple[Any, ...]]
# (first-state index, candidates [(position, event, safe)], how many, whether the last
# one and whether the first one must be picked)
Segment = tuple[int, list[tuple[int, tuple[Any, ...], bool]], int, bool, bool]
# variable -> event ids, variable -> positions (pattern order), start and end times
Groups = tuple[dict[str, tuple[Any, ...]], dict[str, tuple[int, ...]], Any, Any, "Source"]


Edge = Any  # a compiled edge: (event, V) -> V or None


class AnchorStep(NamedTuple):
    """What the enumeration needs of an anchor: its one way to be chosen."""

    anchor: bool  # True: tells the two kinds of step apart without isinstance
    edge: Edge
    event: tuple[Any, ...]
    ids: tuple[Any]  # the event's id, as the variable's ids
    positions: tuple[int]


class SegmentStep(NamedTuple):
    """What the enumeration needs of a segment: the edges and the candidates, where the
    free choices stop and the forced last candidate (None when there is none or the
    first element cannot be it), for later elements and for the first element."""

    anchor: bool  # False
    begin: Edge
    take: Edge
    proceed: Edge | None  # None where it always holds
    events: list[tuple[Any, ...]]
    ids: list[Any]
    positions: list[int]
    stop: int
    first_stop: int
    last: int | None
    first_last: int | None
    forced: bool  # the array ends with its last candidate


class Source:
    """The intermediate match a result comes from, for deriving its selections."""

    __slots__ = ("items", "times")

    def __init__(self, items: list[Anchor | Segment], times: dict[int, Any]) -> None:
        self.items = items
        self.times = times  # position -> time of every event the results may pick

    def selections(
        self, ids: dict[str, tuple[Any, ...]], positions: dict[str, tuple[int, ...]]
    ) -> list[Selection]:
        """(state, position, id, time) of each picked event, in pattern order."""
        times = self.times
        out: list[Selection] = []
        for item, eids, pos in zip(self.items, ids.values(), positions.values(), strict=True):
            state = item[0]  # an anchor's or a segment's state: the first field of both
            for k, (event_id, p) in enumerate(zip(eids, pos, strict=True)):
                # a Kleene array's first element is taken by its first state, the rest
                # by the next (take) state
                out.append((state if k == 0 else state + 1, p, event_id, times[p]))
        return out


class Built(Completion):
    """A match of result construction. Its second field holds :data:`Groups` (the
    picked events' ids and positions per variable, the start and end times), which
    become a :class:`~kleene.match.Match` as they are; ``selections``
    derives the flat selection list of a :class:`Completion` on demand."""

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def groups(self) -> Groups: ...

    else:
        groups = property(itemgetter(1))  # a C getter: read once per match

    @property
    def selections(self) -> list[Selection]:
        ids, positions, _start, _end, source = self.groups
        return source.selections(ids, positions)

    def grouped(self, var_of_state: Sequence[str], names: Sequence[str]) -> Grouped:
        ids, positions, start, end, _source = self.groups
        return ids, positions, start, end


class Constructor:
    """Result construction for one plan; the edges each item applies are looked up once
    per intermediate match, not once per enumeration step."""

    def __init__(self, states: tuple[State, ...], initial: tuple[Any, ...]) -> None:
        self.states = states
        self.initial = initial
        # each Kleene array's proceed formula, or None where it always holds
        self.proceed = [s.proceed if s.proceed_text else None for s in states]
        self.built = _builder(tuple(s.var for s in states if s.kind != "rest"))

    def __call__(
        self, items: list[Anchor | Segment], partition: tuple[Any, ...] = ()
    ) -> Iterator[Built]:
        """All matches the intermediate match contains, in depth-first order, one at a
        time: there may be exponentially many, so the walk holds only its current path
        (a frame per item and candidate picked, plus one resumable scan per level)."""
        n, times = len(items), dict[int, Any]()
        # a step's ``anchor`` field says which kind it is (typed Any: mypy cannot narrow)
        steps: list[Any] = [self._step(item, times) for item in items]
        source = Source(items, times)
        built = self.built
        # frame: (item index, V, next candidate, this segment's ids and positions so far,
        # the ids and positions of the items before, scan); a scan frame (scan = the edge
        # and where the candidates stop) tries the candidates from the next one on and
        # resumes after each one that extends the prefix
        stack: list[tuple[int, tuple[Any, ...], int, Any, Any, Any, Any, Any]] = [
            (0, self.initial, 0, (), (), (), (), None)
        ]
        pop, push = stack.pop, stack.append
        while stack:
            k, vector, j, ids, pos, done_ids, done_pos, scan = pop()
            if scan is not None:
                edge, stop = scan
                seg = steps[k]
                events, cids, cpos = seg.events, seg.ids, seg.positions
                for jj in range(j, stop):
                    nxt = edge(events[jj], vector)
                    if nxt is not None:
                        if jj + 1 < stop:
                            push((k, vector, jj + 1, ids, pos, done_ids, done_pos, scan))
                        grown_ids, grown_pos = ids + (cids[jj],), pos + (cpos[jj],)
                        push((k, nxt, jj + 1, grown_ids, grown_pos, done_ids, done_pos, None))
                        break
                continue
            step = steps[k] if k < n else None
            while step is not None and step.anchor:  # one way each, no frame needed
                _anchor, edge, event, event_ids, event_positions = step
                vector = edge(event, vector)
                if vector is None:
                    break
                done_ids += (event_ids,)
                done_pos += (event_positions,)
                k += 1
                step = steps[k] if k < n else None
            if vector is None:
                continue
            if step is None:  # every item chosen: a match
                start, end = times[done_pos[0][0]], times[done_pos[-1][-1]]
                yield built(partition, done_ids, done_pos, start, end, source, vector)
                continue
            _, begin, take, proceed, events, cids, cpos, stop, stop1, last, last1, forced = step
            if ids:
                edge = take
                if not forced and (proceed is None or proceed(vector)):  # the array ends here
                    push((k + 1, vector, 0, (), (), done_ids + (ids,), done_pos + (pos,), None))
            else:
                edge, stop, last = begin, stop1, last1  # for the array's first element
            if j < stop:
                push((k, vector, j, ids, pos, done_ids, done_pos, (edge, stop)))
            if last is not None:  # the forced last candidate, which ends the array
                nxt = edge(events[last], vector)
                if nxt is not None and (proceed is None or proceed(nxt)):
                    done_ids += (ids + (cids[last],),)
                    done_pos += (pos + (cpos[last],),)
                    push((k + 1, nxt, 0, (), (), done_ids, done_pos, None))

    def _step(self, item: Anchor | Segment, times: dict[int, Any]) -> AnchorStep | SegmentStep:
        """What the enumeration needs of one item; records its events' times."""
        states = self.states
        if len(item) == 3:
            state, position, e = item
            times[position] = e[EVENT_TIME]
            return AnchorStep(True, states[state].edge, e, (e[EVENT_ID],), (position,))
        first, cands, length, forced, fixed = item
        chosen = cands[:length]
        for position, e, _safe in chosen:
            times[position] = e[EVENT_TIME]
        # (later elements, first element): where the free choices stop, and the forced
        # last candidate (None when there is none or the first element cannot be it)
        stop = length - 1 if forced else length
        last = length - 1 if forced and length else None
        first_stop = min(stop, 1) if fixed else stop
        first_last = None if fixed and length > 1 else last
        events = [e for _position, e, _safe in chosen]
        return SegmentStep(
            False,
            states[first].edge,
            states[first + 1].edge,
            self.proceed[first + 1],
            events,
            [e[EVENT_ID] for e in events],
            [position for position, _e, _safe in chosen],
            stop,
            first_stop,
            last,
            first_last,
            forced,
        )


def _builder(names: tuple[str, ...]) -> Any:
    """``f(partition, ids, positions, start, end, source, V) -> Built``: a result with
    its per-variable tuples as the dicts a Match holds (generated dict displays: no
    zip, no loop, one call per result)."""
    ids = ", ".join(f"{name!r}: ids[{k}]" for k, name in enumerate(names))
    pos = ", ".join(f"{name!r}: pos[{k}]" for k, name in enumerate(names))
    source = (
        "def built(partition, ids, pos, start, end, source, V):\n"
        f"    return _new(_Built, (partition, ({{{ids}}}, {{{pos}}}, start, end, source), V))\n"
    )
    return codegen.build(source, "built", {"_new": tuple.__new__, "_Built": Built})


def construct(
    states: tuple[State, ...],
    items: list[Anchor | Segment],
    initial: tuple[Any, ...],
    limit: int | None,
    partition: tuple[Any, ...] = (),
) -> list[Built]:
    """All matches the intermediate match contains (see :class:`Constructor`); more
    than ``limit`` (``max_matches``; None for no limit) raise MatchLimitError."""
    found = Constructor(states, initial)(items, partition)
    if limit is None:
        return list(found)
    out = list(islice(found, limit + 1))
    if len(out) > limit:
        raise match_limit(limit)
    return out
