"""A compiled query over events with uncertainty intervals: ``kleene.compile(text,
time="interval", ...)`` (VLDB 2010).

The query text is the SASE+ language with an optional ``CONFIDENCE > x`` clause; it
compiles to the same plan as a point-event query (kleene.compiler), checked by the
rules of :mod:`kleene.imprecise.rules`. Events are admitted by
:mod:`kleene.imprecise.admission` and matched by the point-based or the event-based
framework (:mod:`kleene.imprecise.choice`). It is the kind "interval" of the registry
(:mod:`kleene.kinds`), on the one contract of compiled queries
(:class:`kleene.runtime.contract.CompiledQuery`).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any, ClassVar

from kleene.compiler import build_plan
from kleene.compiler.explain import explain_plan
from kleene.compiler.plan import Plan
from kleene.errors import EventError, QueryError
from kleene.events import EventFields
from kleene.imprecise.choice import ENGINES, METHOD_OPTIONS, Choice, choose
from kleene.imprecise.matcher import IntervalMatcher
from kleene.imprecise.model import IntervalFields, Probability
from kleene.imprecise.result import ImpreciseMatch, result_order
from kleene.imprecise.rules import check_interval_query
from kleene.imprecise.state import fingerprint
from kleene.lang import ast, parse, validate
from kleene.runtime.contract import CompiledQuery, OnMatches
from kleene.runtime.ingest import check_columns, window_size
from kleene.runtime.limits import DEFAULT_MAX_MATCHES, DEFAULT_MAX_RUNS
from kleene.times import time_unit_seconds
from kleene.vocabulary import option


class IntervalQuery(CompiledQuery[ImpreciseMatch]):
    """A pattern query over interval events. Create with ``kleene.compile(text,
    time="interval", ...)``; the options are those of point queries (strategy, output,
    type_field, time_field, id_field, time_unit, engine) and

    * ``lower_field``/``upper_field``: the interval's columns (default lower, upper), or
      ``uncertainty``: d or (before, after), the interval [t - before, t + after]
      around the time column;
    * ``pmf_field``: a column holding one probability per point (default pmf; uniform
      where absent);
    * ``u_max``: the largest ``upper - lower`` the source promises (longer intervals
      are rejected); measured over the input when not given;
    * ``confidence``: keep results with confidence above it (replaces the query's
      CONFIDENCE clause);
    * ``exact``: uniform probabilities as fractions;
    * ``engine``: "points" (the point-based framework), "events" (the event-based
      framework) or "auto" (kleene.imprecise.choice; :meth:`explain` says which, why);
    * ``method``: the event-based framework's method, "query" (sorting for query
      order), "any" (any state), "selectivity" (selectivity order) or "auto"; a method
      other than "auto" implies ``engine="events"``;
    * ``max_matches``: the results one matcher may report, counted as the frameworks
      produce them (MatchLimitError past it, after the results before it are handed
      out; None for no limit);
    * ``max_runs``: the partial state a framework may hold: runs, point matches and
      signatures waiting for their confidence, partial signatures of Kleene closure
      (:mod:`kleene.imprecise.budget`; RunLimitError past it).
    """

    kind: ClassVar[str] = "interval"

    def __init__(
        self,
        text: str,
        *,
        strategy: ast.Strategy | str | None = None,
        output: ast.OutputFormat | str | None = None,
        time_field: str = "timestamp",
        type_field: str = "type",
        id_field: str = "id",
        time_unit: str | None = None,
        engine: str = "auto",
        method: str = "auto",
        lower_field: str = "lower",
        upper_field: str = "upper",
        uncertainty: int | tuple[int, int] | None = None,
        pmf_field: str = "pmf",
        u_max: int | None = None,
        confidence: float | None = None,
        exact: bool = False,
        max_matches: int | None = DEFAULT_MAX_MATCHES,
        max_runs: int = DEFAULT_MAX_RUNS,
    ) -> None:
        self.text = text
        self.max_matches = _limit(max_matches, "max_matches", 0, none=True)
        self.max_runs = _limit(max_runs, "max_runs", 1, none=False)
        # the options as given (kleene.spark ships the text and these to its workers)
        self.options: dict[str, Any] = {
            "time": "interval",
            **dict(strategy=strategy, output=output, time_field=time_field),
            **dict(type_field=type_field, id_field=id_field, time_unit=time_unit),
            **dict(engine=engine, lower_field=lower_field, upper_field=upper_field),
            **dict(uncertainty=_hashable(uncertainty), pmf_field=pmf_field, u_max=u_max),
            **dict(confidence=confidence, exact=exact),
            **dict(max_matches=max_matches, max_runs=max_runs),
        }
        self.ast = parse(text)
        validate(self.ast, text, interval=True)
        self.plan: Plan = build_plan(
            self.ast,
            text,
            strategy=option(ast.Strategy, strategy, "strategy"),
            output=option(ast.OutputFormat, output, "output format"),
        )
        check_interval_query(self.ast, text, self.plan.strategy, self.plan.output)
        if engine not in ENGINES:
            raise QueryError(
                f"unknown engine {engine!r} for interval events; expected one of: "
                + ", ".join(ENGINES)
            )
        if method not in METHOD_OPTIONS:
            raise QueryError(
                f"unknown method {method!r} for the event-based framework; expected one of: "
                + ", ".join(METHOD_OPTIONS)
            )
        self.engine_option = engine
        self.method_option = method
        self.fields = EventFields(type_field, time_field, id_field)
        self.interval = IntervalFields(
            lower_field, upper_field, _margins(uncertainty), pmf_field, _u_max(u_max), exact
        )
        self.window = _window(self.plan, time_unit)
        self.keep = _threshold(self.ast.confidence, confidence)
        spec = self.interval
        self.fingerprint = fingerprint(
            [
                *(self.plan.canonical, self.plan.strategy.value, self.plan.output.value),
                *(repr(self.window), engine, method, [type_field, time_field, id_field]),
                *(lower_field, upper_field, spec.margins, pmf_field, spec.u_max, exact),
                None if confidence is None else repr(confidence),
            ]
        )

    @property
    def strategy(self) -> ast.Strategy:
        return self.plan.strategy

    @property
    def variables(self) -> tuple[str, ...]:
        return self.plan.positive_vars

    @property
    def return_names(self) -> tuple[str, ...]:
        return self.plan.return_names

    @property
    def partition_attributes(self) -> tuple[str, ...]:
        """The partition's attribute names (its equivalence tests over every positive
        variable, docs/semantics.md "Partitions"); () when the query has none or its
        runs are not routed by it (then every result's ``partition`` is ())."""
        key = self.plan.partition
        return () if key is None or not self.plan.partition_width else key.names

    def matcher(
        self, *, state: bytes | None = None, on_matches: OnMatches | None = None
    ) -> IntervalMatcher:
        """A push-based matcher (:class:`kleene.runtime.contract.StreamMatcher`: push,
        advance_to, flush, take_rejected, snapshot); ``state``, the bytes of
        ``snapshot()`` of a matcher of this query with the same options, resumes that
        matcher (SnapshotError when they do not fit); ``on_matches``, when given,
        receives the results in chunks as they become final (the calls then return
        none)."""
        return IntervalMatcher(
            self.plan,
            self.fields,
            self.interval,
            self.engine_option,
            self.window,
            self.keep,
            fingerprint=self.fingerprint,
            state=state,
            on_matches=on_matches,
            method=self.method_option,
            max_matches=self.max_matches,
            max_runs=self.max_runs,
        )

    def check_columns(self, events: Any) -> None:
        """EventError when a typed input lacks the type column, the interval's first
        column (``lower_field``, or the time column with ``uncertainty``) or a column
        the query reads."""
        check_columns([self.plan], events, self.column_fields())

    def column_fields(self) -> EventFields:
        """The fields an input must have: the type, the interval's first column (as the
        time field) and the id."""
        spec = self.interval
        first = spec.lower_field if spec.margins is None else self.fields.time_field
        return EventFields(self.fields.type_field, first, self.fields.id_field)

    def ordered(self, matches: list[ImpreciseMatch]) -> list[ImpreciseMatch]:
        """The results of a whole run (:meth:`run`, :meth:`run_detailed`; U_max is
        measured over the input unless declared), ordered by their last event's
        arrival, then their first's."""
        return sorted(matches, key=result_order)

    @property
    def engine(self) -> str:
        """The framework chosen before any input: "points" or "events" (with
        ``engine="auto"`` and U_max not declared, a measured U_max of 0 picks points)."""
        return self.choice().engine

    def choice(self) -> Choice:
        """The framework and method for this query, and why (kleene.imprecise.choice)."""
        return choose(self.plan, self.engine_option, self.interval.u_max, self.method_option)

    def explain(self) -> str:
        """The framework, the interval model and the compiled automaton."""
        spec = self.interval
        source = (
            f"columns {spec.lower_field!r}/{spec.upper_field!r}"
            if spec.margins is None
            else f"{self.fields.time_field!r} - {spec.margins[0]} .. + {spec.margins[1]}"
        )
        lines = [
            "events: uncertainty intervals from "
            + source
            + ", U_max "
            + ("measured over the input" if spec.u_max is None else str(spec.u_max)),
            "engine: " + self.choice().describe(),
        ]
        return "\n".join(lines) + "\n" + explain_plan(self.plan)

    def __repr__(self) -> str:
        return f"kleene.compile({self.text!r}, time='interval')"


def _limit(value: Any, name: str, least: int, *, none: bool) -> Any:
    if value is None and none:
        return None
    if not _whole(value) or value < least:
        also = " (or None for no limit)" if none else ""
        raise QueryError(f"{name} must be a whole number >= {least}{also}, not {value!r}")
    return value


def _margins(uncertainty: Any) -> int | tuple[int, int] | None:
    if uncertainty is None:
        return None
    pair = uncertainty if isinstance(uncertainty, tuple | list) else (uncertainty, uncertainty)
    if len(pair) != 2 or not all(_whole(v) and v >= 0 for v in pair):
        raise QueryError(
            f"uncertainty must be a whole number d >= 0 or a pair (before, after) of them, "
            f"not {uncertainty!r}"
        )
    return (int(pair[0]), int(pair[1]))


def _u_max(u_max: Any) -> int | None:
    if u_max is not None and not (_whole(u_max) and u_max >= 0):
        raise QueryError(f"u_max must be a whole number >= 0, not {u_max!r}")
    return None if u_max is None else int(u_max)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _window(plan: Plan, time_unit: str | None) -> float | None:
    if time_unit is not None:
        try:
            time_unit_seconds(time_unit)
        except ValueError as exc:
            raise QueryError(str(exc)) from None
    try:
        return window_size(plan, "number", time_unit)
    except EventError as exc:
        raise QueryError(str(exc)) from None


def _threshold(
    clause: ast.Confidence | None, option: float | None
) -> Callable[[Probability], bool]:
    if option is not None:
        if isinstance(option, bool) or not isinstance(option, int | float | Fraction):
            raise QueryError(f"confidence must be a number between 0 and 1, not {option!r}")
        if not 0 <= option <= 1:
            raise QueryError(f"confidence must lie between 0 and 1, not {option!r}")
        return lambda c: c > option
    if clause is None:
        return lambda c: True
    threshold = clause.threshold
    if clause.op == ">=":
        return lambda c: c >= threshold
    return lambda c: c > threshold


def _hashable(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value
