"""The compiled SES query: ``kleene.compile(text)`` for an event-set pattern.

``PATTERN SEQ({C c, P+ p}, B b) WHERE ... WITHIN 15 days`` (match-window paper,
section 3). Its output is every match of Definition 2 (``output="all"``) or the earliest,
the maximal, or the earliest and maximal ones (docs/semantics.md, "Event-set
patterns"). Evaluation: the two-phase strategy of section 4 (:mod:`kleene.eventsets.
twophase`: match windows with filtering, partitioning and the necessary match conditions,
each optional) in front of a matching algorithm A, the automaton
(:mod:`kleene.eventsets.automaton`) or the join tree (:mod:`kleene.eventsets.jointree`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache, partial
from typing import Any

from kleene.errors import EventError, KleeneError, QueryError
from kleene.events import EventFields
from kleene.eventsets.admission import requirements
from kleene.eventsets.automaton import AutomatonMatcher
from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.jointree import JoinTreeMatcher
from kleene.eventsets.matcher import SesMatcher
from kleene.eventsets.model import Constraint, ConstraintForm, SesPattern
from kleene.eventsets.partitioning import partition_attributes
from kleene.eventsets.selection import OUTPUTS, check_output
from kleene.eventsets.stream import Algorithm, Pipeline, PlainWindows
from kleene.eventsets.twophase import Flags, TwoPhase
from kleene.lang import parse_ses
from kleene.match import Match, RunResult
from kleene.runtime import snapshot
from kleene.runtime.contract import CompiledQuery, OnMatches
from kleene.runtime.limits import DEFAULT_MAX_MATCHES, DEFAULT_MAX_RUNS
from kleene.times import time_unit_seconds

ALGORITHMS = ("auto", "automaton", "jointree")
#: the algorithm "auto" picks, and why
AUTO_ALGORITHM = "automaton"
AUTO_REASON = (
    "chosen by algorithm='auto': it needs no estimates and gains most from the "
    "pre-processing (docs/benchmarks.md, match windows)"
)

_ALGORITHMS: dict[str, Callable[..., Algorithm]] = {
    "automaton": AutomatonMatcher,
    "jointree": JoinTreeMatcher,
}
_ALGORITHM_TEXT = {
    "automaton": "the automaton-based SES matcher, match-window paper section 5",
    "jointree": "the join-tree matcher: hash joins on equalities in a cost-based order",
}


class SesQuery(CompiledQuery[Match]):
    """A compiled SES query. Create with :func:`kleene.compile`.

    Options: ``output`` ("all", "earliest", "maximal" or "earliest-maximal"),
    ``type_field``, ``time_field``, ``id_field``, ``time_unit`` (what one unit of a
    numeric time column is; needed by a WITHIN with a unit over numeric times),
    ``max_matches`` (per matcher, None for no limit), ``max_runs`` (the live state of a
    matcher: the events one match window holds, and the partial matches algorithm A
    holds for one window), ``algorithm`` ("auto", "automaton" or "jointree": algorithm
    A) and ``preprocessing`` (the two-phase strategy's steps as letters: "fpc" (the
    default) for filtering, partitioning and the necessary match conditions, any subset
    such as "fp" or "f", or "none" for plain match windows)."""

    kind = "eventset"

    def __init__(
        self,
        text: str,
        *,
        output: str | None = None,
        type_field: str = "type",
        time_field: str = "timestamp",
        id_field: str = "id",
        time_unit: str | None = None,
        max_matches: int | None = DEFAULT_MAX_MATCHES,
        max_runs: int = DEFAULT_MAX_RUNS,
        algorithm: str = "auto",
        preprocessing: str = "fpc",
    ) -> None:
        if max_matches is not None and (not isinstance(max_matches, int) or max_matches < 0):
            raise QueryError(
                f"max_matches must be an integer >= 0, or None for no limit, not {max_matches!r}"
            )
        if not isinstance(max_runs, int) or max_runs < 1:
            raise QueryError(f"max_runs must be an integer >= 1, not {max_runs!r}")
        if algorithm not in ALGORITHMS:
            raise QueryError(
                f"unknown algorithm {algorithm!r}; expected one of: {', '.join(ALGORITHMS)}"
            )
        try:
            self.flags = Flags.parse(preprocessing)
        except KleeneError as e:
            raise QueryError(str(e)) from None
        if time_unit is not None:
            try:
                time_unit_seconds(time_unit)
            except ValueError as e:
                raise QueryError(str(e)) from None
        self.text = text
        self.ast = parse_ses(text)
        try:  # the option wins over the OUTPUT clause
            self.output = check_output(output or self.ast.output or "all")
        except ValueError as e:
            raise QueryError(str(e)) from None
        self.fields = EventFields(type_field, time_field, id_field)
        self.time_unit = time_unit
        self.max_matches = max_matches
        self.max_runs = max_runs
        self.algorithm = AUTO_ALGORITHM if algorithm == "auto" else algorithm
        self.auto = algorithm == "auto"
        # lowering checks the constraints now; this pattern's τ is in microseconds (as
        # for datetimes): pattern_for() gives τ in a stream's units
        self.pattern: SesPattern = ses_pattern(self.ast, text, datetimes=True)
        self.needs = requirements(self.pattern)

    # --- facts about the query ----------------------------------------------------

    @property
    def variables(self) -> tuple[str, ...]:
        return tuple(v.name for v in self.pattern.variables)

    @property
    def kleene_variables(self) -> frozenset[str]:
        return frozenset(v.name for v in self.pattern.variables if v.plus)

    @property
    def partition_attributes(self) -> tuple[str, ...]:
        """The attributes of a match's ``partition``: the pattern's partitioning
        attributes (Definition 6 of the match-window paper: the equality relationships
        relate every pair of variables on them, so all events of a match agree), in
        name order; () when there are none. Whether the two-phase strategy splits the
        stream by them (``preprocessing``) does not change them."""
        return partition_attributes(self.pattern)

    def pattern_for(self, datetimes: bool) -> SesPattern:
        """The pattern with τ in the units of a datetime or numeric time column
        (EventError for a WITHIN with a unit over numeric times without time_unit)."""
        return _pattern(self.text, self.time_unit, datetimes)

    @property
    def fingerprint(self) -> bytes:
        """What a matcher's state means: the text and every option that changes it."""
        f = self.fields
        facts: list[Any] = [self.text, self.output, f.type_field, f.time_field, f.id_field]
        facts += [self.time_unit, self.algorithm, self.flags.name]
        return snapshot.kind_fingerprint(snapshot.EVENTSET, facts)

    # --- evaluation -----------------------------------------------------------------

    def matcher(
        self, *, state: bytes | None = None, on_matches: OnMatches | None = None
    ) -> SesMatcher:
        """A push-based matcher (``push``, ``advance_to``, ``flush``, ``snapshot``);
        ``state`` resumes from :meth:`SesMatcher.snapshot`. ``on_matches``, when given,
        receives the matches in chunks as they are found (the methods then return
        none), as for :meth:`kleene.Query.matcher`."""
        return SesMatcher(
            self.pattern_for,
            self.needs,
            self.fields,
            self.pipeline,
            self.fingerprint,
            partition=self.partition_attributes,
            max_matches=self.max_matches,
            state=state,
            on_matches=on_matches,
        )

    def pipeline(self, pattern: SesPattern) -> Pipeline:
        """The match windows and the algorithm A a matcher runs: the two-phase strategy
        with the chosen pre-processing, or plain match windows for "none"."""
        make = partial(_ALGORITHMS[self.algorithm], output=self.output, max_runs=self.max_runs)
        if self.flags.name == "none":
            return PlainWindows(pattern, make(pattern), self.max_runs)
        f = self.flags
        return TwoPhase(
            pattern, make, f.filtering, f.partitioning, f.conditions, max_runs=self.max_runs
        )

    def check_columns(self, events: Any) -> None:
        """EventError when a typed input (pyarrow table, pandas DataFrame) lacks the
        type or time column; events lacking an attribute are rejected one by one."""
        columns = getattr(events, "column_names", None)
        if columns is None and hasattr(events, "columns"):
            columns = list(events.columns)
        if columns is None:
            return
        for name, option in (
            (self.fields.type_field, "type_field"),
            (self.fields.time_field, "time_field"),
        ):
            if name not in columns:
                raise EventError(
                    f"the input has no column {name!r} ({option}): name the column with {option}"
                )

    def ordered(self, matches: list[Match]) -> list[Match]:
        """A whole run's matches ordered by last event, then first event, then their
        events' positions."""
        return sorted(matches, key=lambda x: (x.last_position, x.first_position, _positions(x)))

    def run_detailed(self, events: Any) -> RunResult[Match]:
        """Match a whole finite input (a pyarrow Table or RecordBatch, a pandas
        DataFrame, one event as a mapping, or an iterable of mappings); the matches (of
        the chosen output, ordered by last event, then first event) and the rejected
        events with their reasons. :meth:`run` gives the matches alone."""
        return super().run_detailed(events)

    def explain(self) -> str:
        """The pattern, the output and how it is evaluated."""
        kind = _ALGORITHM_TEXT[self.algorithm]
        lines = [
            f"algorithm: {self.algorithm} ({kind}" + (f"; {AUTO_REASON})" if self.auto else ")"),
            f"preprocessing: {self.flags.name}",
        ]
        if self.flags.name == "none":
            lines.append("  plain match windows (Definition 3), no pre-processing")
        else:
            f = self.flags
            two_phase = TwoPhase(
                self.pattern,
                partial(_ALGORITHMS[self.algorithm]),
                f.filtering,
                f.partitioning,
                f.conditions,
            )
            # τ is the WITHIN below; the first line gives it in internal units
            lines += [f"  {line}" for line in two_phase.explain()[1:]]
        lines += [
            f"output: {self.output} (one of {', '.join(OUTPUTS)})",
            "sets:",
        ]
        for i, group in enumerate(self.pattern.sets, start=1):
            members = ", ".join(f"{v.name}+" if v.plus else v.name for v in group)
            lines.append(f"  B{i} = {{{members}}}")
        lines.append("constraints:")
        for c in self.pattern.constraints:
            lines.append(f"  {c.form.value}: {_constraint_text(c)}")
        lines.append(f"window: WITHIN {_window_text(self)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"kleene.compile({self.text!r})"


def _constraint_text(c: Constraint) -> str:
    if c.form is ConstraintForm.PROPERTY:
        value = getattr(c.comparison.right, "value", None)
        return f"{c.variables[0]}.{c.attributes[0]} {c.op} {json.dumps(value, ensure_ascii=False)}"
    if c.form is ConstraintForm.PREV:
        v, a = c.variables[0], c.attributes[0]
        return f"prev({v}.{a}) {c.op} {v}.{a}"
    (vi, vj), (a, b) = c.variables, c.attributes
    return f"{vi}.{a} {c.op} {vj}.{b}"


def _window_text(q: SesQuery) -> str:
    w = q.ast.within
    assert w is not None
    return f"{w.amount}" + ("" if w.unit is None else f" {w.unit.name.lower()}")


def _positions(m: Match) -> tuple[int, ...]:
    return tuple(sorted(p for ps in m.positions.values() for p in ps))


@lru_cache(maxsize=256)
def _pattern(text: str, time_unit: str | None, datetimes: bool) -> SesPattern:
    return ses_pattern(text, time_unit=time_unit, datetimes=datetimes)
