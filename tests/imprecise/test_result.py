"""Building results (kleene/imprecise/collapse.make_result): the id and position tuples
an event's results share (kleene/imprecise/result.Labels) give the same results as
tuples built per result."""

from __future__ import annotations

import kleene
from kleene.imprecise.admission import Admission
from kleene.imprecise.collapse import make_result
from kleene.imprecise.result import Labels


def _events() -> tuple[object, list[object]]:
    q = kleene.compile("PATTERN SEQ(A a, B b) RETURN a.x AS x", time="interval", u_max=2)
    rows = [
        {"type": "A", "id": "a1", "lower": 0, "upper": 2, "x": 5},
        {"type": "B", "id": "b1", "lower": 3, "upper": 4, "x": 6},
        {"type": "B", "id": "b2", "lower": 4, "upper": 6, "x": 7},
    ]
    return q, Admission(q.plan, q.fields, q.interval).admit(rows)


def test_shared_labels_give_the_results_of_unshared_ones() -> None:
    q, (a, b1, b2) = _events()
    plan = q.plan  # type: ignore[attr-defined]
    vector = plan.initial_vector
    labels = Labels()
    shared = [make_result(plan, (a, b), vector, 1, 5, 0.25, labels) for b in (b1, b2)]
    alone = [make_result(plan, (a, b), vector, 1, 5, 0.25) for b in (b1, b2)]
    assert shared == alone
    assert shared[0].ids() == {"a": ("a1",), "b": ("b1",)}
    assert shared[1].positions == {"a": (0,), "b": (2,)}
    # one tuple per event, held by both of its results
    assert shared[0].variables["a"] is shared[1].variables["a"]
    assert shared[0].positions["a"] is shared[1].positions["a"]


def test_labels_are_forgotten_past_their_limit_and_rebuilt() -> None:
    _, (a, b1, b2) = _events()
    labels = Labels(limit=2)
    assert labels.of(a) == (("a1",), (0,)) and labels.of(b1) == (("b1",), (1,))
    assert labels.of(b2) == (("b2",), (2,)) and len(labels.by_position) == 1
    assert labels.of(a) == (("a1",), (0,)) and len(labels.by_position) == 2
