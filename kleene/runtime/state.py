"""Everything a matcher remembers between events, and its snapshot data
(:mod:`kleene.runtime.snapshot`)."""

from __future__ import annotations

from typing import Any

from kleene.compiler.plan import Plan
from kleene.runtime.core import Core
from kleene.runtime.found import Found, FoundMaker, Pending
from kleene.runtime.found import to_data as found_data
from kleene.runtime.ingest import ReorderBuffer
from kleene.runtime.negation import NegationState
from kleene.runtime.output import NonOverlapState
from kleene.runtime.snapshot import Shapes, fail, fields_of, integer, mapping, number, sequence
from kleene.runtime.stream_time import StreamTime


class MatcherState:
    """Everything a matcher remembers between events."""

    def __init__(self, core: Core) -> None:
        self.core = core.new_state()
        self.negation = NegationState()
        self.non_overlap = NonOverlapState()
        self.pending: list[Pending] = []  # matches held for a trailing negation
        self.reorder = ReorderBuffer()
        self.learned_kinds: dict[int, str] = {}
        # the time kind, the clock (the last released event's time, or a watermark),
        # arrivals (input positions), released events (stream positions), rejections
        self.time = StreamTime()
        self.seq = 0
        self.since_sweep = 0

    def to_data(self) -> Any:
        """Plain data. A match waiting for a trailing negation is also a non-overlap
        candidate (the same object), so found matches are written once, in a table."""
        table: dict[int, int] = {}
        found: list[Any] = []

        def ref(f: Found) -> int:
            if id(f) not in table:
                table[id(f)] = len(found)
                found.append(found_data(f))
            return table[id(f)]

        return {
            "core": self.core.to_data(),
            "negation": self.negation.to_data(),
            "non_overlap": self.non_overlap.to_data(ref),
            "pending": [(p.deadline, p.seq, ref(p.found)) for p in self.pending],
            "found": found,
            "reorder": self.reorder.to_data(),
            "learned_kinds": self.learned_kinds,
            "stream": self.time.to_data(),
            "counters": (self.seq, self.since_sweep),
        }

    @classmethod
    def from_data(cls, data: Any, plan: Plan, core: Core) -> MatcherState:
        """The state of :meth:`to_data`, checked against the plan and the core."""
        fields = fields_of(
            data,
            "the matcher state",
            *("core", "negation", "non_overlap", "pending", "found", "reorder"),
            *("learned_kinds", "stream", "counters"),
        )
        core_data, negation, non_overlap, pending, found, reorder = fields[:6]
        learned, stream, counters = fields[6:]
        for group, kind in mapping(learned, "the learned kinds").items():
            integer(group, "a kind group", 0)
            if type(kind) is not str:
                fail("a learned kind")
        shapes = Shapes(plan, learned)
        st = cls(core)
        st.core = type(st.core).from_data(core_data, shapes)
        st.negation = NegationState.from_data(negation, shapes)
        st.learned_kinds = learned
        st.reorder = ReorderBuffer.from_data(reorder, shapes)
        st.read_matches(found, non_overlap, pending, FoundMaker(plan), shapes)
        st.time = StreamTime.from_data(stream)
        for c in sequence(counters, "the matcher counters", tuple, 2):
            integer(c, "a matcher counter", 0)
        st.seq, st.since_sweep = counters
        return st

    def read_matches(
        self, found: Any, non_overlap: Any, pending: Any, make: FoundMaker, shapes: Shapes
    ) -> None:
        """The found matches, the non-overlap candidates and the held matches."""
        table = [make.from_data(f, shapes) for f in sequence(found, "found matches")]

        def payload(ref: Any) -> tuple[tuple[Any, ...], Found]:
            f = table[integer(ref, "a found match", 0, len(table))]
            return f.order, f

        self.non_overlap = NonOverlapState.from_data(non_overlap, payload)
        for item in sequence(pending, "the pending matches"):
            deadline, seq, ref = sequence(item, "a pending match", tuple, 3)
            number(deadline, "a pending match's deadline")
            held = Pending(deadline, integer(seq, "a sequence number", 0), payload(ref)[1])
            self.pending.append(held)
        self.pending.sort(key=lambda p: (p.deadline, p.seq))
