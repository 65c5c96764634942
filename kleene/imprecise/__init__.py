"""Pattern queries over events with imprecise timestamps (Zhang, Diao, Immerman, VLDB
2010): each event occurs at an unknown instant of its uncertainty interval, and a result
is a signature (the events per variable) with its time range and its confidence, the
probability of the possible worlds that produce it (section 2.3).

The package plugs into the shared layers: the query language (plus a CONFIDENCE
clause), the compiled plan and its generated edge functions, the event readers
(kleene.events) and the rejected-event output (kleene.match.RejectedEvent).

* :mod:`.model`: the interval event model (section 2.2);
* :mod:`.admission`: reading and checking events, the arrival-order assumption;
* :mod:`.rules`: what a query over interval events may use;
* :mod:`.expansion`, :mod:`.points`, :mod:`.collapse`, :mod:`.framework`: the
  point-based framework (section 3, Appendix B);
* :mod:`.budget`: what ``max_runs`` counts in each framework;
* :mod:`.matcher`: the push-based matcher (the contract of
  :mod:`kleene.runtime.contract`);
* :mod:`.query`: ``kleene.compile(text, time="interval")``.
"""

from kleene.imprecise.model import IntervalEvent, IntervalFields
from kleene.imprecise.query import IntervalQuery
from kleene.imprecise.result import ImpreciseMatch

__all__ = [
    "ImpreciseMatch",
    "IntervalEvent",
    "IntervalFields",
    "IntervalQuery",
]
