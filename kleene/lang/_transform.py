"""Parse tree -> AST (:mod:`kleene.lang.ast`) for the grammar in ``grammar.lark``.

The query forms are those of SIGMOD 2008, section 2 and Figure 1 (PATTERN SEQ, Kleene
``T+ v[]``, negation, the strategy function in WHERE, WITHIN, RETURN) together with the
flat WHERE form of the SASE query files and the ``b[1..i-1]`` aggregate spelling of
SIGMOD 2014, Table 1. Every node gets the span of its first character.

Checks that need the surface text, which the AST does not keep, happen here and raise
:class:`~kleene.errors.QuerySyntaxError`: index forms, ``a[b.LEN]``, aggregates without
an attribute, ``[]`` in the strategy's variable list, equivalence tests outside the top
level of WHERE, and repeated clauses.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from lark import Token, v_args
from lark.tree import Meta

from kleene.lang import ast
from kleene.lang._ses_transform import SesTransforms, ses_output

_COMPARISONS = {
    "=": ast.BinOp.EQ,
    "==": ast.BinOp.EQ,
    "!=": ast.BinOp.NE,
    "<>": ast.BinOp.NE,
    "<": ast.BinOp.LT,
    "<=": ast.BinOp.LE,
    ">": ast.BinOp.GT,
    ">=": ast.BinOp.GE,
}
_ARITHMETIC = {"*": ast.BinOp.MUL, "/": ast.BinOp.DIV, "%": ast.BinOp.MOD}
_UNITS = {
    "s": ast.TimeUnit.SECONDS,
    "sec": ast.TimeUnit.SECONDS,
    "secs": ast.TimeUnit.SECONDS,
    "second": ast.TimeUnit.SECONDS,
    "seconds": ast.TimeUnit.SECONDS,
    "min": ast.TimeUnit.MINUTES,
    "mins": ast.TimeUnit.MINUTES,
    "minute": ast.TimeUnit.MINUTES,
    "minutes": ast.TimeUnit.MINUTES,
    "h": ast.TimeUnit.HOURS,
    "hr": ast.TimeUnit.HOURS,
    "hrs": ast.TimeUnit.HOURS,
    "hour": ast.TimeUnit.HOURS,
    "hours": ast.TimeUnit.HOURS,
    "d": ast.TimeUnit.DAYS,
    "day": ast.TimeUnit.DAYS,
    "days": ast.TimeUnit.DAYS,
}
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0"}
_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)


def number_value(text: str) -> int | float:
    """The int or float a NUMBER token denotes."""
    if any(c in text for c in ".eE"):
        return float(text)
    return int(text)


def string_value(token: str) -> str:
    """The text of a quoted STRING token, with backslash escapes resolved."""
    body = token[1:-1]
    return _ESCAPE_RE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(1)), body)


@dataclass(frozen=True)
class _NegatedSeq:
    """The members of ``~SEQ(...)`` until the pattern numbers their group."""

    members: tuple[ast.Component, ...]
    span: ast.Span


@dataclass(frozen=True)
class _KleeneSeq:
    """The members of ``SEQ(...)+`` until the pattern numbers their group."""

    members: tuple[ast.Component, ...]
    span: ast.Span


_Part = ast.Component | _NegatedSeq | _KleeneSeq
_PARTS = (ast.Component, _NegatedSeq, _KleeneSeq, ast.EventSet)


def _flatten(parts: Sequence[_Part]) -> tuple[ast.Component, ...]:
    out: list[ast.Component] = []
    for part in parts:
        if isinstance(part, ast.Component):
            out.append(part)
            continue
        group = len(out)
        negated = isinstance(part, _NegatedSeq)
        for k, member in enumerate(part.members):
            span = part.span if k == 0 and negated else member.span
            out.append(replace(member, negated=negated, kleene=not negated, group=group, span=span))
    return tuple(out)


@v_args(meta=True)
class AstBuilder(SesTransforms):
    """Builds a :class:`~kleene.lang.ast.Program` from a parse tree of a query text."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        # Expressions written in parentheses, by id: such an AND is one WHERE conjunct.
        # Literals read straight from a NUMBER token, by id: `-` folds them into a
        # negative literal. The values keep the nodes alive, so no id is reused.
        self._grouped: dict[int, ast.Expr] = {}
        self._numbers: dict[int, ast.Expr] = {}

    # --- query ----------------------------------------------------------------------

    def start(self, meta: Meta, children: list[Any]) -> ast.Program | ast.SesQuery:
        definitions = [c for c in children if isinstance(c, ast.Definition)]
        ses = next((c for c in children if isinstance(c, ast.SesQuery)), None)
        if ses is not None:
            if definitions:
                raise self._no_composition(ses, "a program with DEFINE")
            return ses
        body = next(c for c in children if isinstance(c, ast.Union))
        seen: dict[str, ast.Definition] = {}
        for d in definitions:
            first = seen.get(d.name)
            if first is not None:
                raise self._error(
                    f"'{d.name}' is defined twice (first at line {first.span.line}, "
                    f"column {first.span.column})",
                    d.span,
                )
            seen[d.name] = d
        return ast.Program(tuple(definitions), body, span=self._span(meta))

    def definition(self, meta: Meta, children: list[Any]) -> ast.Definition:
        if isinstance(children[3], ast.SesQuery):
            raise self._no_composition(children[3], "a DEFINE")
        return ast.Definition(str(children[1]), children[3], span=self._tspan(children[1]))

    def union(self, meta: Meta, children: list[Any]) -> ast.Union | ast.SesQuery:
        queries = [c for c in children if isinstance(c, ast.Query | ast.SesQuery)]
        for q in queries:
            if isinstance(q, ast.SesQuery):
                if len(queries) > 1:
                    raise self._no_composition(q, "a UNION")
                return q
        branches = tuple(q for q in queries if isinstance(q, ast.Query))
        return ast.Union(branches, span=self._span(meta))

    def query(self, meta: Meta, children: list[Any]) -> ast.Query | ast.SesQuery:
        pattern: ast.Seq | ast.SetSeq = children[0]
        seen: dict[str, ast.Span] = {}
        fields: dict[str, Any] = {}
        for keyword, span, values in children[1:]:
            if keyword in seen:
                first = seen[keyword]
                raise self._error(
                    f"the {keyword} clause is given twice "
                    f"(first at line {first.line}, column {first.column})",
                    span,
                )
            seen[keyword] = span
            fields.update(values)
        if isinstance(pattern, ast.SetSeq):
            return self._ses_query(pattern, seen, fields, self._span(meta))
        self._check_sase_output(fields, seen)
        strategy_list = fields.pop("strategy_list", ())
        spans = tuple(span for _, _, span in strategy_list)
        query = ast.Query(
            pattern=pattern, span=self._span(meta), strategy_var_spans=spans, **fields
        )
        self._check_strategy_list(pattern, strategy_list)
        self._check_equivalences(query)
        self._check_prev(query)
        return query

    def _check_strategy_list(
        self, pattern: ast.Seq, names: Sequence[tuple[str, bool, ast.Span]]
    ) -> None:
        """``a[]`` in the strategy's variable list must name a Kleene variable and ``a``
        a single one, as in Figure 1's ``skip_till_any_match(a, b[])``."""
        for name, brackets, span in names:
            component = pattern.component(name)
            if component is None:
                continue  # an unknown variable is reported by validation
            if brackets and not component.kleene:
                raise self._error(
                    f"{name} is not a Kleene variable: write {name}, not {name}[]", span
                )
            if component.kleene and not brackets:
                raise self._error(
                    f"{name} is a Kleene variable: write {name}[] in the variable list", span
                )

    def _check_equivalences(self, query: ast.Query) -> None:
        allowed = {id(c) for c in query.where if isinstance(c, ast.Equivalence)}
        for node in query.walk():
            if isinstance(node, ast.Equivalence) and id(node) not in allowed:
                raise self._error(
                    "an equivalence test like '[symbol]' may only be a top-level WHERE "
                    "conjunct (joined to the others by 'and')",
                    node.span,
                )

    # --- pattern --------------------------------------------------------------------

    def seq_pattern(self, meta: Meta, children: list[Any]) -> ast.Seq | ast.SetSeq:
        parts = [c for c in children if isinstance(c, _PARTS)]
        if any(isinstance(p, ast.EventSet) for p in parts):
            return self._set_seq(parts, self._tspan(children[1]))
        plain = [p for p in parts if not isinstance(p, ast.EventSet)]
        return ast.Seq(_flatten(plain), span=self._tspan(children[1]))

    def single_pattern(self, meta: Meta, children: list[Any]) -> ast.Seq | ast.SetSeq:
        part = children[1]
        if isinstance(part, ast.EventSet):
            return ast.SetSeq((part,), span=part.span)
        return ast.Seq(_flatten([part]), span=part.span)

    def single_component(self, meta: Meta, children: list[Token]) -> ast.Component:
        return ast.Component(str(children[0]), self._variable(children[1]), span=self._span(meta))

    def kleene_component(self, meta: Meta, children: list[Token]) -> ast.Component:
        var = self._variable(children[2])
        return ast.Component(str(children[0]), var, kleene=True, span=self._span(meta))

    def negated_component(self, meta: Meta, children: list[Token]) -> ast.Component:
        var = self._variable(children[2])
        return ast.Component(str(children[1]), var, negated=True, span=self._span(meta))

    def negated_seq(self, meta: Meta, children: list[Any]) -> _NegatedSeq:
        """``~SEQ(B b, C c)``: no b followed by c in the gap (SIGMOD 2014, section 2.1)."""
        members = self._members(children, "a negated SEQ", "Kleene variables or negations")
        return _NegatedSeq(members, self._span(meta))

    def kleene_seq(self, meta: Meta, children: list[Any]) -> _KleeneSeq:
        """``SEQ(B b, C c)+``: one or more iterations of b then c (SIGMOD 2014, 2.1)."""
        members = self._members(
            children, "a SEQ(...)+ group", "Kleene variables, negations or nested groups"
        )
        return _KleeneSeq(members, self._span(meta))

    def _members(self, children: list[Any], what: str, refused: str) -> tuple[ast.Component, ...]:
        """The single-event members of a nested sequence."""
        members: list[ast.Component] = []
        for part in children:
            if not isinstance(part, _PARTS):
                continue
            if not isinstance(part, ast.Component) or part.kleene or part.negated:
                raise self._error(
                    f"{what} may hold only single events like 'B b', not {refused}", part.span
                )
            members.append(part)
        return tuple(members)

    # --- clauses --------------------------------------------------------------------

    def where_function(self, meta: Meta, children: list[Any]) -> tuple[str, ast.Span, dict]:
        names = [c for c in children[2:-1] if isinstance(c, tuple)]
        return (
            "WHERE",
            self._span(meta),
            {
                "strategy": ast.Strategy.parse(children[1]),
                "strategy_vars": tuple(name for name, _, _ in names),
                "where": self._conjuncts(children[-1]),
                "strategy_list": names,
            },
        )

    def where_block(self, meta: Meta, children: list[Any]) -> tuple[str, ast.Span, dict]:
        return (
            "WHERE",
            self._span(meta),
            {
                "strategy": ast.Strategy.parse(children[1]),
                "where": self._conjuncts(children[2]),
            },
        )

    def where_flat(self, meta: Meta, children: list[Any]) -> tuple[str, ast.Span, dict]:
        return (
            "WHERE",
            self._span(meta),
            {
                "strategy": ast.Strategy.parse(children[1]),
                "where": self._conjuncts(children[-1]),
            },
        )

    def where_plain(self, meta: Meta, children: list[Any]) -> tuple[str, ast.Span, dict]:
        return "WHERE", self._span(meta), {"where": self._conjuncts(children[1])}

    def single_strategy_var(self, meta: Meta, children: list[Token]) -> tuple[str, bool, ast.Span]:
        return str(children[0]), False, self._span(meta)

    def kleene_strategy_var(self, meta: Meta, children: list[Token]) -> tuple[str, bool, ast.Span]:
        return str(children[0]), True, self._span(meta)

    def _conjuncts(self, expr: ast.Expr | None) -> tuple[ast.Expr, ...]:
        """Splits the top-level (unparenthesised) ``and`` chain into conjuncts, in order."""
        conjuncts: list[ast.Expr] = []
        pending = [] if expr is None else [expr]
        while pending:
            node = pending.pop()
            if (
                isinstance(node, ast.Binary)
                and node.op is ast.BinOp.AND
                and id(node) not in self._grouped
            ):
                pending += [node.right, node.left]
            else:
                conjuncts.append(node)
        return tuple(conjuncts)

    def _number(self, token: Token) -> int | float:
        """The value of a NUMBER token; a float literal must be finite."""
        value = number_value(str(token))
        if isinstance(value, float) and not math.isfinite(value):
            raise self._error(
                f"the number {token} is too large: a number literal must be finite "
                f"(at most about {sys.float_info.max:.1e})",
                self._tspan(token),
            )
        return value

    def within_clause(self, meta: Meta, children: list[Any]) -> tuple[str, ast.Span, dict]:
        _, minus, number, unit = children
        amount = self._number(number)
        if minus is not None:
            amount = -amount
        time_unit = None if unit is None else _UNITS[str(unit).lower()]
        return (
            "WITHIN",
            self._span(meta),
            {
                "within": ast.Window(amount, time_unit, span=self._span(meta)),
            },
        )

    def return_clause(self, meta: Meta, children: list[Any]) -> tuple[str, ast.Span, dict]:
        return "RETURN", self._span(meta), {"returns": tuple(children[1:])}

    def return_item(self, meta: Meta, children: list[Any]) -> ast.ReturnItem:
        expr, _, alias = children
        return ast.ReturnItem(expr, None if alias is None else str(alias), span=self._span(meta))

    def output_clause(self, meta: Meta, children: list[Token]) -> tuple[str, ast.Span, dict]:
        choice = ses_output(children[1])
        if choice is not None:
            return "OUTPUT", self._span(meta), {"ses_output": choice}
        return "OUTPUT", self._span(meta), {"output": ast.OutputFormat.parse(children[1])}

    def confidence_clause(self, meta: Meta, children: list[Token]) -> tuple[str, ast.Span, dict]:
        _, op, number = children
        node = ast.Confidence(str(op), self._number(number), span=self._span(meta))
        return "CONFIDENCE", self._span(meta), {"confidence": node}

    # --- expressions ----------------------------------------------------------------

    def or_op(self, meta: Meta, children: list[Any]) -> ast.Expr:
        return self._chain(ast.BinOp.OR, meta, children)

    def and_op(self, meta: Meta, children: list[Any]) -> ast.Expr:
        return self._chain(ast.BinOp.AND, meta, children)

    def _chain(self, op: ast.BinOp, meta: Meta, children: list[Any]) -> ast.Expr:
        """``x op y op z`` as ``(x op y) op z``; the operator tokens are skipped."""
        operands = [c for c in children if isinstance(c, ast.Expr)]
        result = operands[0]
        for operand in operands[1:]:
            result = ast.Binary(op, result, operand, span=self._span(meta))
        return result

    def not_op(self, meta: Meta, children: list[Any]) -> ast.Expr:
        return ast.Unary(ast.UnOp.NOT, children[1], span=self._span(meta))

    def compare(self, meta: Meta, children: list[Any]) -> ast.Expr:
        left, op, right = children
        return ast.Binary(_COMPARISONS[str(op)], left, right, span=self._span(meta))

    def add(self, meta: Meta, children: list[Any]) -> ast.Expr:
        return ast.Binary(ast.BinOp.ADD, children[0], children[2], span=self._span(meta))

    def subtract(self, meta: Meta, children: list[Any]) -> ast.Expr:
        return ast.Binary(ast.BinOp.SUB, children[0], children[2], span=self._span(meta))

    def arith(self, meta: Meta, children: list[Any]) -> ast.Expr:
        left, op, right = children
        return ast.Binary(_ARITHMETIC[str(op)], left, right, span=self._span(meta))

    def neg(self, meta: Meta, children: list[Any]) -> ast.Expr:
        operand = children[1]
        if isinstance(operand, ast.Literal) and id(operand) in self._numbers:
            # `-5` is the literal -5; `-(5)` and `--5` stay unary minus.
            assert isinstance(operand.value, int | float)
            return ast.Literal(-operand.value, span=self._span(meta))
        return ast.Unary(ast.UnOp.NEG, operand, span=self._span(meta))

    def paren(self, meta: Meta, children: list[Any]) -> ast.Expr:
        expr: ast.Expr = children[1]
        self._grouped[id(expr)] = expr
        self._numbers.pop(id(expr), None)
        return expr

    def number(self, meta: Meta, children: list[Token]) -> ast.Expr:
        literal = ast.Literal(self._number(children[0]), span=self._span(meta))
        self._numbers[id(literal)] = literal
        return literal

    def string(self, meta: Meta, children: list[Token]) -> ast.Expr:
        return ast.Literal(string_value(str(children[0])), span=self._span(meta))

    def true(self, meta: Meta, children: list[Token]) -> ast.Expr:
        return ast.Literal(True, span=self._span(meta))

    def false(self, meta: Meta, children: list[Token]) -> ast.Expr:
        return ast.Literal(False, span=self._span(meta))

    def equivalence(self, meta: Meta, children: list[Token]) -> ast.Expr:
        return ast.Equivalence(tuple(str(c) for c in children), span=self._span(meta))

    def attr_ref(self, meta: Meta, children: list[Token]) -> ast.Expr:
        return ast.AttrRef(str(children[0]), str(children[1]), span=self._span(meta))

    def len_ref(self, meta: Meta, children: list[Token]) -> ast.Expr:
        return ast.LenRef(str(children[0]), span=self._span(meta))

    def indexed_ref(self, meta: Meta, children: list[Any]) -> ast.Expr:
        var, (kind, span, of_var), attr = children
        if kind is ast.IndexKind.LAST and of_var != str(var):
            raise self._error(
                f"the last element of {var} is written {var}[{var}.LEN], not {var}[{of_var}.LEN]",
                span,
            )
        return ast.AttrRef(str(var), str(attr), kind, span=self._span(meta))

    def index_number(self, meta: Meta, children: list[Token]) -> tuple[Any, ...]:
        if str(children[0]) != "1":
            raise self._error(
                f"unsupported index {children[0]}: use 1, i, i-1 or the variable's .LEN",
                self._span(meta),
            )
        return ast.IndexKind.FIRST, self._span(meta), None

    def index_current(self, meta: Meta, children: list[Token]) -> tuple[Any, ...]:
        return ast.IndexKind.CURRENT, self._span(meta), None

    def index_previous(self, meta: Meta, children: list[Token]) -> tuple[Any, ...]:
        self._expect_one(children[2], "i-")
        return ast.IndexKind.PREVIOUS, self._span(meta), None

    def index_last(self, meta: Meta, children: list[Token]) -> tuple[Any, ...]:
        return ast.IndexKind.LAST, self._span(meta), str(children[0])

    def _expect_one(self, token: Token, prefix: str) -> None:
        if str(token) != "1":
            raise self._error(
                f"unsupported index {prefix}{token}: only {prefix}1 (the previous element) "
                "is allowed",
                self._tspan(token),
            )

    def agg_func(self, meta: Meta, children: list[Token]) -> tuple[ast.AggFunc, ast.Span]:
        return ast.AggFunc(str(children[0]).lower()), self._span(meta)

    def aggregate_all(self, meta: Meta, children: list[Any]) -> ast.Expr:
        (func, _), var, attr = children
        if attr is None and func is not ast.AggFunc.COUNT:
            raise self._error(
                f"{func.value} needs an attribute, as in {func.value}({var}[].price)",
                self._span(meta),
            )
        return ast.Aggregate(
            func,
            str(var),
            ast.AggRange.ALL,
            None if attr is None else str(attr),
            span=self._span(meta),
        )

    def aggregate_before(self, meta: Meta, children: list[Any]) -> ast.Expr:
        (func, _), var, first, _dots, _i, _minus, last, attr = children
        if first is not None and str(first) != "1":
            raise self._error(
                f"unsupported range start {first}: write {var}[..i-1] or {var}[1..i-1]",
                self._tspan(first),
            )
        self._expect_one(last, "..i-")
        if attr is None:
            raise self._error(
                f"{func.value} over {var}[..i-1] needs an attribute, as in "
                f"{func.value}({var}[..i-1].price)",
                self._span(meta),
            )
        return ast.Aggregate(
            func, str(var), ast.AggRange.BEFORE_CURRENT, str(attr), span=self._span(meta)
        )
