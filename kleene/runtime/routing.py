"""Which partition's runs see an event (SIGMOD 2008, section 5.2: runs indexed by the
inferred partition key, so an event only visits the runs of its own partition)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kleene.events import EVENT_TYPE
from kleene.vocabulary import Strategy

if TYPE_CHECKING:
    from kleene.compiler.plan import Plan


class Router:
    """The partition of an event, from the plan's key."""

    __slots__ = ("common", "key_index", "routed", "skips", "types")

    def __init__(self, plan: Plan) -> None:
        negated = {m.event_type for n in plan.negations for m in n.members}
        self.types = {s.event_type for s in plan.states} | negated
        # under the skip-till strategies only events of the pattern's types matter
        self.skips = plan.strategy in (Strategy.SKIP_TILL_NEXT_MATCH, Strategy.SKIP_TILL_ANY_MATCH)
        self.routed = plan.routed
        # where a keyed event type's partition key is (none for one partition)
        self.key_index = dict(plan.key_index) if plan.routed else {}
        self.common = plan.common_key_index

    def partition(self, e: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """The partition whose runs see this event; None when no run can."""
        etype = e[EVENT_TYPE]
        index = self.key_index.get(etype)
        if index is not None:  # a keyed type: validated, its key values are present
            return tuple([e[i] for i in index])
        if not self.routed:  # one partition
            return () if etype in self.types or not self.skips else None
        if self.skips or not self.common:
            return None
        key = tuple([e[i] for i in self.common])
        if any(v is None or not hashable(v) for v in key):
            return None  # no run's key can equal a missing or unusable value
        return key


def hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True
