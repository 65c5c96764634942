"""The two-phase strategy as the pipeline of a SesQuery's matcher (admission, the
push matcher, snapshots): the call SesQuery.pipeline makes to put it in front of
algorithm A."""

from __future__ import annotations

from functools import partial
from typing import Any

import kleene
from kleene.eventsets.automaton import AutomatonMatcher
from kleene.eventsets.model import SesPattern
from kleene.eventsets.query import SesQuery
from kleene.eventsets.twophase import TwoPhase
from tests.eventsets.chemo import Q1, events

CHEMO = {"type_field": "L", "time_field": "T", "time_unit": "d"}


class _Pruned(SesQuery):
    def pipeline(self, pattern: SesPattern) -> TwoPhase:
        return TwoPhase(pattern, partial(AutomatonMatcher, output=self.output))


def _ids(matches: list[kleene.Match]) -> list[Any]:
    return sorted(sorted(m.ids().items()) for m in matches)


def test_a_query_with_the_two_phase_pipeline_finds_the_same_matches() -> None:
    for output in ("all", "earliest-maximal"):
        plain = SesQuery(Q1, output=output, **CHEMO).run(events())
        pruned = _Pruned(Q1, output=output, **CHEMO).run(events())
        assert _ids(pruned) == _ids(plain)
    assert len(_Pruned(Q1, **CHEMO).run(events())) == 11


def test_its_matcher_resumes_from_a_snapshot() -> None:
    query = _Pruned(Q1, **CHEMO)
    first = query.matcher()
    found = first.push(events()[:8])
    second = query.matcher(state=first.snapshot())
    found += second.push(events()[8:]) + second.flush()
    assert _ids(found) == _ids(SesQuery(Q1, **CHEMO).run(events()))
