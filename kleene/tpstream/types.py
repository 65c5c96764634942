"""The type of a TPStream RETURN item's values, as far as the query fixes it: what a
writer that needs the output schema before any match (the Spark pipeline,
:mod:`kleene.spark._tpstream`) resolves against the input's column types.

Types are :class:`kleene.compiler.returns.ValueType` terms, with one more kind:
``"duration"``, a situation's length (``end - start``), which is a number of time units
for numeric timestamps and seconds (a float) for datetimes. Aggregates keep the values
they read (docs/language.md, "TPStream queries"): ``first``, ``last``, ``min`` and
``max`` have the attribute's type, ``sum`` adds numbers, ``avg`` is a float, ``count``
an integer, ``start`` and ``end`` times. Arithmetic follows the expression layer's
rules, as for SASE+ RETURN items.
"""

from __future__ import annotations

from kleene.compiler.returns import BOOLEAN, DOUBLE, LONG, TIME, ValueType, value_type
from kleene.lang import ast
from kleene.lang.tpstream import Summary

DURATION = ValueType("duration")
_FIXED = {"count": LONG, "avg": DOUBLE, "start": TIME, "end": TIME, "duration": DURATION}


def return_type(node: ast.Expr) -> ValueType:
    """The type of a RETURN expression over situation aggregates."""
    if isinstance(node, Summary):
        if node.func in _FIXED:
            return _FIXED[node.func]
        attribute = ValueType("attr", node.attr)
        return ValueType("number", operands=(attribute,)) if node.func == "sum" else attribute
    if isinstance(node, ast.Unary) and node.op is not ast.UnOp.NOT:
        return ValueType("number", operands=(return_type(node.operand),))
    if isinstance(node, ast.Binary) and node.op.is_arithmetic and node.op is not ast.BinOp.DIV:
        return ValueType("number", operands=(return_type(node.left), return_type(node.right)))
    if isinstance(node, ast.Unary | ast.Binary):
        return DOUBLE if isinstance(node, ast.Binary) and node.op is ast.BinOp.DIV else BOOLEAN
    return value_type(node)
