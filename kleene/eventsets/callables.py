"""Constraints as Python callables, generated from their IR by
:func:`kleene.compiler.codegen.python_code` (the one set of comparison rules).

``property_test(c)(event)`` decides a property ``v.A φ C`` for one event;
``pair_test(c)(left, right)`` decides a relationship or a prev relationship for two
events (``left`` is ``vi``'s event, or the earlier event for ``prev``). Events are
mappings from attribute names to values. A comparison that is an error (a null, a
missing attribute, an ordering of values of different kinds) is false.

This is the minimal builder the match-window strategy needs; the SES compiler
(``kleene.eventsets.compile``) offers the same two functions and may take it over.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any

from kleene.compiler import codegen, expr
from kleene.eventsets.model import LEFT, Constraint

Event = Mapping[str, Any]


def _code(c: Constraint) -> str:
    def place(load: expr.Load) -> str:
        return f"{'left' if load.source == LEFT else 'right'}[{load.key!r}]"

    return codegen.python_code(c.comparison, place)


@lru_cache(maxsize=1024)
def pair_test(c: Constraint) -> Callable[[Event, Event], bool]:
    """``f(left, right) -> bool`` for one constraint."""
    source = (
        "def _test(left, right):\n"
        f"    try:\n        return bool({_code(c)})\n"
        f"    except (KeyError, *{codegen.CAUGHT}):\n        return False\n"
    )
    fn: Callable[[Event, Event], bool] = codegen.build(source, "_test")
    return fn


@lru_cache(maxsize=1024)
def property_test(c: Constraint) -> Callable[[Event], bool]:
    """``f(event) -> bool`` for a property."""
    test = pair_test(c)

    def _property(event: Event) -> bool:
        return test(event, event)

    return _property
