"""``parse(text) -> Query``: the LALR(1) parser of the SASE+ query language.

The grammar (``grammar.lark``) follows SIGMOD 2008, section 2 and Figure 1, plus the
flat WHERE form of the SASE query files and the SIGMOD 2014 (section 2.1, Table 1)
spellings. Lark failures become :class:`~kleene.errors.QuerySyntaxError` in plain words.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from lark import Lark, Tree
from lark.exceptions import UnexpectedInput, VisitError

from kleene.errors import QueryError, QuerySyntaxError
from kleene.lang import ast
from kleene.lang._limits import check_limits
from kleene.lang._syntax_errors import syntax_error
from kleene.lang._transform import AstBuilder


def lalr(grammar: str, **options: Any) -> Lark:
    """An LALR(1) parser with the contextual lexer and node positions: how kleene reads
    each of its query languages."""
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=True,
        **options,
    )


@cache
def _lark() -> Lark:
    grammar = resources.files("kleene.lang").joinpath("grammar.lark").read_text("utf-8")
    # cache: the grammar analysis, in the temp folder, keyed by grammar and version
    return lalr(grammar, cache=True)


def parse_tree(text: str) -> Tree:
    """The lark parse tree of ``text`` (for debugging and ``kleene explain``)."""
    try:
        return _lark().parse(text)
    except UnexpectedInput as error:
        raise syntax_error(error, text) from None


def _build(text: str) -> ast.Program | ast.SesQuery:
    tree = parse_tree(text)
    check_limits(tree, text)
    try:
        node = AstBuilder(text).transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, QueryError):
            raise error.orig_exc from None
        raise
    assert isinstance(node, ast.Program | ast.SesQuery)
    return node


def parse_program(text: str) -> ast.Program:
    """Parses a program (DEFINE statements, UNION of queries, or one query) into its AST;
    raises QuerySyntaxError with line and column."""
    program = _build(text)
    if isinstance(program, ast.SesQuery):
        raise QuerySyntaxError(
            "this text is an event-set pattern SEQ({...}): compile it with kleene.compile()",
            line=program.span.line,
            column=program.span.column,
            text=text,
        )
    return program


def parse_ses(text: str) -> ast.SesQuery:
    """Parses an event-set (SES) query, ``PATTERN SEQ({C c, P+ p}, B b) WHERE ...
    WITHIN ...``; QuerySyntaxError for any other text."""
    node = _build(text)
    if not isinstance(node, ast.SesQuery):
        raise QuerySyntaxError(
            "this text is not an event-set pattern: write PATTERN SEQ({T1 v1, T2+ v2}, ...)",
            line=1,
            column=1,
            text=text,
        )
    return node


def parse(text: str) -> ast.Query:
    """Parses one query into its AST; raises QuerySyntaxError with line and column, also
    for a text with UNION or DEFINE (read those with :func:`parse_program`)."""
    program = parse_program(text)
    query = program.single
    if query is None:
        where = program.definitions[0].span if program.definitions else program.body.span
        if not program.definitions:
            where = program.body.branches[1].span
        raise QuerySyntaxError(
            "this text is a program with UNION or DEFINE, not one query: compile it with "
            "kleene.compile_program()",
            line=where.line,
            column=where.column,
            text=text,
        )
    return query
