"""The compiled query: the user-facing object tying front end, plan and runtime."""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping
from itertools import chain
from typing import Any

import pyarrow as pa

from kleene.collapsed import CollapsedMatch, Result
from kleene.compiler import build_plan
from kleene.compiler.explain import explain_plan
from kleene.compiler.plan import Plan
from kleene.errors import (
    QueryError,
    RejectedEventsWarning,
    SchemaWarning,
    line_starts,
    position,
)
from kleene.events import EventFields, check_input
from kleene.lang import ast, parse, validate
from kleene.match import Match, RejectedEvent, RunResult
from kleene.runtime.choice import choose_engine
from kleene.runtime.config import MatcherConfig
from kleene.runtime.contract import CompiledQuery
from kleene.runtime.ingest import check_columns, schema_gaps, window_size
from kleene.runtime.limits import DEFAULT_MAX_MATCHES, DEFAULT_MAX_RUNS
from kleene.runtime.matcher import Matcher
from kleene.times import time_unit_seconds
from kleene.vocabulary import option


class Query(CompiledQuery[Result]):
    """A compiled SASE+ pattern query. Create with :func:`kleene.compile`."""

    kind = "sase"

    def __init__(
        self,
        text: str,
        *,
        strategy: ast.Strategy | str | None = None,
        output: ast.OutputFormat | str | None = None,
        time_field: str = "timestamp",
        type_field: str = "type",
        id_field: str = "id",
        allowed_lateness: float = 0,
        max_runs: int = DEFAULT_MAX_RUNS,
        max_matches: int | None = DEFAULT_MAX_MATCHES,
        engine: str = "auto",
        time_unit: str | None = None,
        match_windows: bool = False,
        node: ast.Query | None = None,
    ) -> None:
        if allowed_lateness < 0:
            raise ValueError("allowed_lateness must be >= 0")
        if max_runs < 1:
            raise ValueError("max_runs must be >= 1")
        if max_matches is not None and max_matches < 0:
            raise ValueError("max_matches must be >= 0 (or None for no limit)")
        self.text = text
        self.ast = node if node is not None else parse(text)  # node: one query of a program
        validate(self.ast, text)
        self.plan: Plan = build_plan(
            self.ast,
            text,
            strategy=option(ast.Strategy, strategy, "strategy"),
            output=option(ast.OutputFormat, output, "output format"),
            match_windows=match_windows,
        )
        chosen, self.engine_reason = self._choose_engine(engine, output is None)
        if match_windows and (allowed_lateness or chosen == "backtrack"):
            raise QueryError(
                "match_windows does not apply with allowed_lateness (events are reordered "
                "across windows) nor to the backtrack engine (it needs every event)"
            )
        self.config = MatcherConfig(
            fields=EventFields(type_field, time_field, id_field),
            allowed_lateness=allowed_lateness,
            max_runs=max_runs,
            max_matches=max_matches,
            engine=chosen,
            time_unit=_time_unit(time_unit),
        )

    def _choose_engine(self, engine: str, output_from_text: bool) -> tuple[str, str]:
        """The engine for the plan; a refusal caused by the query's own OUTPUT COLLAPSED
        points at that clause."""
        try:
            return choose_engine(self.plan, engine)
        except QueryError as error:
            clause = None
            if error.line is None and output_from_text and self.ast.output is not None:
                start = _offset(self.text, self.ast.span)
                clause = _OUTPUT_COLLAPSED.search(self.text, start)
            if clause is None:
                raise
            line, column = position(self.text, clause.start())
            raise QueryError(error.message, line=line, column=column, text=self.text) from None

    # --- facts about the query ----------------------------------------------------

    @property
    def strategy(self) -> ast.Strategy:
        return self.plan.strategy

    @property
    def output(self) -> ast.OutputFormat:
        return self.plan.output

    @property
    def window(self) -> float | None:
        """The WITHIN size as written: in seconds when it has a unit, else in timestamp
        units (seconds when timestamps are datetimes)."""
        return self.plan.window

    def window_size(self, datetime: bool) -> float | None:
        """The WITHIN size in internal time units for a datetime (microseconds) or a
        numeric time column; EventError for a window with a unit over numeric times
        without ``time_unit``."""
        return window_size(self.plan, "datetime" if datetime else "number", self.config.time_unit)

    def check_columns(self, events: Any) -> None:
        """EventError when a typed input lacks a column the query reads (see
        :meth:`run_detailed`); nothing for other input."""
        check_columns([self.plan], events, self.fields)

    @property
    def partition_attributes(self) -> tuple[str, ...]:
        """The partition's attribute names (its equivalence tests over every positive
        variable, docs/semantics.md "Partitions"); () when the query has none."""
        key = self.plan.partition
        return () if key is None else key.names

    @property
    def variables(self) -> tuple[str, ...]:
        """The positive variables, in pattern order."""
        return self.plan.positive_vars

    @property
    def kleene_variables(self) -> frozenset[str]:
        return self.plan.kleene_vars

    @property
    def return_names(self) -> tuple[str, ...]:
        return self.plan.return_names

    @property
    def fields(self) -> EventFields:
        return self.config.fields

    # --- evaluation -----------------------------------------------------------------

    def matcher(
        self,
        *,
        state: bytes | None = None,
        on_matches: Callable[[list[Result]], object] | None = None,
    ) -> Matcher:
        """A push-based matcher; ``state`` resumes from :meth:`Matcher.snapshot`.
        ``on_matches``, when given, receives the matches in chunks as they are found
        (``push``, ``advance_to`` and ``flush`` then return none), so an exploding
        result is consumed in bounded memory; on ``max_matches`` it has received every
        match before the limit when :class:`~kleene.errors.MatchLimitError` is raised."""
        return Matcher(self.plan, self.config, state, on_matches)

    def run_detailed(self, events: Any | Iterable[Any]) -> RunResult:
        """Match a whole finite input; return matches and rejected events.

        Input: a pyarrow Table or RecordBatch, a pandas DataFrame, one event as a
        mapping, or an iterable of mappings (TypeError otherwise). A typed input that
        lacks a column the query reads is an :class:`EventError` before the run; for
        mappings, an attribute no event of its type carries gives one
        :class:`SchemaWarning`."""
        events = prepare_input([self.plan], events, self.fields)
        m = self.matcher()
        matches = m.push(events)
        matches += m.flush()
        matches.sort(key=match_order)
        rejected = m.take_rejected()
        warn_gaps([self.plan], events, self.fields, rejected)
        return RunResult(matches, rejected)

    def run(self, events: Any) -> list[Match]:  # type: ignore[override]  # collapsed: run_collapsed
        """All matches over a finite input, ordered by last event, then first event.
        Rejected events are counted in a :class:`RejectedEventsWarning`;
        :meth:`run_detailed` returns them with their reasons."""
        if self.output is ast.OutputFormat.COLLAPSED:
            raise QueryError("this query returns collapsed matches: use run_collapsed()")
        result = self.run_detailed(events)
        warn_rejected(result)
        return result.matches

    def run_collapsed(self, events: Any) -> list[CollapsedMatch]:
        """The intermediate matches of postponed evaluation (``output="collapsed"``);
        ``expand()`` on each gives its matches."""
        if self.output is not ast.OutputFormat.COLLAPSED:
            raise QueryError("run_collapsed() needs output='collapsed'")
        events = prepare_input([self.plan], events, self.fields)
        m = self.matcher()
        found = [*m.push(events), *m.flush()]
        rejected = m.take_rejected()
        warn_gaps([self.plan], events, self.fields, rejected)
        warn_rejected(RunResult([], rejected))
        return found  # type: ignore[return-value]

    def explain(self) -> str:
        """The compiled automaton with its edge formulas, as text."""
        return f"engine: {self.config.engine} ({self.engine_reason})\n" + explain_plan(self.plan)

    def __repr__(self) -> str:
        return f"kleene.compile({self.text!r})"


