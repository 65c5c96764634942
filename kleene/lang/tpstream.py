"""``parse(text) -> TemporalQueryText``: the parser of the TPStream query language.

The grammar (``tpstream.lark`` beside this module) follows EDBT 2018, section 3 and
Listing 1. Its expressions (DEFINE predicates, RETURN items) are the SASE+ grammar's,
imported from ``grammar.lark`` (also beside it) and built into the same AST nodes by
the same builder, so a predicate means exactly what a WHERE condition means. Parse
failures are :class:`~kleene.errors.QuerySyntaxError` with line, column and caret, in
the words of :mod:`kleene.lang._syntax_errors`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from lark import Lark, Token, Tree, v_args
from lark.exceptions import UnexpectedInput, VisitError
from lark.tree import Meta

from kleene.errors import QueryError
from kleene.lang import ast
from kleene.lang._limits import check_limits
from kleene.lang._parser import lalr
from kleene.lang._syntax_errors import syntax_error
from kleene.lang._transform import AstBuilder

_IMPORTED = "grammar__"  # lark's prefix for the imported SASE+ rules

#: How the parser's own terminals read in a syntax error.
WORDS = {
    "FROM": "FROM",
    "PARTITION": "PARTITION BY",
    "BY": "BY",
    "DEFINE": "DEFINE",
    "AT": "AT LEAST or AT MOST",
    "LEAST": "LEAST",
    "MOST": "MOST",
    "BETWEEN": "BETWEEN",
    "RELATION": "a relation such as meets, overlaps or during",
    "SEMICOLON": "';'",
}


@dataclass(frozen=True)
class Summary(ast.AttrRef):
    """An aggregate over a situation in RETURN: ``func(var.attr)``; ``attr`` is "" for
    ``count(B)``, ``start(B)``, ``end(B)`` and ``duration(B)``."""

    func: str = ""


@dataclass(frozen=True)
class Duration(ast.Node):
    """A length of time as written: ``amount`` in seconds with a unit, else in
    timestamp units."""

    amount: int | float
    unit: ast.TimeUnit | None = None

    @property
    def seconds(self) -> bool:
        return self.unit is not None

    @property
    def value(self) -> int | float:
        return self.amount if self.unit is None else self.amount * self.unit.value


@dataclass(frozen=True)
class SituationDefinition(ast.Node):
    """``DEFINE symbol AS predicate [AT LEAST d | AT MOST d | BETWEEN d AND d]``."""

    symbol: str
    predicate: ast.Expr
    minimum: Duration | None = None
    maximum: Duration | None = None


@dataclass(frozen=True)
class RelationText(ast.Node):
    """``left relation right`` as written; ``name_span`` is where the relation is."""

    left: str
    name: str
    right: str
    name_span: ast.Span = field(default_factory=ast.Span.unknown)


@dataclass(frozen=True)
class ReturnText(ast.Node):
    expr: ast.Expr
    name: str


@dataclass(frozen=True)
class TemporalQueryText:
    """A parsed TPStream query, before validation."""

    stream: str
    alias: str | None
    partition: tuple[tuple[str, ast.Span], ...]
    definitions: tuple[SituationDefinition, ...]
    constraints: tuple[tuple[RelationText, ...], ...]
    within: Duration
    returns: tuple[ReturnText, ...]
    text: str


@cache
def _lark() -> Lark:
    here = resources.files("kleene.lang")
    return lalr(here.joinpath("tpstream.lark").read_text("utf-8"), import_paths=[str(here)])


def _strip_prefixes(tree: Tree) -> None:
    """The imported rules under their own names, as the SASE+ builder knows them."""
    for node in tree.iter_subtrees():
        if isinstance(node.data, str) and node.data.startswith(_IMPORTED):
            node.data = node.data[len(_IMPORTED) :]


def parse(text: str) -> TemporalQueryText:
    """Parses a TPStream query; QuerySyntaxError with line and column on failure."""
    try:
        tree = _lark().parse(text)
    except UnexpectedInput as error:
        raise syntax_error(error, text, WORDS) from None
    _strip_prefixes(tree)
    check_limits(tree, text)
    try:
        result = _Builder(text).transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, QueryError):
            raise error.orig_exc from None
        raise
    assert isinstance(result, TemporalQueryText)
    return result


@v_args(meta=True)
class _Builder(AstBuilder):
    """The TPStream clauses; expressions are built by :class:`AstBuilder`."""

    def start(self, meta: Meta, children: list[Any]) -> TemporalQueryText:  # type: ignore[override]
        (stream, alias, partition), definitions, constraints, within, returns = children
        return TemporalQueryText(
            stream=stream,
            alias=alias,
            partition=partition,
            definitions=definitions,
            constraints=constraints,
            within=within,
            returns=returns or (),
            text=self._text,
        )

    def from_clause(self, meta: Meta, children: list[Any]) -> tuple[Any, ...]:
        stream, alias = str(children[1]), children[2]
        partition = tuple(c for c in children[4:] if isinstance(c, tuple))
        return stream, None if alias is None else str(alias), partition

    def attribute(self, meta: Meta, children: list[Token | None]) -> tuple[str, ast.Span]:
        first, second = children
        return (str(first) if second is None else f"{first}.{second}"), self._span(meta)

    def define_clause(self, meta: Meta, children: list[Any]) -> tuple[SituationDefinition, ...]:
        return tuple(c for c in children if isinstance(c, SituationDefinition))

    def definition(self, meta: Meta, children: list[Any]) -> SituationDefinition:  # type: ignore[override]
        symbol, _, predicate, bounds = children
        low, high = bounds if bounds is not None else (None, None)
        name = self._variable(symbol)
        return SituationDefinition(name, predicate, low, high, span=self._tspan(symbol))

    def at_least(self, meta: Meta, children: list[Any]) -> tuple[Any, ...]:
        return children[2], None

    def at_most(self, meta: Meta, children: list[Any]) -> tuple[Any, ...]:
        return None, children[2]

    def between(self, meta: Meta, children: list[Any]) -> tuple[Any, ...]:
        return children[1], children[3]

    def duration(self, meta: Meta, children: list[Any]) -> Duration:
        return self._duration(meta, *children)

    def _duration(self, meta: Meta, number: Token, unit: Token | None) -> Duration:
        """A NUMBER [UNIT] read as the SASE+ WITHIN reads it."""
        window = AstBuilder.within_clause(self, meta, [None, None, number, unit])[2]["within"]
        return Duration(window.amount, window.unit, span=self._span(meta))

    def pattern_clause(self, meta: Meta, children: list[Any]) -> tuple[Any, ...]:
        return tuple(c for c in children if isinstance(c, tuple))

    def constraint(self, meta: Meta, children: list[Any]) -> tuple[RelationText, ...]:
        return tuple(children)

    def relation(self, meta: Meta, children: list[Token]) -> RelationText:
        left, name, right = children
        return RelationText(
            str(left),
            str(name),
            str(right),
            self._tspan(name),
            span=self._span(meta),
        )

    def within_clause(self, meta: Meta, children: list[Any]) -> Any:
        return self._duration(meta, children[1], children[2])

    def return_clause(self, meta: Meta, children: list[Any]) -> tuple[ReturnText, ...]:  # type: ignore[override]
        return tuple(children[1:])

    def return_item(self, meta: Meta, children: list[Any]) -> ReturnText:  # type: ignore[override]
        expr, _, alias = children
        if alias is not None:
            name = str(alias)
        else:
            name = " ".join(self._text[meta.start_pos : meta.end_pos].split())
        return ReturnText(expr, name, span=self._span(meta))

    def summary(self, meta: Meta, children: list[Any]) -> ast.Expr:
        func, symbol, attr = children
        name = func[0].value if isinstance(func, tuple) else str(func).lower()
        return Summary(
            str(symbol), "" if attr is None else str(attr), func=name, span=self._span(meta)
        )
