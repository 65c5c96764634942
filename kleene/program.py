"""Programs: union and composition of queries (SIGMOD 2014, section 2.1).

A program is a query text with ``DEFINE Name AS <query> [UNION <query> ...];``
statements before the query (or union of queries) it returns. Each definition's matches
become events of type ``Name`` for the statements after it: their time is the match's
last time and their attributes are its RETURN items. The run-time side is
:mod:`kleene.runtime.composition`; the meaning is in docs/semantics.md, "Programs".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kleene.collapsed import Result
from kleene.compiler.plan import Plan
from kleene.errors import QueryError
from kleene.lang import ast, parse_program
from kleene.match import Match
from kleene.query import (
    Query,
    RunResult,
    match_order,
    prepare_input,
    warn_gaps,
    warn_rejected,
)
from kleene.runtime.composition import ProgramMatcher, Statement
from kleene.runtime.contract import CompiledQuery
from kleene.runtime.ingest import check_columns

FIXED_FIELDS = frozenset({"timestamp", "type", "id"})


class Program(CompiledQuery[Match]):
    """A compiled program. Create with :func:`kleene.compile_program`; options are those
    of :func:`kleene.compile` and apply to every query of the program."""

    kind = "program"

    #: the compile options (kleene.kinds): those of a SASE+ query but match_windows
    OPTIONS = (
        "strategy",
        "output",
        "time_field",
        "type_field",
        "id_field",
        "allowed_lateness",
        "max_runs",
        "max_matches",
        "engine",
        "time_unit",
    )

    def __init__(self, text: str, **options: Any) -> None:
        if options.get("allowed_lateness"):
            raise QueryError("a program takes its events in time order: allowed_lateness is 0")
        self.text = text
        self.ast = parse_program(text)
        self.definitions: dict[str, tuple[Query, ...]] = {}
        statements: list[Statement] = []
        for definition in self.ast.definitions:
            queries = self._compile(definition.body, options)
            self._check_schema(definition, queries)
            statements.append(self._statement(definition.name, queries))
            self.definitions[definition.name] = queries
        self.queries = self._compile(self.ast.body, options)
        statements.append(self._statement(None, self.queries))
        self.statements = tuple(statements)
        self.fields = self.queries[0].fields

    # --- compilation ----------------------------------------------------------------

    def _compile(self, union: ast.Union, options: dict[str, Any]) -> tuple[Query, ...]:
        queries = tuple(Query(self.text, node=q, **options) for q in union.branches)
        for q in queries:
            if q.output is ast.OutputFormat.COLLAPSED and (self.ast.single is None):
                raise self._error(
                    "a program with UNION or DEFINE cannot return collapsed output", q.ast.span
                )
            self._check_derived_references(q)
        return queries

    def _statement(self, name: str | None, queries: tuple[Query, ...]) -> Statement:
        names = list(self.definitions)
        types = {c.event_type for q in queries for c in q.ast.pattern.components}
        uses = tuple(k for k, n in enumerate(names) if n in types)
        return Statement(name, tuple((q.plan, q.config) for q in queries), uses)

    def _check_derived_references(self, q: Query) -> None:
        """A variable of a defined type may read only the definition's RETURN names."""
        for c in q.ast.pattern.components:
            defined = self.definitions.get(c.event_type)
            if defined is None:
                continue
            names = set(defined[0].return_names) | FIXED_FIELDS
            refs: list[ast.AttrRef | ast.Aggregate] = []
            refs += [r for r in q.ast.find(ast.AttrRef) if r.var == c.var]
            refs += [a for a in q.ast.find(ast.Aggregate) if a.var == c.var and a.attr]
            for ref in refs:
                if ref.attr is not None and ref.attr not in names:
                    raise self._error(
                        f"{c.event_type} events carry {', '.join(sorted(names))}, not "
                        f"'{ref.attr}' (a defined event has its definition's RETURN items)",
                        ref.span,
                    )

    def _check_schema(self, definition: ast.Definition, queries: tuple[Query, ...]) -> None:
        first = queries[0].return_names
        for q in queries[1:]:
            if q.return_names != first:
                raise self._error(
                    f"every query of {definition.name} must RETURN the same names "
                    f"({', '.join(first) or 'none'}), since they make one event type",
                    q.ast.span,
                )

    def _error(self, message: str, span: ast.Span) -> QueryError:
        return QueryError(message, line=span.line, column=span.column, text=self.text)

    # --- evaluation -----------------------------------------------------------------

    @property
    def variables(self) -> tuple[str, ...]:
        """The variables of the returned queries' matches, in pattern order (a UNION's
        branches in turn)."""
        return tuple(dict.fromkeys(v for q in self.queries for v in q.variables))

    def matcher(
        self,
        *,
        state: bytes | None = None,
        on_matches: Callable[[list[Match]], object] | None = None,
    ) -> ProgramMatcher:
        """A push-based matcher over the raw stream; ``state`` resumes a snapshot;
        ``on_matches`` receives the matches as they are found (see Query.matcher)."""
        return ProgramMatcher(self.statements, self.fields, state, on_matches)

    def _plans(self) -> list[Plan]:
        return [q.plan for qs in [*self.definitions.values(), self.queries] for q in qs]

    def check_columns(self, events: Any) -> None:
        """EventError when a typed input lacks a column a query reads."""
        check_columns(self._plans(), events, self.fields, frozenset(self.definitions))

    def run_detailed(self, events: Any | Iterable[Any]) -> RunResult:
        """Matches and rejected events over a finite input (see Query.run_detailed)."""
        plans = self._plans()
        events = prepare_input(plans, events, self.fields, frozenset(self.definitions))
        m = self.matcher()
        matches: list[Result] = [*m.push(events), *m.flush()]
        matches.sort(key=match_order)
        rejected = m.take_rejected()
        warn_gaps(plans, events, self.fields, rejected)
        return RunResult(matches, rejected)

    def run(self, events: Any) -> list[Match]:
        """All matches of the program's last statement over a finite input; rejected
        events are counted in a RejectedEventsWarning."""
        result = self.run_detailed(events)
        warn_rejected(result)
        return [m for m in result.matches if isinstance(m, Match)]

    def explain(self) -> str:
        parts = []
        for name, queries in [*self.definitions.items(), (None, self.queries)]:
            head = f"DEFINE {name}" if name else "RETURNED"
            for k, q in enumerate(queries):
                label = head if k == 0 else "UNION"
                parts.append(f"== {label} ==\n{q.explain()}")
        return "\n".join(parts)

    def __repr__(self) -> str:
        return f"kleene.compile_program({self.text!r})"


def compile_program(text: str, **options: Any) -> Program:
    """Compile a program: DEFINE statements and a query or a UNION of queries (a single
    query is a program too). Raises QuerySyntaxError / QueryError."""
    return Program(text, **options)
