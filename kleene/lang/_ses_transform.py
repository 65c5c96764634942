"""The parts of the parse-tree transformer shared by both kinds of query, and those of
event-set (SES) queries (match-window paper, section 3, Definition 1): event sets in
SEQ, ``prev(v.A)``, and the clauses an SES query takes. :class:`AstBuilder
<kleene.lang._transform.AstBuilder>` builds on :class:`SesTransforms`.
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Transformer, v_args
from lark.tree import Meta

from kleene.errors import QuerySyntaxError, line_starts, position
from kleene.lang import ast

# Words that the grammar reads as keywords where an expression starts, so a variable
# with such a name could never be referenced.
RESERVED_NAMES = frozenset(
    {"and", "or", "not", "true", "false", "avg", "min", "max", "sum", "count", "i"}
)
_STRATEGY_NAME = re.compile(
    r"(strict|partition)_contiguity|skip_till_(next|any)_match", re.IGNORECASE
)


def ses_output(word: str) -> str | None:
    """The SES output an OUTPUT word names ("earliest", "maximal", "earliest-maximal"),
    or None for the other formats."""
    choice = re.sub(r"[-_ ]", "-", str(word).lower())
    return choice if choice in ("earliest", "maximal", "earliest-maximal") else None


@v_args(meta=True)
class SesTransforms(Transformer[Token, Any]):
    """Positions, errors and variable names for every query; the SES rules."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self._text = text
        self._starts = line_starts(text)

    def _span(self, meta: Meta) -> ast.Span:
        """Where a node starts, by :func:`kleene.errors.position` (not lark's own line
        count, which knows only "\\n" as a line break)."""
        if getattr(meta, "empty", True):
            return ast.Span.unknown()
        return ast.Span(*position(self._text, meta.start_pos, self._starts))

    def _tspan(self, token: Token) -> ast.Span:
        if token.start_pos is None:
            return ast.Span.unknown()
        return ast.Span(*position(self._text, token.start_pos, self._starts))

    def _error(self, message: str, span: ast.Span) -> QuerySyntaxError:
        return QuerySyntaxError(message, line=span.line, column=span.column, text=self._text)

    def _no_composition(self, query: ast.SesQuery, where: str) -> QuerySyntaxError:
        return self._error(
            f"an event-set pattern SEQ({{...}}) is a query of its own: it cannot be part of "
            f"{where}; compile it alone with kleene.compile()",
            query.span,
        )

    def _ses_query(
        self,
        pattern: ast.SetSeq,
        seen: dict[str, ast.Span],
        fields: dict[str, Any],
        span: ast.Span,
    ) -> ast.SesQuery:
        """An SES query takes WHERE (without a selection strategy) and WITHIN only."""
        for keyword in ("RETURN", "CONFIDENCE"):
            if keyword in seen:
                raise self._error(
                    f"an event-set pattern SEQ({{...}}) takes WHERE, WITHIN and OUTPUT, not "
                    f"{keyword}",
                    seen[keyword],
                )
        output = fields.get("ses_output")
        if fields.get("output") not in (None, ast.OutputFormat.ALL):
            raise self._error(
                "an event-set pattern's OUTPUT is ALL, EARLIEST, MAXIMAL or EARLIEST MAXIMAL",
                seen["OUTPUT"],
            )
        if fields.get("strategy") is not None:
            raise self._error(
                "an event-set pattern SEQ({...}) has no selection strategy: its matches are "
                "all substitutions of Definition 2 (choose earliest or maximal ones with "
                "output=); write WHERE <conditions>",
                seen["WHERE"],
            )
        where = fields.get("where", ())
        for c in where:
            if isinstance(c, ast.Equivalence):
                raise self._error(
                    "an event-set pattern has no equivalence test [attr]: write the "
                    "relationships, like a.attr = b.attr",
                    c.span,
                )
        return ast.SesQuery(
            pattern,
            where,
            fields.get("within"),
            output or "all" if "OUTPUT" in seen else None,
            span=span,
        )

    def _set_seq(self, parts: list[Any], span: ast.Span) -> ast.SetSeq:
        """The sets of an SES pattern; a plain ``B b`` is a set of one."""
        sets: list[ast.EventSet] = []
        seen: dict[str, ast.Span] = {}
        for part in parts:
            if isinstance(part, ast.Component) and not (part.kleene or part.negated):
                member = ast.SetMember(part.event_type, part.var, span=part.span)
                part = ast.EventSet((member,), span=part.span)
            if not isinstance(part, ast.EventSet):
                raise self._error(
                    "an event-set pattern SEQ({...}) holds event sets like {C c, P+ p} and "
                    "single variables like B b, not Kleene variables T+ v[], negations or "
                    "nested SEQ groups (write T+ v inside braces for one or more events)",
                    part.span,
                )
            for member in part.members:
                if member.var in seen:
                    first = seen[member.var]
                    raise self._error(
                        f"variable {member.var} is declared twice (first at line "
                        f"{first.line}, column {first.column}): the sets of a pattern are "
                        "disjoint",
                        member.span,
                    )
                seen[member.var] = member.span
            sets.append(part)
        return ast.SetSeq(tuple(sets), span=span)

    def event_set(self, meta: Meta, children: list[Any]) -> ast.EventSet:
        members = tuple(c for c in children if isinstance(c, ast.SetMember))
        return ast.EventSet(members, span=self._span(meta))

    def set_single(self, meta: Meta, children: list[Token]) -> ast.SetMember:
        var = self._variable(children[1])
        return ast.SetMember(str(children[0]), var, span=self._span(meta))

    def set_plus(self, meta: Meta, children: list[Token]) -> ast.SetMember:
        var = self._variable(children[2])
        return ast.SetMember(str(children[0]), var, plus=True, span=self._span(meta))

    def _variable(self, token: Token) -> str:
        name = str(token)
        if name.lower() in RESERVED_NAMES or _STRATEGY_NAME.fullmatch(name):
            raise self._error(
                f"'{name}' is a reserved word and cannot name a variable", self._tspan(token)
            )
        return name

    def prev_ref(self, meta: Meta, children: list[Any]) -> ast.Expr:
        ref = children[1]
        if not isinstance(ref, ast.AttrRef) or ref.index is not None:
            raise self._error(
                "prev() takes one attribute of a variable, as in prev(p.V)", self._span(meta)
            )
        return ast.Prev(ref.var, ref.attr, span=self._span(meta))

    def _check_sase_output(self, fields: dict[str, Any], seen: dict[str, ast.Span]) -> None:
        """OUTPUT EARLIEST / MAXIMAL belongs to SES patterns."""
        if fields.pop("ses_output", None) is not None:
            raise self._error(
                "OUTPUT EARLIEST and MAXIMAL choose among the matches of event-set patterns "
                "SEQ({...}); a SASE+ query's output is ALL, NON-OVERLAP or COLLAPSED",
                seen["OUTPUT"],
            )

    def _check_prev(self, query: ast.Query) -> None:
        """``prev()`` belongs to SES patterns only."""
        prev = next(query.find(ast.Prev), None)
        if prev is not None:
            raise self._error(
                f"prev({prev.var}.{prev.attr}) belongs to event-set patterns SEQ({{...}}); "
                f"in a SASE+ query write {prev.var}[i-1].{prev.attr} for a Kleene variable",
                prev.span,
            )
