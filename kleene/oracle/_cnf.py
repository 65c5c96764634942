"""Conjunctive normal form of WHERE predicates (SIGMOD 2008, section 3.2, step 2).

``not`` is pushed through ``and``/``or`` by De Morgan's laws (a double ``not`` cancels),
then ``or`` is distributed over ``and``. A ``not`` over anything else stays as it is.
The result is the list of clauses whose conjunction is the predicate. A predicate whose
normal form has more than ``MAX_CLAUSES`` clauses stays a single clause
(docs/semantics.md, "Conjuncts").
"""

from __future__ import annotations

from kleene.lang import ast

MAX_CLAUSES = 64
_FLIP = {ast.BinOp.AND: ast.BinOp.OR, ast.BinOp.OR: ast.BinOp.AND}


def _push_not(expr: ast.Expr, negate: bool) -> ast.Expr:
    if isinstance(expr, ast.Unary) and expr.op is ast.UnOp.NOT:
        return _push_not(expr.operand, not negate)
    if isinstance(expr, ast.Binary) and expr.op.is_logical:
        op = _FLIP[expr.op] if negate else expr.op
        return ast.Binary(op, _push_not(expr.left, negate), _push_not(expr.right, negate))
    return ast.Unary(ast.UnOp.NOT, expr) if negate else expr


def _clauses(expr: ast.Expr) -> list[ast.Expr]:
    if isinstance(expr, ast.Binary) and expr.op is ast.BinOp.AND:
        return _clauses(expr.left) + _clauses(expr.right)
    if isinstance(expr, ast.Binary) and expr.op is ast.BinOp.OR:
        return [
            ast.Binary(ast.BinOp.OR, left, right)
            for left in _clauses(expr.left)
            for right in _clauses(expr.right)
        ]
    return [expr]


def _size(expr: ast.Expr) -> int:
    """How many clauses the normal form of a negation-normal ``expr`` has."""
    if isinstance(expr, ast.Binary) and expr.op is ast.BinOp.AND:
        return _size(expr.left) + _size(expr.right)
    if isinstance(expr, ast.Binary) and expr.op is ast.BinOp.OR:
        return _size(expr.left) * _size(expr.right)
    return 1


def _too_big(expr: ast.Expr) -> bool:
    """Whether any sub-formula's normal form exceeds MAX_CLAUSES clauses."""
    if isinstance(expr, ast.Binary) and expr.op.is_logical:
        return _size(expr) > MAX_CLAUSES or _too_big(expr.left) or _too_big(expr.right)
    return False


def to_cnf(expr: ast.Expr) -> list[ast.Expr]:
    """The clauses of ``expr`` in conjunctive normal form, in text order."""
    normal = _push_not(expr, negate=False)
    return [normal] if _too_big(normal) else _clauses(normal)
