"""The compiled TPStream query: :func:`kleene.compile` returns one for a query text that
starts with FROM (EDBT 2018, section 3). It is the ``tpstream`` kind of
:mod:`kleene.kinds`, on the one contract of :mod:`kleene.runtime.contract`: whole runs
(``run``, ``run_detailed``) push the input, columnar or not, through one
:class:`~kleene.tpstream.runtime.TemporalMatcher`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from kleene.errors import QueryError
from kleene.events import EventFields
from kleene.runtime import snapshot
from kleene.runtime.contract import CompiledQuery, OnMatches
from kleene.runtime.limits import DEFAULT_MAX_MATCHES, DEFAULT_MAX_RUNS
from kleene.times import time_unit_seconds
from kleene.tpstream.compile import build_plan
from kleene.tpstream.model import TemporalMatch, TemporalPattern
from kleene.tpstream.plan import TemporalPlan
from kleene.tpstream.planning import SharedPlanner, fixed_order_explanation
from kleene.tpstream.runtime import TemporalMatcher


def _situation_matcher(order: Sequence[str] | None, low_latency: bool) -> Callable[..., Any]:
    from kleene.tpstream.matcher import SituationMatcher

    def make(pattern: TemporalPattern) -> Any:
        return SituationMatcher(pattern, order, low_latency=low_latency)

    return make


class TemporalQuery(CompiledQuery[TemporalMatch]):
    """A compiled TPStream query. Create with :func:`kleene.compile`.

    Options: ``time_field``, ``type_field``, ``id_field`` (where events keep their
    time, type and id), ``time_unit`` (what one unit of a numeric time column is, for
    durations written with a unit), ``low_latency`` (report matches at the earliest
    moment section 5.3 allows, default True; False waits for every situation's end),
    ``order`` (a fixed evaluation order of the symbols; default: chosen and adapted
    by one :class:`~kleene.tpstream.planning.SharedPlanner` over all partitions,
    section 5.4), ``max_matches`` (the matches one matcher may report before
    :class:`~kleene.errors.MatchLimitError`, counted as the joins produce them; None
    for no limit), ``max_runs`` (the situations the matcher may hold at once, buffered
    within the window or running, over all partitions, before
    :class:`~kleene.errors.RunLimitError`).
    """

    kind: ClassVar[str] = "tpstream"

    def __init__(
        self,
        text: str,
        *,
        time_field: str = "timestamp",
        type_field: str = "type",
        id_field: str = "id",
        time_unit: str | None = None,
        low_latency: bool = True,
        order: Sequence[str] | None = None,
        max_matches: int | None = DEFAULT_MAX_MATCHES,
        max_runs: int = DEFAULT_MAX_RUNS,
    ) -> None:
        if max_runs < 1:
            raise ValueError("max_runs must be >= 1")
        if max_matches is not None and max_matches < 0:
            raise ValueError("max_matches must be >= 0 (or None for no limit)")
        self.text = text
        self.plan: TemporalPlan = build_plan(text)
        if time_unit is not None:
            try:
                time_unit_seconds(time_unit)
            except ValueError as exc:
                raise QueryError(str(exc)) from None
        if order is not None and sorted(order) != sorted(self.plan.symbol_names):
            raise QueryError(
                f"an evaluation order names every symbol once: {', '.join(self.plan.symbol_names)}"
            )
        self.fields = EventFields(type_field, time_field, id_field)
        self.time_unit = time_unit
        self.low_latency = low_latency
        self.order = None if order is None else tuple(order)
        self.max_matches = max_matches
        self.max_runs = max_runs

    # --- facts about the query ----------------------------------------------------

    @property
    def return_names(self) -> tuple[str, ...]:
        return self.plan.return_names

    @property
    def symbols(self) -> tuple[str, ...]:
        """The DEFINE symbols, in order."""
        return self.plan.symbol_names

    @property
    def partition_attributes(self) -> tuple[str, ...]:
        return self.plan.partition

    @property
    def variables(self) -> tuple[str, ...]:
        """The DEFINE symbols: a match binds one situation to each (its ``ids()`` give
        each one's first and last event ids)."""
        return self.plan.symbol_names

    def check_columns(self, events: Any) -> None:
        """Nothing to refuse up front: an event lacking an attribute the query reads is
        rejected with its reason (:mod:`kleene.tpstream.admission`)."""

    def fingerprint(self) -> bytes:
        """What a snapshot's state means: the query and the options that change it."""
        f = self.fields
        order = None if self.order is None else list(self.order)
        fields = [f.type_field, f.time_field, f.id_field]
        facts: list[Any] = [self.text, fields, self.time_unit, self.low_latency, order]
        return snapshot.kind_fingerprint(snapshot.TPSTREAM, facts)

    # --- evaluation -----------------------------------------------------------------

    def matcher(
        self, *, state: bytes | None = None, on_matches: OnMatches | None = None
    ) -> TemporalMatcher:
        """A push-based matcher (``push``, ``advance_to``, ``flush``, ``snapshot``,
        ``take_rejected``); ``state`` resumes from :meth:`TemporalMatcher.snapshot`
        (the planner's statistics are re-derived, :mod:`kleene.tpstream.planning`);
        ``on_matches`` is handed the matches as they are found, instead of returned;
        past ``max_matches`` matches a call raises
        :class:`~kleene.errors.MatchLimitError`, past ``max_runs`` situations held a
        :class:`~kleene.errors.RunLimitError`."""
        return TemporalMatcher(
            self.plan,
            self.fields,
            time_unit=self.time_unit,
            make_matcher=_situation_matcher(self.order, self.low_latency),
            fingerprint=self.fingerprint(),
            state=state,
            planner_options={} if self.order is None else None,
            on_matches=on_matches,
            max_matches=self.max_matches,
            max_runs=self.max_runs,
        )

    def explain(self) -> str:
        """The situation definitions and the temporal pattern, as text."""
        lines = [f"TPStream query over {self.plan.stream}"]
        if self.plan.partition:
            lines.append(f"partitioned by {', '.join(self.plan.partition)}")
        lines.append("situations (longest runs of events satisfying the predicate):")
        for s in self.plan.symbols:
            bounds = [b.text for b in (s.minimum, s.maximum) if b is not None]
            extra = f" [{', '.join(bounds)}]" if bounds else ""
            aggs = ", ".join(a.name for a in s.aggregates)
            lines.append(f"  {s.name}: {s.text}{extra}" + (f"; keeps {aggs}" if aggs else ""))
        lines.append("pattern (every constraint holds by one of its relations):")
        lines += [f"  {text}" for text in self.plan.relations_text]
        lines.append(self.plan.window.text)
        if self.plan.returns:
            lines.append(f"return {', '.join(self.return_names)}")
        mode = "with low latency (section 5.3)" if self.low_latency else "at their last end"
        lines.append(f"matches reported {mode}")
        lines.append(self.plan_explanation())
        return "\n".join(lines)

    def plan_explanation(self, matcher: TemporalMatcher | None = None) -> str:
        """The evaluation order with its estimated cost and why (section 5.4): the
        shared planner's of ``matcher`` once it has seen events, else the initial plan."""
        if matcher is not None and matcher.planner is not None:
            return matcher.planner.explanation()
        pattern = TemporalPattern(self.plan.symbol_names, self.plan.constraints, 0)
        if self.order is not None:
            return fixed_order_explanation(pattern, self.order)
        return SharedPlanner(pattern).explanation() + (
            "\n  (one planner for all partitions: their statistics are pooled)"
            if self.plan.partition
            else ""
        )

    def __repr__(self) -> str:
        return f"kleene.compile({self.text!r})"
