"""The compiled query: the user-facing object tying front end, plan and runtime."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from kleene.collapsed import CollapsedMatch, Result
from kleene.compiler import build_plan
from kleene.compiler.explain import explain_plan
from kleene.compiler.plan import Plan
from kleene.errors import QueryError
from kleene.events import EventFields
from kleene.lang import ast, parse, validate
from kleene.match import Match, RejectedEvent
from kleene.runtime.choice import choose_engine
from kleene.runtime.matcher import Matcher, MatcherConfig

DEFAULT_MAX_RUNS = 1_000_000


@dataclass(frozen=True)
class RunResult:
    """Everything one batch run produced."""

    matches: list[Result]
    rejected: list[RejectedEvent] = field(default_factory=list)


def _option(enum: Any, value: Any, name: str) -> Any:
    if value is None or isinstance(value, enum):
        return value
    try:
        return enum.parse(str(value))
    except ValueError:
        choices = ", ".join(m.value for m in enum)
        raise QueryError(f"unknown {name} {value!r}; expected one of: {choices}") from None


class Query:
    """A compiled pattern query. Create with :func:`kleene.compile`."""

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
        engine: str = "auto",
        node: ast.Query | None = None,
    ) -> None:
        if allowed_lateness < 0:
            raise ValueError("allowed_lateness must be >= 0")
        if max_runs < 1:
            raise ValueError("max_runs must be >= 1")
        self.text = text
        self.ast = node if node is not None else parse(text)  # node: one query of a program
        validate(self.ast, text)
        self.plan: Plan = build_plan(
            self.ast,
            text,
            strategy=_option(ast.Strategy, strategy, "strategy"),
            output=_option(ast.OutputFormat, output, "output format"),
        )
        self.config = MatcherConfig(
            fields=EventFields(type_field, time_field, id_field),
            allowed_lateness=allowed_lateness,
            max_runs=max_runs,
            engine=choose_engine(self.plan, engine)[0],
        )
        self.engine_reason = choose_engine(self.plan, engine)[1]

    # --- facts about the query ----------------------------------------------------

    @property
    def strategy(self) -> ast.Strategy:
        return self.plan.strategy

    @property
    def output(self) -> ast.OutputFormat:
        return self.plan.output

    @property
    def window(self) -> float | None:
        """The WITHIN size in timestamp units (seconds when timestamps are datetimes)."""
        return self.plan.window

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

    def matcher(self, state: bytes | None = None) -> Matcher:
        """A push-based matcher; ``state`` resumes from :meth:`Matcher.snapshot`."""
        return Matcher(self.plan, self.config, state)

    def run_detailed(self, events: Any | Iterable[Any]) -> RunResult:
        """Match a whole finite input; return matches and rejected events."""
        m = self.matcher()
        matches = m.push(events)
        matches += m.flush()
        matches.sort(key=_match_order)
        return RunResult(matches, m.take_rejected())

    def run(self, events: Any) -> list[Match]:
        """All matches over a finite input, ordered by last event, then first event."""
        if self.output is ast.OutputFormat.COLLAPSED:
            raise QueryError("this query returns collapsed matches: use run_collapsed()")
        return self.run_detailed(events).matches  # type: ignore[return-value]

    def run_collapsed(self, events: Any) -> list[CollapsedMatch]:
        """The intermediate matches of postponed evaluation (``output="collapsed"``);
        ``expand()`` on each gives its matches."""
        if self.output is not ast.OutputFormat.COLLAPSED:
            raise QueryError("run_collapsed() needs output='collapsed'")
        m = self.matcher()
        found = [*m.push(events), *m.flush()]
        return found  # type: ignore[return-value]

    def explain(self) -> str:
        """The compiled automaton with its edge formulas, as text."""
        return f"engine: {self.config.engine} ({self.engine_reason})\n" + explain_plan(self.plan)

    def __repr__(self) -> str:
        return f"kleene.compile({self.text!r})"


def _match_order(m: Result) -> tuple[Any, ...]:
    """(last position, first position, all positions in order)."""
    if isinstance(m, CollapsedMatch):
        return (m.end, m.start)
    positions = tuple(sorted(chain.from_iterable(m.positions.values())))
    return (positions[-1], positions[0], positions)


def compile(text: str, **options: Any) -> Query:
    """Compile a query. Options: strategy, output, time_field, type_field, id_field,
    allowed_lateness, max_runs, engine ("auto", "nfa", "merge", "postpone").
    Raises QuerySyntaxError / QueryError."""
    return Query(text, **options)
