"""The push-based TPStream matcher: admission, one deriver and one situation matcher per
partition key (EDBT 2018, Figure 2), RETURN, and versioned snapshots.

Per admitted event, its partition's deriver (Algorithm 1) reports the situations the
event makes visible and those it finishes; the partition's
:class:`~kleene.tpstream.matcher.SituationMatcher` is updated once per event
timestamp with both (section 5.3) and returns the matches it detects then. Each match
gets its RETURN values: aggregates of finished situations over their whole events, of a
situation still going on at detection over its events so far (its end and duration are
null). Times leave as they came in (datetimes stay datetimes).

It is the TPStream kind's :class:`~kleene.runtime.contract.StreamMatcher`: the matches
a situation matcher enumerates lazily go through one
:class:`~kleene.runtime.output.Output` per call, which stops the join at
``max_matches``; ``max_runs`` bounds the situations all partitions' matchers hold;
``advance_to`` sets the stream's time (later events before it are rejected as late)
and lets each partition purge what the window excludes from then on (no match is
detected by time alone, section 5.3.2). Snapshots carry the ``TPSTREAM`` tag.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any, Protocol

from kleene.errors import KleeneError, SnapshotError
from kleene.events import EventBatch, EventFields
from kleene.match import RejectedEvent
from kleene.runtime import snapshot
from kleene.runtime.contract import StreamMatcher
from kleene.runtime.limits import DEFAULT_MAX_RUNS, run_limit
from kleene.runtime.output import Output, Reporter
from kleene.runtime.stream_time import StreamTime
from kleene.times import MICROS
from kleene.tpstream.admission import Admission, Admitted, AdmittedColumns
from kleene.tpstream.batch import BatchColumns
from kleene.tpstream.deriver import Deriver
from kleene.tpstream.model import Situation, TemporalMatch, TemporalPattern
from kleene.tpstream.plan import TemporalPlan
from kleene.tpstream.planning import SharedPlanner

MatcherFactory = Callable[[TemporalPattern], "PartitionMatcher"]
Partial = Callable[[str, Any], Mapping[str, Any] | None]


class PartitionMatcher(Protocol):
    """What the runtime asks of one partition's situation matcher
    (:class:`~kleene.tpstream.matcher.SituationMatcher`)."""

    def matches(
        self, time: Any, started: list[Situation], finished: list[Situation]
    ) -> Iterable[TemporalMatch]: ...

    def advance_to(self, time: Any, going_on: Any) -> None: ...

    def flush(self, time: Any) -> list[TemporalMatch]: ...

    def held(self) -> int: ...

    def state(self) -> Any: ...


class Partition:
    """The deriver and the situation matcher of one partition key, its last event's
    time and the situations its matcher held after its last update."""

    def __init__(self, deriver: Deriver, matcher: Any, last: Any) -> None:
        self.deriver = deriver
        self.matcher = matcher
        self.last = last
        self.held = 0


class TemporalMatcher(StreamMatcher[TemporalMatch]):
    """Matches a TPStream plan over events pushed in batches; see the module docstring.

    ``make_matcher(pattern)`` builds one partition's situation matcher; with
    ``planner_options`` (a dict, maybe empty, of AdaptivePlanner options), one
    :class:`~kleene.tpstream.planning.SharedPlanner` picks the evaluation order of all
    of them. ``on_matches`` (optional) is handed the matches of
    each ``push`` and ``flush`` as they are found, instead of their return value.
    ``max_matches`` (None: no limit) bounds the matches reported since the matcher was
    created or resumed: they are counted as the situation matchers' joins produce
    them, and past the limit the call hands out the matches up to it (to
    ``on_matches`` if given) and raises :class:`~kleene.errors.MatchLimitError`
    (:mod:`kleene.runtime.limits`). ``max_runs`` bounds the live state: the situations
    the situation matchers of all partitions hold (buffered within the window, or
    running); past it a call raises :class:`~kleene.errors.RunLimitError`."""

    def __init__(
        self,
        plan: TemporalPlan,
        fields: EventFields,
        *,
        time_unit: str | None,
        make_matcher: MatcherFactory,
        fingerprint: bytes,
        state: bytes | None = None,
        planner_options: Mapping[str, Any] | None = None,
        on_matches: Callable[[list[TemporalMatch]], object] | None = None,
        max_matches: int | None = None,
        max_runs: int = DEFAULT_MAX_RUNS,
    ) -> None:
        self.plan = plan
        self.planner_options = planner_options
        self.planner: SharedPlanner | None = None
        self.reporter: Reporter[TemporalMatch] = Reporter(max_matches, on_matches)
        self.max_runs = max_runs
        self.time_unit = time_unit
        self.make_matcher = make_matcher
        self.fingerprint = fingerprint
        self.admission = Admission(plan, fields)
        self.pattern: TemporalPattern | None = None
        self.partitions: dict[tuple[Any, ...], Partition] = {}
        self.live = 0  # the situations all partitions' matchers hold (max_runs)
        # whether clean arrow batches are matched column-wise (False: event by event)
        self.columnar = True
        if state is not None:
            self._restore(snapshot.unseal(state, snapshot.TPSTREAM, fingerprint))

    # --- matching -------------------------------------------------------------------

    def push(self, events: Any) -> list[TemporalMatch]:
        """Matches detected by these events (pyarrow, pandas or mappings, as
        :func:`kleene.compile`'s queries accept)."""
        out = self.reporter.call()
        if not self.columnar:
            self._push_events(self.admission.admit(events), out)
            return out.finish()
        admitted = self.admission.admit_columns(events)
        if isinstance(admitted, list):
            self._push_events(admitted, out)
        else:
            self._push_columns(admitted, out)
        return out.finish()

    def _push_events(self, admitted: list[Admitted], out: Output[TemporalMatch]) -> None:
        """Event by event: each event's deriver step, then its matcher update."""
        for e in admitted:
            part = self._partition(e.key)
            started, finished = part.deriver.push(e.time, e.position, e.values, e.id)
            part.last = e.time
            found = part.matcher.matches(e.time, started, finished)
            if found:
                partial = part.deriver.partial
                out.extend(self._output(m, partial) for m in found)
            if self.planner is not None and (started or finished):
                self.planner.observe(part.matcher, self._matchers())
            self._count(part, out)

    def _push_columns(self, admitted: AdmittedColumns, out: Output[TemporalMatch]) -> None:
        """A clean batch column-wise: each partition's deriver finds its situations
        from the predicate masks (:meth:`Deriver.push_columns`), and the matchers are
        updated only at the events that start or finish one, in arrival order; the
        same matches as :meth:`_push_events`, which updates at every event.

        An update without situations only purges the buffers, and the bound of an
        update with situations at time t is never below that of one at the
        partition's previous event t': a situation visible at t started after
        t' - slack (section 5.3's duration rules), so ``min(t - slack, visible
        starts)`` is at least ``t' - slack``; without low latency, the running
        situations of t' that finish at t count with their starts as before. The
        skipped updates would thus purge nothing an update with situations does not;
        only the last event's is made up at the end, so that the state
        (:meth:`snapshot`) is the same.
        """
        columns = BatchColumns(self.plan, admitted.batch, admitted.times)
        masks = columns.masks()
        ids = _has_ids(admitted.batch)
        updates: list[tuple[int, int, int, Situation, Partition, list[Any], int]] = []
        ends = []
        for key, rows in admitted.parts.items():
            part = self._partition(key)
            times = admitted.times[rows]
            t, index = times.tolist(), rows.tolist()
            positions = (rows + admitted.first).tolist()
            derived = part.deriver.push_columns(
                times,
                t,
                positions,
                [m[rows] for m in masks],
                _values(columns, index),
                _at(admitted.batch, index) if ids else None,
            )
            updates += [(index[i], flag, k, s, part, t, i) for i, flag, k, s in derived]
            ends.append((part, t))
        updates.sort()  # by row, started before finished, symbol: (row, flag, k) is unique
        at, n = 0, len(updates)
        while at < n:
            row, flag, _, s, part, t, i = updates[at]
            started: list[Situation] = [] if flag else [s]
            finished: list[Situation] = [s] if flag else []
            at += 1
            while at < n and updates[at][0] == row:
                (finished if updates[at][1] else started).append(updates[at][3])
                at += 1
            self._update(part, t[i], started, finished, i, out)
        for part, t in ends:
            if part.last != t[-1]:
                self._update(part, t[-1], [], [], len(t) - 1, out)

    def _update(
        self,
        part: Partition,
        time: Any,
        started: list[Situation],
        finished: list[Situation],
        index: int,
        out: Output[TemporalMatch],
    ) -> None:
        """One matcher update of a column-wise batch at its partition's event
        ``index``; a match's running situations take their aggregates so far then."""
        part.last = time
        found = part.matcher.matches(time, started, finished)
        if found:
            deriver = part.deriver

            def partial(name: str, start: Any) -> Mapping[str, Any] | None:
                return deriver.partial_at(name, start, index)

            out.extend(self._output(m, partial) for m in found)
        if self.planner is not None and (started or finished):
            self.planner.observe(part.matcher, self._matchers())
        self._count(part, out)

    def _count(self, part: Partition, out: Output[TemporalMatch]) -> None:
        """The situations held after a partition's update, against ``max_runs``: past
        it, the matches found so far go to ``on_matches`` (if any) and the call raises
        :class:`~kleene.errors.RunLimitError`."""
        held = part.matcher.held()
        self.live += held - part.held
        part.held = held
        if self.live > self.max_runs:
            out.finish()
            raise run_limit(
                self.max_runs,
                "situations held by the matcher",
                "(buffered within the window or running, over all partitions)",
            )

    def advance_to(self, time: Any) -> list[TemporalMatch]:
        """No event before ``time`` will come: a later one is rejected as late (one at
        ``time`` is still admitted). No match becomes final: a match is detected at a
        situation's start or end (EDBT 2018, section 5.3.2), which only an event
        brings (a situation ends at the first event that fails its predicate,
        Definition 7). What the time settles is how far back a later match can reach:
        each partition's matcher purges the situations the window excludes for every
        update from ``time`` on (:meth:`SituationMatcher.advance_to`), so that quiet
        partitions give their buffers up. ``time`` is a number or a datetime, of the
        stream's kind (before any event, it sets the kind)."""
        internal = self.admission.time.time_in(time)
        self.admission.time.advance(internal)
        for part in self.partitions.values():
            if part.last is None or internal > part.last:
                part.matcher.advance_to(internal, part.deriver.going_on_since())
                held = part.matcher.held()
                self.live += held - part.held
                part.held = held
        return self.reporter.call().finish()

    def flush(self) -> list[TemporalMatch]:
        """End of input: a situation still going on has no end and is not derived
        (docs/semantics.md, "Situations"); the matchers report what is left."""
        out = self.reporter.call()
        for part in self.partitions.values():
            partial = part.deriver.partial
            out.extend(self._output(m, partial) for m in part.matcher.flush(part.last))
            self._count(part, out)
        return out.finish()

    @property
    def rejected_count(self) -> int:
        """Events rejected since the stream began (a resumed matcher counts on)."""
        return self.admission.time.rejected_count

    @property
    def reported(self) -> int:
        """Matches reported since this matcher was created or resumed."""
        return self.reporter.reported

    def _matchers(self) -> Any:
        return (p.matcher for p in self.partitions.values())

    def take_rejected(self) -> list[RejectedEvent]:
        return self.admission.time.take_rejected()

    def _partition(self, key: tuple[Any, ...]) -> Partition:
        part = self.partitions.get(key)
        if part is None:
            pattern = self._pattern()
            deriver = Deriver(self.plan, pattern, key)
            part = self.partitions[key] = Partition(deriver, self.make_matcher(pattern), None)
            if self.planner is not None:
                self.planner.adopt(part.matcher)
        return part

    def _pattern(self) -> TemporalPattern:
        if self.pattern is None:
            self.pattern = self.plan.pattern_for(self.admission.time.time_kind, self.time_unit)
            if self.planner_options is not None:
                self.planner = SharedPlanner(self.pattern, **self.planner_options)
        return self.pattern

    # --- output ---------------------------------------------------------------------

    def _output(self, m: TemporalMatch, partial: Partial) -> TemporalMatch:
        """The match with its RETURN values and times as they came in; ``partial``
        gives the aggregates so far of a situation still going on."""
        shown = self.admission.time.time_out
        if not self.plan.returns and self.admission.time.time_kind != "datetime":
            return m  # nothing to compute, nothing to convert
        inputs: dict[tuple[str, str], Any] = {}
        situations = {}
        for name, s in m.situations.items():
            values = s.aggregates if s.end is not None else partial(name, s.start)
            inputs.update({(name, k): v for k, v in (values or {}).items()})
            inputs[(name, "start")] = shown(s.start)
            inputs[(name, "end")] = shown(s.end)
            inputs[(name, "duration")] = self._duration(s)
            situations[name] = replace(s, start=shown(s.start), end=shown(s.end))
        returned = {r.name: r.value(inputs) for r in self.plan.returns}
        return TemporalMatch(m.partition, situations, shown(m.time), shown(m.detected), returned)

    def _duration(self, s: Situation) -> Any:
        if s.end is None:
            return None
        length = s.end - s.start
        return length / MICROS if self.admission.time.time_kind == "datetime" else length

    # --- snapshots ------------------------------------------------------------------

    def snapshot(self) -> bytes:
        """The matcher's state as versioned data (kleene.runtime.snapshot's format)."""
        a = self.admission
        tree = {
            # the rejected events not yet taken are not saved, only their count
            "admission": [a.kinds, list(a.last.items()), a.time.to_data(untaken=False)],
            "partitions": [
                [key, p.deriver.to_data(), p.matcher.state(), p.last]
                for key, p in self.partitions.items()
            ],
        }
        return snapshot.seal(snapshot.TPSTREAM, self.fingerprint, tree)

    def _restore(self, tree: Any) -> None:
        admission, partitions = snapshot.fields_of(tree, "the state", "admission", "partitions")
        kinds, last, time = snapshot.sequence(admission, "admission", length=3)
        a = self.admission
        a.time = StreamTime.from_data(time)
        a.kinds = snapshot.mapping(kinds, "the attribute kinds")
        a.last = {snapshot.partition_key(k): t for k, t in snapshot.sequence(last, "last times")}
        for item in snapshot.sequence(partitions, "the partitions"):
            key, derived, matched, last_time = snapshot.sequence(item, "a partition", length=4)
            part = self._partition(snapshot.partition_key(key))
            try:
                part.deriver.restore(snapshot.sequence(derived, "a deriver"))
                part.matcher = type(part.matcher).restore(self._pattern(), matched)
                if self.planner is not None:
                    self.planner.adopt(part.matcher)
            except (KleeneError, TypeError, ValueError, KeyError, IndexError) as e:
                raise SnapshotError(f"the snapshot's state is malformed ({e})") from None
            part.last = last_time
            part.held = part.matcher.held()
            self.live += part.held


def _has_ids(batch: EventBatch) -> bool:
    """Whether a batch's events may have ids other than their positions."""
    return batch.table is None or batch.fields.id_field in batch.table.column_names


def _at(batch: EventBatch, rows: list[int]) -> Callable[[int], Any]:
    """The id of a partition's event i (at batch row ``rows[i]``); the batch's ids are
    read once, when a situation first asks (:attr:`EventBatch.ids` keeps them)."""

    def ident(i: int) -> Any:
        return batch.ids[rows[i]]

    return ident


def _values(columns: BatchColumns, rows: list[int]) -> Callable[[int], list[Any]]:
    """Attribute i's Python values at ``rows`` of the batch, read once."""
    cache: dict[int, list[Any]] = {}

    def values(i: int) -> list[Any]:
        found = cache.get(i)
        if found is None:
            every = columns.values(i)
            found = cache[i] = [every[j] for j in rows]
        return found

    return values
