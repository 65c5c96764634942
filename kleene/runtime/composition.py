"""Union and composition of queries at run time (SIGMOD 2014, section 2.1: the core
language L is closed under union and composition, and a formula is evaluated by NFA^b
automata combined with these operations).

A program is a list of statements, each a union of compiled queries (branches); every
statement but the last is a definition whose matches become events of a new type for
the statements after it (docs/semantics.md, "Programs"):

* A derived event has the definition's name as its type, the match's last time as its
  time and the RETURN values as attributes. In the stream of a statement that uses it,
  it comes after every raw event of the same time; derived events of one time are
  ordered by definition, then by the match order (last, first, all positions).
* A statement's stream is the raw stream plus the derived events of the definitions it
  uses. Derived events can be found late (a trailing negation is decided when its
  window closes), so each statement holds back the events it cannot yet order: nothing
  at or after the *horizon* of a definition it uses, the time before which that
  definition can report nothing more.
* A union reports every match of every branch once (the same events for the same
  variables are one match) with the RETURN values of the first branch in text order
  that finds it. A match reported by a branch is held until every earlier branch that
  reports late has passed its end by its delay (so could no longer report it); if an
  earlier branch reports it meanwhile, that one's values replace it.

Limits: every query's matcher keeps its own ``max_runs`` and ``max_matches`` (so a
definition that explodes stops with the error, not with its derived events piling up),
and the program's matches count against ``max_matches`` once more after the union.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from kleene.collapsed import Result
from kleene.compiler.plan import Plan
from kleene.events import EventBatch, EventFields, read_batch, read_time
from kleene.match import Match, RejectedEvent
from kleene.runtime import snapshot
from kleene.runtime.config import MatcherConfig
from kleene.runtime.contract import StreamMatcher
from kleene.runtime.limits import match_limit
from kleene.runtime.matcher import Matcher
from kleene.times import micros_to_datetime
from kleene.vocabulary import OutputFormat

RAW, DERIVED = 0, 1
NEVER = float("inf")

# (time, RAW, arrival) for a raw event; (time, DERIVED, statement, match order) for a
# derived one: the order of the program's streams.
OrderKey = tuple[Any, ...]


@dataclass(frozen=True)
class Statement:
    """A union of compiled queries; ``name`` is the derived event type of a definition
    (None for the program's last statement); ``uses`` the definitions it reads."""

    name: str | None
    branches: tuple[tuple[Plan, MatcherConfig], ...]
    uses: tuple[int, ...]

    @cached_property
    def delays(self) -> tuple[float | None, ...]:
        """How far behind its input each branch may report a match: None when it reports
        a match with its last event; a trailing negation or non-overlap output waits for
        the window to close (without a window, for the end of the stream), and the
        backtrack engine walks postponed runs as late as the end of the stream."""
        return tuple(_delay(plan, config) for plan, config in self.branches)

    @property
    def delay(self) -> float:
        """How far behind its input a match may be reported."""
        return max((d for d in self.delays if d is not None), default=0)


def _delay(plan: Plan, config: MatcherConfig) -> float | None:
    if config.engine == "backtrack":
        return NEVER
    if plan.output is OutputFormat.ALL and all(n.after is not None for n in plan.negations):
        return None
    return NEVER if plan.window is None else plan.window


@dataclass
class _StatementState:
    pending: list[tuple[OrderKey, dict[str, Any]]] = field(default_factory=list)
    seen: dict[tuple[Any, ...], Any] = field(default_factory=dict)  # union: match -> end time
    # union: match -> (branch, end time, match) for a match an earlier branch may still report
    held: dict[tuple[Any, ...], tuple[int, Any, Match]] = field(default_factory=dict)
    latest: Any = None  # the latest end among them
    horizon: Any = -NEVER  # before this time the statement reports nothing more


@dataclass
class _ProgramState:
    statements: list[_StatementState]
    clock: Any = None  # time of the last raw event
    arrived: int = 0
    scale: float = 1  # 10^6 when the times are datetimes (held as microseconds)

    # --- snapshots (kleene.runtime.snapshot) ------------------------------------------

    def to_data(self, matchers: list[list[Matcher]]) -> Any:
        statements = [
            {
                "matchers": [m.st.to_data() for m in branches],
                "pending": s.pending,
                "seen": s.seen,
                "held": [(j, _match_data(m)) for j, _t, m in s.held.values()],
                "latest": s.latest,
                "horizon": s.horizon,
            }
            for s, branches in zip(self.statements, matchers, strict=True)
        ]
        return {
            "statements": statements,
            "stream": (self.clock, self.arrived, self.scale),
        }

    @classmethod
    def from_data(cls, data: Any, matchers: list[list[Matcher]]) -> _ProgramState:
        """The state of :meth:`to_data`, checked; each branch's matcher state goes to
        its matcher."""
        statements, stream = snapshot.fields_of(data, "the program state", "statements", "stream")
        st = cls([])
        for item, branches in zip(
            snapshot.sequence(statements, "the statements", list, len(matchers)),
            matchers,
            strict=True,
        ):
            states, pending, seen, held, latest, horizon = snapshot.fields_of(
                item, "a statement", "matchers", "pending", "seen", "held", "latest", "horizon"
            )
            for d, m in zip(
                snapshot.sequence(states, "a union's branches", list, len(branches)),
                branches,
                strict=True,
            ):
                m.restore(d)
            for entry in snapshot.sequence(pending, "a statement's held events"):
                key, rec = snapshot.sequence(entry, "a held event", tuple, 2)
                t, kind, *_rest = snapshot.sequence(key, "a held event's order", tuple)
                snapshot.number(t, "a held event's time")
                snapshot.integer(kind, "a held event's kind", RAW, DERIVED + 1)
                snapshot.mapping(rec, "a held event")
            for t in snapshot.mapping(seen, "a union's matches").values():
                snapshot.number(t, "a union match's end")
            heapq.heapify(pending)
            held_matches = {}
            for entry in snapshot.sequence(held, "a union's held matches"):
                j, m = snapshot.sequence(entry, "a held match", tuple, 2)
                snapshot.integer(j, "a held match's branch", 0, len(branches))
                found = _match_from_data(m)
                if found.key() in held_matches:
                    snapshot.fail("a union match held twice")
                held_matches[found.key()] = (j, read_time(found.end)[0], found)
            st.statements.append(
                _StatementState(
                    pending,
                    seen,
                    held_matches,
                    None if latest is None else snapshot.number(latest, "a union's latest end"),
                    snapshot.number(horizon, "a statement's horizon"),
                )
            )
        clock, arrived, scale = snapshot.sequence(stream, "the program's stream", tuple, 3)
        st.clock = None if clock is None else snapshot.number(clock, "the program's clock")
        st.arrived = snapshot.integer(arrived, "the program's arrivals", 0)
        if scale not in (1, 1_000_000):
            snapshot.fail("the program's time scale")
        st.scale = scale
        return st


class ProgramMatcher(StreamMatcher[Match]):
    """Evaluates a program over a stream pushed in time order (no allowed lateness)."""

    def __init__(
        self,
        statements: Sequence[Statement],
        fields: EventFields,
        state: bytes | None = None,
        on_matches: Callable[[list[Match]], object] | None = None,
    ) -> None:
        self.statements = list(statements)
        self.fields = fields
        self.st = _ProgramState([_StatementState() for _ in self.statements])
        # the last statement's matches go to on_matches as its matchers find them
        self.on_matches = on_matches
        self.limit = self.statements[-1].branches[0][1].max_matches
        self._reported = 0  # the program's matches since this matcher was created
        last = len(self.statements) - 1
        self.matchers = [
            [
                Matcher(
                    plan,
                    config,
                    on_matches=self._deliver(j) if i == last and on_matches else None,
                )
                for j, (plan, config) in enumerate(s.branches)
            ]
            for i, s in enumerate(self.statements)
        ]
        self.ordered = any(s.uses for s in self.statements)
        if state is not None:
            data = snapshot.unseal(state, snapshot.PROGRAM, self.fingerprint)
            with snapshot.loading():
                self.st = _ProgramState.from_data(data, self.matchers)

    @property
    def fingerprint(self) -> bytes:
        """What this program's state means: each statement's name, the definitions it
        uses and the fingerprints of its branches."""
        return snapshot.kind_fingerprint(
            snapshot.PROGRAM,
            [
                [
                    [s.name, s.uses, [m.fingerprint.hex() for m in ms]]
                    for s, ms in zip(self.statements, self.matchers, strict=True)
                ],
                [self.fields.type_field, self.fields.time_field, self.fields.id_field],
            ],
        )

    # --- public API ---------------------------------------------------------------

    def push(self, events: Any) -> list[Match]:
        """Feed raw events in time order; return the final statement's new matches."""
        batch = read_batch(events, self.fields, self.st.arrived)
        if not self.ordered:  # a union only: every branch takes the batch as it is
            self.st.arrived += len(batch)
            return self._run([], batch.table if batch.table is not None else batch.rows or [])
        return self._run(self._raw_items(batch), [])

    def flush(self) -> list[Match]:
        """End of stream: every held event is processed and every match decided."""
        return self._run([], [], final=True)

    def advance_to(self, time: Any) -> list[Match]:
        """No raw event before ``time`` will come."""
        if not self.ordered:
            k = len(self.statements) - 1
            return self._final(
                self._union(k, [branch.advance_to(time) for branch in self.matchers[k]])
            )
        internal, _ = read_time(time)
        if internal is not None and (self.st.clock is None or internal > self.st.clock):
            self.st.clock = internal
        return self._run([], [])

    def take_rejected(self) -> list[RejectedEvent]:
        """Rejected events since the last call (an event rejected by several
        statements for the same reason is reported once)."""
        found: dict[tuple[Any, str], RejectedEvent] = {}
        for matchers in self.matchers:
            for m in matchers:
                for r in m.take_rejected():
                    found.setdefault((repr(r.id), r.reason), r)
        return list(found.values())

    @property
    def rejected_count(self) -> int:
        """The most events any one statement rejected (each statement reads every raw
        event, so this counts the raw events rejected by the strictest)."""
        return max((m.rejected_count for ms in self.matchers for m in ms), default=0)

    @property
    def reported(self) -> int:
        """The program's matches since this matcher was created or resumed."""
        return self._reported

    def snapshot(self) -> bytes:
        """The program's whole state in the snapshot format (docs/architecture.md);
        ``Program.matcher(state=...)`` of the same program resumes from it."""
        return snapshot.seal(snapshot.PROGRAM, self.fingerprint, self.st.to_data(self.matchers))

    # --- evaluation -----------------------------------------------------------------

    def _raw_items(self, batch: EventBatch) -> list[tuple[OrderKey, dict[str, Any]]]:
        if batch.table is not None:
            records = batch.table.to_pylist()
        else:
            records = [r if isinstance(r, dict) else dict(r) for r in batch.rows or ()]
        items = []
        for record in records:
            t, kind = read_time(record.get(self.fields.time_field))
            if t is None:  # the statements reject it; it keeps its place in the stream
                t = self.st.clock if self.st.clock is not None else -NEVER
            else:
                if self.st.clock is None or t > self.st.clock:
                    self.st.clock = t
                if kind == "datetime":
                    self.st.scale = 1_000_000
            items.append(((t, RAW, self.st.arrived), record))
            self.st.arrived += 1
        return items

    def _run(
        self, raw: list[tuple[OrderKey, dict[str, Any]]], batch: Any, final: bool = False
    ) -> list[Match]:
        """One round: ``raw`` are the new events as ordered items, or, when no
        statement reads a definition, ``batch`` is them as given."""
        derived: list[list[tuple[OrderKey, dict[str, Any]]]] = []
        out: list[Match] = []
        for k, statement in enumerate(self.statements):
            st = self.st.statements[k]
            if not self.ordered:
                found = self._feed(k, batch, NEVER, final)
                out = self._final(found) if statement.name is None else out
                derived.append([])
                continue
            incoming = list(raw)
            for d in statement.uses:
                incoming += derived[d]
            for item in incoming:
                heapq.heappush(st.pending, item)
            horizon = NEVER if final else self._input_horizon(statement)
            found = self._feed(k, self._release(st, horizon), horizon, final)
            if statement.name is None:
                out = self._final(found)
                derived.append([])
            else:
                derived.append([self._derived(k, statement.name, m) for m in found])
            st.horizon = self._horizon(statement, horizon)
        return out

    def _deliver(self, j: int) -> Callable[[list[Result]], None]:
        """The callback of the last statement's branch ``j``: a chunk of its matches, as
        its matcher finds them, goes through the union to ``on_matches``."""
        k = len(self.statements) - 1

        def deliver(chunk: list[Result]) -> None:
            found: list[list[Result]] = [[] for _ in self.matchers[k]]
            found[j] = chunk
            self._final(self._union(k, found))

        return deliver

    def _final(self, matches: list[Match]) -> list[Match]:
        """The program's new matches: counted against ``max_matches``, handed to
        ``on_matches`` when there is one (then none are returned)."""
        limit = self.limit
        if limit is not None and self._reported + len(matches) > limit:
            keep = matches[: limit - self._reported]
            self._reported = limit
            if self.on_matches is not None and keep:
                self.on_matches(keep)
            raise match_limit(limit)
        self._reported += len(matches)
        if self.on_matches is not None and matches:
            self.on_matches(matches)
            return []
        return matches

    def _input_horizon(self, statement: Statement) -> Any:
        """Before this time the definitions a statement uses report nothing more."""
        clock = self.st.clock if self.st.clock is not None else -NEVER
        return min([clock, *(self.st.statements[d].horizon for d in statement.uses)])

    def _horizon(self, statement: Statement, input_horizon: Any) -> Any:
        delay = statement.delay
        if delay == NEVER:
            return -NEVER
        return input_horizon - delay * self.st.scale

    def _release(self, st: _StatementState, horizon: Any) -> list[dict[str, Any]]:
        """Pending events that nothing can come before any more, in stream order: raw
        events up to the horizon, derived ones before it."""
        ready = []
        pending = st.pending
        while pending:
            (t, kind, *_rest), _record = pending[0]
            if t > horizon or (t == horizon and kind == DERIVED and horizon != NEVER):
                break
            ready.append(heapq.heappop(pending)[1])
        return ready

    def _feed(self, k: int, records: Any, horizon: Any, final: bool) -> list[Match]:
        """Push released events to every branch; a branch that reports late is told
        the horizon, so it decides what the window before it has settled."""
        statement = self.statements[k]
        settle = statement.delay and not final and abs(horizon) != NEVER
        found: list[list[Result]] = []
        for branch in self.matchers[k]:
            out = branch.push(records) if len(records) else []
            if final:
                out += branch.flush()
            elif settle:
                out += branch.advance_to(self._time_out(horizon))
            found.append(out)
        return self._union(k, found, final)

    def _union(self, k: int, found: list[list[Result]], final: bool = False) -> list[Match]:
        """A union's new matches, each once, with the values of the first branch in text
        order that finds it (SIGMOD 2014, section 2.1; docs/semantics.md, "Programs").
        ``found`` holds each branch's new results."""
        statement, st = self.statements[k], self.st.statements[k]
        if len(statement.branches) == 1:
            return [m for m in found[0] if isinstance(m, Match)]
        for j, results in enumerate(found):
            for m in results:
                if not isinstance(m, Match):
                    continue
                key = m.key()
                held = st.held.get(key)
                if key in st.seen or (held is not None and held[0] <= j):
                    continue
                t, kind = read_time(m.end)
                self.st.scale = 1_000_000 if kind == "datetime" else 1
                st.held[key] = (j, t, m)
        settled = self._settled(k)
        fresh = []
        for key, (j, t, m) in list(st.held.items()):
            if final or t < settled[j]:
                del st.held[key]
                st.seen[key] = t
                st.latest = t if st.latest is None else max(st.latest, t)
                fresh.append(m)
        if fresh and statement.delay != NEVER:
            # the stream has passed the latest end, so every branch has reported what
            # ended longer than its delay before it
            oldest = st.latest - statement.delay * self.st.scale
            st.seen = {key: t for key, t in st.seen.items() if t >= oldest}
        return fresh

    def _settled(self, k: int) -> list[Any]:
        """For each branch of statement ``k``, the time before which no earlier branch
        can report a match any more (NEVER when none reports late): a late branch has
        decided every match that ended its delay before its clock."""
        bounds, bound = [], NEVER
        for delay, branch in zip(self.statements[k].delays, self.matchers[k], strict=True):
            bounds.append(bound)
            if delay is not None:
                clock = branch.st.time.clock
                done = -NEVER if clock is None or delay == NEVER else clock - delay * self.st.scale
                bound = min(bound, done)
        return bounds

    def _time_out(self, internal: Any) -> Any:
        if self.st.scale == 1:
            return internal
        return micros_to_datetime(internal, None)

    def _derived(self, k: int, name: str, m: Match) -> tuple[OrderKey, dict[str, Any]]:
        """The event a definition's match becomes (its id names the events matched)."""
        positions = sorted(p for ps in m.positions.values() for p in ps)
        order = (positions[-1], positions[0], tuple(positions), tuple(m.positions.values()))
        t, _ = read_time(m.end)
        ids = ";".join(f"{v}={','.join(map(str, xs))}" for v, xs in m.ids().items())
        record = {
            **m.values(),
            self.fields.type_field: name,
            self.fields.time_field: m.end,
            self.fields.id_field: f"{name}[{ids}]",
        }
        return (t, DERIVED, k, order), record


def _match_data(m: Match) -> Any:
    """A held union match as plain data (kleene.runtime.snapshot)."""
    return (dict(m.variables), dict(m.positions), m.start, m.end, m.partition, dict(m.returned))


def _match_from_data(data: Any) -> Match:
    """The match of :func:`_match_data`, checked."""
    variables, positions, start, end, partition, returned = snapshot.sequence(
        data, "a held match", tuple, 6
    )
    snapshot.mapping(variables, "a match's variables")
    if set(snapshot.mapping(positions, "a match's positions")) != set(variables):
        snapshot.fail("a match's positions and variables differ")
    for var, ids in variables.items():
        snapshot.text(var, "a match variable")
        where = snapshot.sequence(
            positions[var],
            "a variable's positions",
            tuple,
            len(snapshot.sequence(ids, "a variable's events", tuple)),
        )
        for p in where:
            snapshot.integer(p, "a match position", 0)
    if not any(positions.values()):
        snapshot.fail("a match without events")
    for t in (start, end):
        if read_time(t)[0] is None:
            snapshot.fail("a match's time")
    for name in snapshot.mapping(returned, "a match's values"):
        snapshot.text(name, "a returned name")
    return Match(variables, positions, start, end, snapshot.partition_key(partition), returned)
