"""The library's entry point over every kind of query: :func:`compile`."""

from __future__ import annotations

from typing import Any, Literal, overload

from kleene import kinds
from kleene.eventsets.query import SesQuery
from kleene.imprecise.query import IntervalQuery
from kleene.program import Program
from kleene.query import Query
from kleene.tpstream.query import TemporalQuery


@overload
def compile(text: str, *, time: Literal["interval"], **options: Any) -> IntervalQuery: ...
@overload
def compile(text: str, *, time: Literal["situation"], **options: Any) -> TemporalQuery: ...
@overload
def compile(
    text: str, *, time: Literal["point"] = "point", **options: Any
) -> Query | Program | SesQuery | TemporalQuery: ...
@overload
def compile(
    text: str, *, time: str, **options: Any
) -> Query | Program | IntervalQuery | SesQuery | TemporalQuery: ...


def compile(
    text: str, *, time: str = "point", **options: Any
) -> Query | Program | IntervalQuery | SesQuery | TemporalQuery:
    """Compile a query text of any kind (:mod:`kleene.kinds`), told from its tokens and
    from ``time``, the events' time model: "point" (a timestamp each) or "interval" (an
    uncertainty interval each).

    * a SASE+ query (:class:`Query`). Options: strategy, output, time_field, type_field,
      id_field, allowed_lateness, max_runs (live runs, default 1,000,000), max_matches
      (matches per matcher, default 1,000,000, None for no limit), engine ("auto", "nfa",
      "merge", "postpone", ...), time_unit (what one unit of a numeric time column is:
      "ns", "us", "ms", "s", "min", "h" or "d"; needed by a WITHIN with a unit over
      numeric times), match_windows (True: only the events of candidate match windows
      reach the engine; docs/language.md);
    * a SASE+ program, a text with DEFINE or UNION (:class:`kleene.Program`), with the
      same options;
    * an event-set pattern ``PATTERN SEQ({C c, P+ p}, B b) ...``
      (:class:`kleene.SesQuery`; output "all", "earliest", "maximal" or
      "earliest-maximal", the field names, time_unit, max_matches, algorithm,
      preprocessing);
    * a TPStream query, whose first keyword is FROM (:class:`kleene.TemporalQuery`);
    * with ``time="interval"``, a SASE+ query over interval events
      (:class:`kleene.IntervalQuery` and its options).

    A kind registered beside these (:func:`kleene.kinds.register`) compiles here too
    (statically typed as the built-in kinds: narrow it with ``isinstance``).

    Raises QuerySyntaxError / QueryError, also for an option the text's kind does not
    take (the message lists the kind's options)."""
    return kinds.compile(text, time=time, **options)
