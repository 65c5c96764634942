"""AST -> immutable NFA^b plan (SIGMOD 2008, section 3.2). No runtime state here."""

from kleene.compiler.build import build_plan
from kleene.compiler.plan import Plan

__all__ = ["Plan", "build_plan"]