_OUTPUT_COLLAPSED = re.compile(r"\bOUTPUT\s+COLLAPSED\b", re.IGNORECASE)


def _offset(text: str, span: ast.Span) -> int:
    """The character offset of a span (0 when unknown)."""
    if span.line < 1:
        return 0
    return line_starts(text)[span.line - 1] + span.column - 1


def _time_unit(unit: str | None) -> str | None:
    if unit is not None:
        try:
            time_unit_seconds(unit)
        except ValueError as exc:
            raise QueryError(str(exc)) from None
    return unit


def prepare_input(
    plans: list[Plan], events: Any, fields: EventFields, derived: frozenset[str] = frozenset()
) -> Any:
    """The input of a whole run, checked: TypeError for what is not events,
    EventError for a typed input lacking a column the plans read, and the events as a
    list (for a one-time iterable) with a SchemaWarning for attributes that no event
    of their type carries."""
    pd = sys.modules.get("pandas")
    if isinstance(events, pa.Table | pa.RecordBatch) or (
        pd is not None and isinstance(events, pd.DataFrame)
    ):
        check_columns(plans, events, fields, derived)
        return events
    if isinstance(events, Mapping):
        events = [events]
    return list(check_input(events))


def warn_gaps(
    plans: list[Plan], events: Any, fields: EventFields, rejected: list[RejectedEvent]
) -> None:
    """After a run over mappings: one SchemaWarning naming each attribute the query
    reads that no event of its type carries (looked for only when some event was
    rejected for a missing attribute)."""
    if not isinstance(events, list) or not any(
        r.reason.startswith("missing attribute") for r in rejected
    ):
        return
    gaps = schema_gaps(plans, events, fields)
    if gaps:
        warnings.warn(
            SchemaWarning(
                f"no event carries {', '.join(gaps)}, which the query reads: every such "
                "event is rejected (check the attribute names)"
            ),
            stacklevel=4,
        )


def warn_rejected(result: RunResult) -> None:
    """A RejectedEventsWarning with the count, when some events were rejected."""
    if result.rejected:
        n = len(result.rejected)
        first = result.rejected[0].reason
        warnings.warn(
            RejectedEventsWarning(
                f"{n} event{'s' if n != 1 else ''} rejected (first: {first}); "
                "run_detailed() returns each with its reason"
            ),
            stacklevel=3,
        )


def match_order(m: Result) -> tuple[Any, ...]:
    """(last position, first position, all positions in order)."""
    if isinstance(m, CollapsedMatch):
        return (m.end, m.start)
    positions = tuple(sorted(chain.from_iterable(m.positions.values())))
    return (positions[-1], positions[0], positions)
