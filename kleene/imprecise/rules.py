"""The front-end rules of queries over interval events: what VLDB 2010 defines, checked
on the AST with the line and column of the offending clause.

Supported: SEQ patterns of single variables, WHERE predicates (equivalence tests
included), WITHIN, RETURN, CONFIDENCE, under skip till any match or skip till next
match (section 2.1), and Kleene closure under skip till any match (SASE++ section 4,
:mod:`kleene.imprecise.kleene_dp`). Not (yet): Kleene closure under skip till next
match, negation and the contiguity strategies (the paper does not define them), the
output formats other than all, and references to ``timestamp``: an interval event has
no single time, only its interval.
"""

from __future__ import annotations

from typing import NoReturn

from kleene.errors import QueryError
from kleene.lang import ast

STRATEGIES = (ast.Strategy.SKIP_TILL_ANY_MATCH, ast.Strategy.SKIP_TILL_NEXT_MATCH)


def _fail(message: str, span: ast.Span, text: str) -> NoReturn:
    known = span.line > 0
    raise QueryError(
        message,
        line=span.line if known else None,
        column=span.column if known else None,
        text=text,
    )


def check_interval_query(
    query: ast.Query, text: str, strategy: ast.Strategy, output: ast.OutputFormat
) -> None:
    """QueryError at the first construct interval events do not support."""
    for c in query.pattern.components:
        if c.negated:
            _fail(
                f"negation ({c.var}) is not supported over interval events yet: remove "
                "the negated component and filter the results, or run the query over "
                "point events (--time point)",
                c.span,
                text,
            )
        if c.kleene and strategy is not ast.Strategy.SKIP_TILL_ANY_MATCH:
            _fail(
                f"Kleene closure ({c.var}) over interval events is evaluated under "
                "skip_till_any_match only (SASE++ section 4 and Appendix A): write the "
                "query with skip_till_any_match",
                c.span,
                text,
            )
    if strategy not in STRATEGIES:
        _fail(
            f"{strategy.value} is not defined over interval events: use "
            "skip_till_any_match or skip_till_next_match (VLDB 2010, section 2.1)",
            _where_span(query),
            text,
        )
    if output is not ast.OutputFormat.ALL:
        _fail(
            f"OUTPUT {output.value} is not defined over interval events: each result is "
            "a signature with its time range and confidence",
            query.span,
            text,
        )
    clauses = [*query.where, *(item.expr for item in query.returns)]
    for clause in clauses:
        for node in clause.walk():
            if isinstance(node, ast.AttrRef) and node.attr == "timestamp":
                _fail(
                    f"{node.var}.timestamp: an interval event has no single time (use "
                    "WITHIN for time constraints)",
                    node.span,
                    text,
                )


def _where_span(query: ast.Query) -> ast.Span:
    return query.where[0].span if query.where else query.span
