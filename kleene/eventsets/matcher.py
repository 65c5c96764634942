"""A push-based matcher of an SES query, with snapshots (the one matcher contract,
:mod:`kleene.runtime.contract`).

Events are admitted (:mod:`kleene.eventsets.admission`), then go through a pipeline of
match windows (:mod:`kleene.eventsets.stream`) that calls the matching algorithm on each
complete window. Matches are :class:`kleene.match.Match` values, like every query's:
ids and positions per variable, start and end times as given, and ``partition``: the
match's values of the pattern's partitioning attributes (Definition 6 of the
match-window paper; all its events agree on them), ``()`` without any. The state is
saved in the versioned snapshot format of :mod:`kleene.runtime.snapshot` (data only).

The pipeline is lazy and its matches are counted by a
:class:`~kleene.runtime.output.Reporter` as algorithm A finds them, so ``max_matches``
stops A inside a window. A call's matches come window by window (in the order the
windows complete) and within a window in A's order; :meth:`SesQuery.run
<kleene.eventsets.query.SesQuery.run>` sorts them. After a limit error the matcher
stops where it was: go on with a new one (or one resumed from an earlier snapshot).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kleene.events import EventFields, read_batch
from kleene.eventsets.admission import SesAdmission, SesRequirements
from kleene.eventsets.compile import ID, TIME
from kleene.eventsets.model import SesPattern
from kleene.eventsets.stream import Found, Pipeline
from kleene.match import Match, RejectedEvent
from kleene.runtime import snapshot
from kleene.runtime.contract import OnMatches, StreamMatcher
from kleene.runtime.output import Output, Reporter
from kleene.runtime.stream_time import StreamTime

#: builds the pipeline for the pattern of the stream's time kind
PipelineFactory = Callable[[SesPattern], Pipeline]


class SesMatcher(StreamMatcher[Match]):
    """Evaluates one SES query over a stream pushed to it in time order."""

    def __init__(
        self,
        pattern_of: Callable[[bool], SesPattern],
        needs: SesRequirements,
        fields: EventFields,
        pipeline: PipelineFactory,
        fingerprint: bytes,
        *,
        partition: tuple[str, ...] = (),
        max_matches: int | None = None,
        state: bytes | None = None,
        on_matches: OnMatches | None = None,
    ) -> None:
        self.pattern_of = pattern_of  # datetimes? -> the pattern with τ in those units
        self.needs = needs
        self.fields = fields
        self.make_pipeline = pipeline
        self.fingerprint = fingerprint
        self.partition = partition  # the attributes of a match's partition
        self.reporter: Reporter[Match] = Reporter(max_matches, on_matches)
        self.time = StreamTime()  # the time kind, clock, counters, rejected events
        self.learned: dict[int, str] = {}  # the kinds the kind groups' values have
        self.pipeline: Pipeline | None = None
        self.order: tuple[str, ...] = ()  # the variables in pattern order
        if state is not None:
            self._restore(snapshot.unseal(state, snapshot.EVENTSET, fingerprint))
        self.admission = SesAdmission(needs, self.time, self.learned)

    # --- public API -------------------------------------------------------------------

    def push(self, events: Any) -> list[Match]:
        """Feed events in time order; return the matches whose windows completed (in
        every partition: the pipeline advances to the batch's last time)."""
        batch = read_batch(events, self.fields, self.time.arrived)
        out = self.reporter.call()
        last = None
        for position, row in self.admission.admit(batch):
            self._emit(out, self._pipe().push(position, row))
            last = row[TIME]
        if last is not None:  # the windows of other partitions this batch completes
            self._emit(out, self._pipe().advance(last))
        return out.finish()

    def run(self, events: Any) -> list[Match]:
        """A whole finite input: the matches of ``push(events)`` then ``flush()``,
        with the pre-processing computed over the batch at once where the pipeline can
        (:meth:`~kleene.eventsets.twophase.TwoPhase.drain`)."""
        batch = read_batch(events, self.fields, self.time.arrived)
        admitted = list(self.admission.admit(batch))
        if not admitted:
            return self.flush()
        positions, rows = zip(*admitted, strict=True)
        out = self.reporter.call()
        self._emit(out, self._pipe().drain(positions, rows))
        return out.finish()

    def advance_to(self, time: Any) -> list[Match]:
        """No event before ``time`` will come (a later one is rejected as late):
        evaluate the windows that completes."""
        internal = self.time.time_in(time)
        self.time.advance(internal)
        out = self.reporter.call()
        if self.pipeline is not None:
            self._emit(out, self.pipeline.advance(internal))
        return out.finish()

    def flush(self) -> list[Match]:
        """End of stream: every remaining window is evaluated."""
        out = self.reporter.call()
        if self.pipeline is not None:
            self._emit(out, self.pipeline.flush())
        return out.finish()

    @property
    def reported(self) -> int:
        """Matches reported since the matcher was created or resumed."""
        return self.reporter.reported

    def take_rejected(self) -> list[RejectedEvent]:
        """The events rejected since the last call, each with its reason."""
        return self.time.take_rejected()

    @property
    def rejected_count(self) -> int:
        """Events rejected since the stream began."""
        return self.time.rejected_count

    def snapshot(self) -> bytes:
        """The matcher's state in the snapshot format; ``SesQuery.matcher(state=...)``
        of the same query and options resumes from it."""
        tree = {
            # the rejected events not yet taken are not saved, only their count
            "stream": self.time.to_data(untaken=False),
            "learned": dict(self.learned),
            "buffer": None if self.pipeline is None else self.pipeline.to_data(),
        }
        return snapshot.seal(snapshot.EVENTSET, self.fingerprint, tree)

    # --- internals --------------------------------------------------------------------

    def _pipe(self) -> Pipeline:
        if self.pipeline is None:
            pattern = self.pattern_of(self.time.time_kind == "datetime")
            self.pipeline = self.make_pipeline(pattern)
            self.order = tuple(v.name for v in pattern.variables)
        return self.pipeline

    def _emit(self, out: Output[Match], found: Iterator[Found]) -> None:
        """The matches of ``found`` into ``out``, read only up to the match limit
        (then closed, so that the pipeline's cleanup runs now)."""
        try:
            out.extend(self._match(f) for f in found)
        finally:
            close = getattr(found, "close", None)
            if close is not None:
                close()

    def _match(self, f: Found) -> Match:
        # the variables in pattern order, whichever order algorithm A bound them in
        bindings = {v: f.match.bindings[v] for v in self.order}
        rows = f.rows
        times = [rows[p][TIME] for seq in bindings.values() for p in seq]
        partition: tuple[Any, ...] = ()
        if self.partition:  # every event of a match has the same values: the first's
            first = rows[min(rows)]
            time_out = self.time.time_out
            partition = tuple(
                time_out(first[a]) if a == TIME else first.get(a) for a in self.partition
            )
        return Match(
            variables={v: tuple(rows[p][ID] for p in seq) for v, seq in bindings.items()},
            positions=dict(bindings),
            start=self.time.time_out(min(times)),
            end=self.time.time_out(max(times)),
            partition=partition,
        )

    def _restore(self, tree: Any) -> None:
        with snapshot.loading():
            stream, learned, buffer = snapshot.fields_of(
                tree, "the SES state", "stream", "learned", "buffer"
            )
            self.time = StreamTime.from_data(stream)
            for group, k in snapshot.mapping(learned, "the learned kinds").items():
                snapshot.integer(group, "a kind group", 0)
                if k not in ("number", "string", "boolean", "datetime"):
                    snapshot.fail("a learned kind")
            self.learned = learned
            if buffer is not None:
                if self.time.time_kind is None:
                    snapshot.fail("buffered events without a time kind")
                self._pipe().load(buffer, self.time.position)
