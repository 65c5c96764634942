"""Completed matches as the results a matcher reports: :class:`~kleene.match.Match`
(variables, positions, times, partition, RETURN values) and, for the collapsed output
format, :class:`~kleene.collapsed.CollapsedMatch` (SIGMOD 2014, section 5.2)."""

from __future__ import annotations

from typing import Any

from kleene.collapsed import SAFE, UNSAFE, CollapsedMatch
from kleene.compiler.plan import Plan
from kleene.events import EVENT_ID, EVENT_TIME
from kleene.match import Match
from kleene.runtime.core import Completion
from kleene.runtime.found import Found
from kleene.runtime.postpone.construct import construct
from kleene.runtime.stream_time import StreamTime


class Formatter:
    """Builds the results of one matcher."""

    def __init__(self, plan: Plan, max_matches: int | None, time: StreamTime) -> None:
        self.plan = plan
        self.max_matches = max_matches
        self.time = time
        self.time_returns = plan.return_times  # RETURN items given back as datetimes
        self.var_of_state = [s.var for s in plan.states]

    def match(self, found: Found | Completion) -> Match:
        """The match of a completion (or of a completion checked for negations)."""
        plan = self.plan
        variables, where, start, end = found.grouped(self.var_of_state, plan.positive_vars)
        returned = {}
        datetimes = self.time.time_kind == "datetime"
        if plan.returns is not None:
            values = plan.returns(found.vector)
            if datetimes and any(self.time_returns):
                time_out = self.time.time_out
                values = tuple(
                    time_out(v) if is_time and v is not None else v
                    for v, is_time in zip(values, self.time_returns, strict=True)
                )
            returned = dict(zip(plan.return_names, values, strict=True))
        if datetimes:
            start, end = self.time.time_out(start), self.time.time_out(end)
        # a run's key may be a hash key that starts with the partition (choose_key)
        partition = found.partition[: plan.partition_width]
        return Match.of(variables, where, start, end, partition, returned)

    def collapse(self, partition: tuple[Any, ...], items: list[Any], end: Any) -> CollapsedMatch:
        """An intermediate match of the postponing core as a collapsed result."""
        states = self.plan.states
        singles: dict[str, Any] = {}
        candidates: dict[str, tuple[tuple[Any, str], ...]] = {}
        first_fixed, last_fixed = set(), set()
        times = []
        for item in items:
            if len(item) == 3:
                state, _position, e = item
                singles[states[state].var] = e[EVENT_ID]
                times.append(e[EVENT_TIME])
                continue
            first, cands, length, forced, fixed = item
            var = states[first].var
            chosen = [(e, safe) for _position, e, safe in cands[:length]]
            candidates[var] = tuple((e[EVENT_ID], SAFE if safe else UNSAFE) for e, safe in chosen)
            times += [e[EVENT_TIME] for e, _safe in chosen]
            if fixed:
                first_fixed.add(var)
            if forced:
                last_fixed.add(var)
        exact = all(label == SAFE for cs in candidates.values() for _, label in cs) and not any(
            s.proceed_text or (s.postponed and s.kind == "single") for s in states
        )
        plan, limit = self.plan, self.max_matches

        def expand() -> list[Match]:
            found = construct(plan.states, items, plan.initial_vector, limit, partition)
            return [self.match(b) for b in found]

        return CollapsedMatch(
            singles=singles,
            candidates=candidates,
            first_fixed=frozenset(first_fixed),
            last_fixed=frozenset(last_fixed),
            start=self.time.time_out(min(times)),
            end=self.time.time_out(end),
            partition=partition[: plan.partition_width],
            exact=exact,
            _expand=expand,
        )
