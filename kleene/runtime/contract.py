"""The one contract of every kind's matcher and compiled query (:mod:`kleene.kinds`).

A matcher has one lifecycle, whatever the kind (as bytewax's ``StatefulLogic`` gives
every stateful operator one: on item, on time, on end, snapshot):

* ``push(events)``: feed events in arrival order; the matches that became final;
* ``advance_to(time)``: no event before ``time`` will come (a watermark; the interval
  kind's punctuation); the matches that became final;
* ``flush()``: the end of the stream; every match still pending;
* ``take_rejected()``: the events rejected since the last call, each with its reason;
* ``snapshot()``: the whole state as versioned bytes (:mod:`kleene.runtime.snapshot`),
  resumed by ``query.matcher(state=..., on_matches=...)`` of the same query.

``max_matches`` is enforced while matches are produced (a :class:`Reporter` counts
them as they come, and an iterator handed to it is consumed only up to the limit), so
an exploding query raises :class:`~kleene.errors.MatchLimitError` in bounded time and
memory; ``on_matches`` receives them in chunks instead of the return values.
"""

from __future__ import annotations

import sys
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, TypeVar

import pyarrow as pa

from kleene.events import check_input
from kleene.match import RejectedEvent, RunResult, rejected_warning
from kleene.runtime.output import Output, Reporter

M = TypeVar("M")

#: receives the matches of a call in chunks, instead of the call's return value
OnMatches = Callable[[list[Any]], object]

__all__ = ["CompiledQuery", "OnMatches", "Output", "Reporter", "StreamMatcher"]


class StreamMatcher(ABC, Generic[M]):
    """A push-based matcher of one compiled query; see the module docstring."""

    @abstractmethod
    def push(self, events: Any) -> list[M]:
        """Feed events in arrival order; the matches that became final (none when an
        ``on_matches`` callback takes them)."""

    @abstractmethod
    def advance_to(self, time: Any) -> list[M]:
        """No event before ``time`` will come (a later one is rejected as late); the
        matches that became final."""

    @abstractmethod
    def flush(self) -> list[M]:
        """The end of the stream: every match still pending."""

    @abstractmethod
    def take_rejected(self) -> list[RejectedEvent]:
        """The events rejected since the last call, each with its reason."""

    @abstractmethod
    def snapshot(self) -> bytes:
        """The whole state as snapshot bytes; ``query.matcher(state=...)`` resumes."""

    @property
    @abstractmethod
    def rejected_count(self) -> int:
        """Events rejected since the stream began."""

    @property
    @abstractmethod
    def reported(self) -> int:
        """Matches reported since the matcher was created or resumed."""

    def run(self, events: Any) -> list[M]:
        """A whole finite input: ``push(events)`` then ``flush()`` (a kind may do it
        in one pass)."""
        return [*self.push(events), *self.flush()]


class CompiledQuery(ABC, Generic[M]):
    """What every kind's compiled query offers: its facts, a matcher, whole runs and
    an explanation. ``kind`` is its name in the registry (:mod:`kleene.kinds`)."""

    kind: ClassVar[str]
    text: str

    @property
    @abstractmethod
    def variables(self) -> tuple[str, ...]:
        """The variables a match binds, in pattern order."""

    @property
    def partition_attributes(self) -> tuple[str, ...]:
        """The attributes of the partition key, () without one."""
        return ()

    @property
    def return_names(self) -> tuple[str, ...]:
        """The names of the RETURN values."""
        return ()

    def check_columns(self, events: Any) -> None:
        """EventError when a typed input lacks a column the query reads."""

    @abstractmethod
    def matcher(
        self, *, state: bytes | None = None, on_matches: OnMatches | None = None
    ) -> StreamMatcher[M]:
        """A push-based matcher; ``state`` resumes from its ``snapshot()``."""

    @abstractmethod
    def explain(self) -> str:
        """The compiled plan, as text."""

    # --- whole runs -------------------------------------------------------------------

    def prepare(self, events: Any) -> Any:
        """The input of a whole run, checked: TypeError for what is not events, an
        EventError for a typed input without a column the query reads; a one-time
        iterable becomes a list."""
        pd = sys.modules.get("pandas")
        if isinstance(events, pa.Table | pa.RecordBatch) or (
            pd is not None and isinstance(events, pd.DataFrame)
        ):
            self.check_columns(events)
            return events
        if isinstance(events, Mapping):
            events = [events]
        return list(check_input(events))

    def ordered(self, matches: list[M]) -> list[M]:
        """The matches of a whole run in the kind's documented order."""
        return matches

    def run_detailed(self, events: Any) -> RunResult[M]:
        """Match a whole finite input; its matches and rejected events."""
        events = self.prepare(events)
        m = self.matcher()
        matches = self.ordered(m.run(events))
        return RunResult(matches, m.take_rejected())

    def run(self, events: Any) -> list[M]:
        """All matches over a finite input; rejected events are counted in a
        :class:`~kleene.errors.RejectedEventsWarning` (:meth:`run_detailed` returns
        them with their reasons)."""
        result = self.run_detailed(events)
        if result.rejected:
            warnings.warn(rejected_warning(result.rejected), stacklevel=2)
        return result.matches
