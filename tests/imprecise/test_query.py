"""``kleene.compile(text, time="interval")``: the CONFIDENCE clause and option, the rules
of queries over interval events, and the results."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest

import kleene
from kleene.imprecise import ImpreciseMatch, IntervalQuery
from kleene.lang import parse, to_text

# a [1, 2], b [1, 3]: a < b in 3 of the 6 combinations
EVENTS = [
    {"type": "A", "id": "a", "lower": 1, "upper": 2, "x": 1},
    {"type": "B", "id": "b", "lower": 1, "upper": 3, "x": 1},
]


def confidences(text: str, **options: object) -> list[Fraction]:
    q = kleene.compile(text, time="interval", exact=True, **options)
    return [m.confidence for m in q.run(EVENTS)]


def test_compile_dispatches_on_the_time_model() -> None:
    q = kleene.compile("PATTERN SEQ(A a, B b)", time="interval")
    assert isinstance(q, IntervalQuery) and "event-based framework" in q.explain()
    assert isinstance(kleene.compile("PATTERN SEQ(A a, B b)"), kleene.Query)
    with pytest.raises(kleene.QueryError, match="unknown time model 'fuzzy'"):
        kleene.compile("PATTERN SEQ(A a, B b)", time="fuzzy")


def test_result_is_a_frozen_signature_with_range_and_confidence() -> None:
    q = kleene.compile("PATTERN SEQ(A a, B b) RETURN a.x + b.x AS s", time="interval")
    (m,) = q.run(EVENTS)
    assert isinstance(m, ImpreciseMatch)
    assert m.ids() == {"a": ("a",), "b": ("b",)} and m.values() == {"s": 2}
    assert (m.start, m.end) == (1, 3) and m.confidence == pytest.approx(0.5, abs=1e-12)
    with pytest.raises(AttributeError):
        m.confidence = 1.0  # type: ignore[misc]


def test_confidence_clause_and_option_filter_results() -> None:
    assert confidences("PATTERN SEQ(A a, B b) CONFIDENCE > 0.4") == [Fraction(1, 2)]
    assert confidences("PATTERN SEQ(A a, B b) CONFIDENCE > 0.5") == []
    assert confidences("PATTERN SEQ(A a, B b) CONFIDENCE >= 0.5") == [Fraction(1, 2)]
    # the option replaces the clause
    assert confidences("PATTERN SEQ(A a, B b) CONFIDENCE > 0.9", confidence=0.1) == [Fraction(1, 2)]
    with pytest.raises(kleene.QueryError, match="between 0 and 1"):
        confidences("PATTERN SEQ(A a, B b)", confidence=2)


def test_confidence_clause_parses_prints_and_is_checked() -> None:
    text = "PATTERN SEQ(A a, B b)\nWHERE a.confidence > 1\nWITHIN 5\nCONFIDENCE >= 0.25"
    query = parse(text)
    assert query.confidence is not None and query.confidence.threshold == 0.25
    assert to_text(query) == text and parse(to_text(query)) == query
    with pytest.raises(kleene.QueryError, match="time='interval'") as point:
        kleene.compile("PATTERN SEQ(A a, B b)\nCONFIDENCE > 0.5")
    assert (point.value.line, point.value.column) == (2, 1)
    with pytest.raises(kleene.QueryError, match="not CONFIDENCE < x") as op:
        kleene.compile("PATTERN SEQ(A a, B b) CONFIDENCE < 0.5", time="interval")
    assert op.value.column == 23
    with pytest.raises(kleene.QueryError, match=r"between 0 and 1, not 1\.5"):
        kleene.compile("PATTERN SEQ(A a, B b) CONFIDENCE > 1.5", time="interval")
    with pytest.raises(kleene.QuerySyntaxError, match="CONFIDENCE clause is given twice"):
        parse("PATTERN SEQ(A a, B b) CONFIDENCE > 0.1 CONFIDENCE > 0.2")


@pytest.mark.parametrize(
    ("text", "options", "message", "column"),
    [
        ("PATTERN SEQ(A a, B+ b[])", {}, "Kleene closure (b)", 18),
        ("PATTERN SEQ(A a, ~(C c), B b)", {}, "negation (c)", 18),
        ("PATTERN SEQ(A a, B b) WHERE b.timestamp > 3", {}, "b.timestamp", 29),
        ("PATTERN SEQ(A a, B b) RETURN a.timestamp", {}, "a.timestamp", 30),
        ("PATTERN SEQ(A a, B b)", {"strategy": "strict_contiguity"}, "strict_contiguity", 1),
        ("PATTERN SEQ(A a, B b)", {"output": "non_overlap"}, "OUTPUT non_overlap", 1),
    ],
)
def test_what_interval_events_do_not_support(
    text: str, options: dict[str, str], message: str, column: int
) -> None:
    with pytest.raises(kleene.QueryError, match=re.escape(message)) as e:
        kleene.compile(text, time="interval", **options)
    assert e.value.line == 1 and e.value.column == column


def test_bad_interval_options() -> None:
    with pytest.raises(kleene.QueryError, match="uncertainty must be"):
        kleene.compile("PATTERN SEQ(A a)", time="interval", uncertainty=-1)
    with pytest.raises(kleene.QueryError, match="u_max must be"):
        kleene.compile("PATTERN SEQ(A a)", time="interval", u_max=1.5)
    with pytest.raises(kleene.QueryError, match="time_unit"):
        kleene.compile("PATTERN SEQ(A a) WITHIN 5 seconds", time="interval")


def test_the_window_is_inclusive_in_each_world() -> None:
    """b at 10 is within 10 of a at 0, b at 11 is not: half the worlds."""
    events = [
        {"type": "A", "id": "a", "lower": 0, "upper": 0, "x": 1},
        {"type": "B", "id": "b", "lower": 10, "upper": 11, "x": 1},
    ]
    q = kleene.compile("PATTERN SEQ(A a, B b) WITHIN 10", time="interval", exact=True)
    (m,) = q.run(events)
    assert m.confidence == Fraction(1, 2) and (m.start, m.end) == (0, 10)
    in_ms = kleene.compile(
        "PATTERN SEQ(A a, B b) WITHIN 0.01 seconds", time="interval", time_unit="ms"
    )
    assert in_ms.window == 10 and [x.confidence for x in in_ms.run(events)] == [0.5]


def test_a_certain_result_has_confidence_one_over_many_point_matches() -> None:
    """20,000 point matches of 1/20,000 each: the float sum is correctly rounded
    (math.fsum), where adding them up in order would miss 1 by about 1e-13."""
    q = kleene.compile("PATTERN SEQ(A a, B b)", time="interval")
    events = [
        {"type": "A", "id": "a", "lower": 0, "upper": 19_999},
        {"type": "B", "id": "b", "lower": 20_000, "upper": 20_000},
    ]
    (m,) = q.run(events)
    assert m.confidence == 1.0 and (m.start, m.end) == (0, 20_000)
