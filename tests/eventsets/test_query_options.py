"""SesQuery's options algorithm and preprocessing: every combination runs to the oracle's
matches, also through a snapshot taken at a random cut; explain says which
pre-processing steps apply and why."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import kleene
from kleene.eventsets.query import SesQuery
from kleene.eventsets.selection import OUTPUTS
from kleene.eventsets.stream import PlainWindows
from kleene.eventsets.twophase import TwoPhase
from kleene.oracle.eventsets import evaluate
from tests.eventsets.chemo import Q1, events
from tests.eventsets.ses_queries import ses_queries
from tests.eventsets.strategies import ses_rows

CHEMO = {"type_field": "L", "time_field": "T", "time_unit": "d"}
ALGORITHMS = ("automaton", "jointree")
PREPROCESSING = ("none", "f", "fp", "fpc")


def _keys(matches: list[kleene.Match]) -> list[Any]:
    return sorted(tuple(sorted(m.positions.items())) for m in matches)


@settings(max_examples=40, deadline=None)
@given(
    ses_queries(),
    ses_rows(),
    st.sampled_from(OUTPUTS),
    st.integers(0, 8),
    st.sampled_from(ALGORITHMS),
    st.sampled_from(PREPROCESSING),
)
def test_each_algorithm_and_preprocessing_equal_the_oracle(
    text: str, rows: list[dict[str, Any]], output: str, cut: int, algorithm: str, pre: str
) -> None:
    expected = sorted(m.key() for m in evaluate(text, rows, output=output))
    q = kleene.compile(text, output=output, algorithm=algorithm, preprocessing=pre)
    assert _keys(q.run(rows)) == expected
    m = q.matcher()
    found = m.push(rows[:cut])
    resumed = q.matcher(state=m.snapshot())
    found += resumed.push(rows[cut:]) + resumed.flush()
    assert _keys(found) == expected


def test_the_pipeline_follows_the_options() -> None:
    plain = SesQuery(Q1, preprocessing="none", **CHEMO)
    pruned = SesQuery(Q1, preprocessing="fp", algorithm="jointree", **CHEMO)
    assert isinstance(plain.pipeline(plain.pattern), PlainWindows)
    pipeline = pruned.pipeline(pruned.pattern)
    assert isinstance(pipeline, TwoPhase)
    assert pipeline.flags.name == "fp" and pipeline.attributes == ("PID",)
    assert type(pipeline.algorithm).__name__ == "JoinTreeMatcher"
    # the state of one is not the state of another
    assert plain.fingerprint != pruned.fingerprint
    for algorithm in ALGORITHMS:
        for pre in PREPROCESSING:
            q = SesQuery(Q1, algorithm=algorithm, preprocessing=pre, **CHEMO)
            found = q.run(events())
            assert len(found) == 11, (algorithm, pre)
            # the variables in pattern order, whichever order A bound them in
            assert {tuple(m.ids()) for m in found} == {("c", "p", "b")}


def test_explain_says_which_steps_apply_and_why() -> None:
    text = kleene.compile(Q1).explain()
    assert "algorithm: automaton" in text and "algorithm='auto'" in text
    assert "preprocessing: fpc" in text
    assert "partitioning: one window per PID" in text
    assert "A no longer tests c.PID = p.PID, p.PID = b.PID" in text
    assert "filtering: events satisfying the properties of no variable" in text
    unrelated = "PATTERN SEQ({A a}, {B b}) WHERE a.x = 1 WITHIN 5"
    text = kleene.compile(unrelated, algorithm="jointree", preprocessing="fp").explain()
    assert "algorithm: jointree" in text and "algorithm='auto'" not in text
    assert "partitioning: no effect, no attribute relates every pair" in text
    assert "filtering: no effect, b has no property" not in text  # b's type is one
    assert "conditions: off" in text
    assert "plain match windows" in kleene.compile(Q1, preprocessing="none").explain()


def test_a_late_event_missing_an_attribute_is_rejected_for_the_attribute() -> None:
    """Admission checks as for point queries: the attributes first, then lateness (so
    Spark, which reads lateness from the events admitted before, agrees)."""
    text = "PATTERN SEQ({A a}, {B b}) WHERE a.x = b.x WITHIN 5"
    late = {"type": "B", "timestamp": 1, "id": 2, "x": None}
    stream = [
        {"type": "A", "timestamp": 3, "id": 1, "x": 0},
        late,
        {"type": "B", "timestamp": 4, "id": 3, "x": 0},
    ]
    for q in (kleene.compile(text), kleene.compile("PATTERN SEQ(A a, B b) WHERE [x] WITHIN 5")):
        rejected = q.run_detailed(stream).rejected
        assert [(r.id, r.reason) for r in rejected] == [
            (2, "missing attribute 'x' for event type 'B'")
        ]
