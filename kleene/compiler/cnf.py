"""WHERE in conjunctive normal form (SIGMOD 2008, section 3.2, step 2).

Negations are moved down to the comparisons with De Morgan's laws, then disjunctions are
distributed over conjunctions; each clause is then placed on its own edge. A predicate
whose normal form would exceed ``MAX_CLAUSES`` clauses stays one conjunct (placing it
later is still correct, only less eager), so compilation stays linear in the query.
"""

from __future__ import annotations

from kleene.lang import ast

MAX_CLAUSES = 64


def _negation_normal(expr: ast.Expr, negated: bool = False) -> ast.Expr:
    if isinstance(expr, ast.Unary) and expr.op is ast.UnOp.NOT:
        return _negation_normal(expr.operand, not negated)
    if isinstance(expr, ast.Binary) and expr.op.is_logical:
        op = expr.op
        if negated:
            op = ast.BinOp.OR if op is ast.BinOp.AND else ast.BinOp.AND
        left = _negation_normal(expr.left, negated)
        right = _negation_normal(expr.right, negated)
        return ast.Binary(op, left, right, span=expr.span)
    return ast.Unary(ast.UnOp.NOT, expr, span=expr.span) if negated else expr


def _distribute(expr: ast.Expr) -> list[ast.Expr] | None:
    """The clauses, or None when there would be more than MAX_CLAUSES."""
    if isinstance(expr, ast.Binary) and expr.op is ast.BinOp.AND:
        left, right = _distribute(expr.left), _distribute(expr.right)
        if left is None or right is None or len(left) + len(right) > MAX_CLAUSES:
            return None
        return left + right
    if isinstance(expr, ast.Binary) and expr.op is ast.BinOp.OR:
        left, right = _distribute(expr.left), _distribute(expr.right)
        if left is None or right is None or len(left) * len(right) > MAX_CLAUSES:
            return None
        return [ast.Binary(ast.BinOp.OR, a, b, span=expr.span) for a in left for b in right]
    return [expr]


def clauses(expr: ast.Expr) -> list[ast.Expr]:
    """The CNF clauses of a predicate, in text order."""
    normal = _negation_normal(expr)
    return _distribute(normal) or [normal]
