"""kleene: complex event processing with SASE+ pattern queries.

>>> import kleene
>>> q = kleene.compile("PATTERN SEQ(A a, B b) WITHIN 10")
>>> [m.ids() for m in q.run([{"type": "A", "timestamp": 1}, {"type": "B", "timestamp": 2}])]
[{'a': (0,), 'b': (1,)}]
"""

from kleene.collapsed import CollapsedMatch
from kleene.errors import (
    EventError,
    KleeneError,
    KleeneWarning,
    MatchLimitError,
    QueryError,
    QuerySyntaxError,
    RejectedEventsWarning,
    RunLimitError,
    SchemaWarning,
    SnapshotError,
)
from kleene.events import EventFields
from kleene.imprecise import ImpreciseMatch, IntervalQuery
from kleene.match import Match, RejectedEvent
from kleene.program import Program, compile_program
from kleene.query import Query, RunResult, compile
from kleene.runtime.matcher import Matcher
from kleene.vocabulary import OutputFormat, Strategy

__all__ = [
    "CollapsedMatch",
    "EventError",
    "EventFields",
    "ImpreciseMatch",
    "IntervalQuery",
    "KleeneError",
    "KleeneWarning",
    "Match",
    "MatchLimitError",
    "Matcher",
    "OutputFormat",
    "Program",
    "Query",
    "QueryError",
    "QuerySyntaxError",
    "RejectedEvent",
    "RejectedEventsWarning",
    "RunLimitError",
    "RunResult",
    "SchemaWarning",
    "SnapshotError",
    "Strategy",
    "compile",
    "compile_program",
]
__version__ = "0.1.0"
