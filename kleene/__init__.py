"""kleene: complex event processing: pattern queries over event streams, one engine for
SASE+ queries and programs, queries over interval events, TPStream queries and event-set
patterns (:mod:`kleene.kinds`).

>>> import kleene
>>> q = kleene.compile("PATTERN SEQ(A a, B b) WITHIN 10")
>>> [m.ids() for m in q.run([{"type": "A", "timestamp": 1}, {"type": "B", "timestamp": 2}])]
[{'a': (0,), 'b': (1,)}]
"""

from kleene import kinds
from kleene.api import compile
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
from kleene.eventsets.query import SesQuery
from kleene.imprecise import ImpreciseMatch, IntervalQuery
from kleene.match import Match, MatchLike, RejectedEvent, RunResult
from kleene.program import Program, compile_program
from kleene.query import Query
from kleene.runtime.contract import CompiledQuery, StreamMatcher
from kleene.runtime.matcher import Matcher
from kleene.tpstream.model import TemporalMatch
from kleene.tpstream.query import TemporalQuery
from kleene.vocabulary import OutputFormat, Strategy

__all__ = [
    "CollapsedMatch",
    "CompiledQuery",
    "EventError",
    "EventFields",
    "ImpreciseMatch",
    "IntervalQuery",
    "KleeneError",
    "KleeneWarning",
    "Match",
    "MatchLike",
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
    "SesQuery",
    "SnapshotError",
    "Strategy",
    "StreamMatcher",
    "TemporalMatch",
    "TemporalQuery",
    "compile",
    "compile_program",
    "kinds",
]
__version__ = "0.1.0"
