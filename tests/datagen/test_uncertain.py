"""The workloads of VLDB 2010, section 5: the uncertain stream (5.1) and the Hadoop
trace with uncertainty intervals (5.2)."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import kleene
from kleene.datagen.hadoop import generate as generate_hadoop
from kleene.datagen.uncertain import generate, with_intervals


def test_uncertain_stream_cycles_its_value_inside_intervals_of_two_delta() -> None:
    table = generate(2500, delta=3)
    t = table.column("timestamp").to_numpy()
    assert (t == np.arange(2500)).all()
    assert (table.column("lower").to_numpy() == t - 3).all()
    assert (table.column("upper").to_numpy() == t + 3).all()
    values = table.column("value").to_numpy()
    assert values[0] == 1 and values[999] == 1000 and values[1000] == 1 and values.max() == 1000
    assert set(table.column("type").to_pylist()) == {"E"}


def test_uncertain_stream_runs_the_papers_query_template() -> None:
    """SEQ(E e1, E e2) WHERE e1.value % 2 = 0 AND e2.value % 3 = 0 within 2, delta 1:
    over t = 0, 1, 2, e1 at t=1 (value 2, [0, 2]) and e2 at t=2 (value 3, [1, 3]) form
    the one signature; a < b and b - a <= 2 hold in 5 of the 9 worlds ((0, 3) is too
    far apart)."""
    table = generate(3, delta=1)
    q = kleene.compile(
        "PATTERN SEQ(E a, E b) WHERE a.value % 2 = 0 AND b.value % 3 = 0 WITHIN 2",
        time="interval",
        exact=True,
    )
    (m,) = q.run(table)
    assert m.ids() == {"a": (1,), "b": (2,)} and m.confidence == Fraction(5, 9)


def test_bad_parameters() -> None:
    with pytest.raises(ValueError, match="delta"):
        generate(10, delta=-1)
    with pytest.raises(ValueError, match="unit"):
        with_intervals(generate_hadoop(1), unit=0)


def test_hadoop_intervals_follow_section_5_2_and_keep_the_arrival_order() -> None:
    table = with_intervals(generate_hadoop(3, nodes=3, seed=2))
    frame = table.to_pandas()
    ticks = (frame.timestamp * 10).round().astype(int)
    ganglia = frame.type == "LoadStd"
    assert ((frame.upper - frame.lower)[ganglia] == 150).all()  # +-7.5 s
    assert ((frame.upper - frame.lower)[~ganglia] == 10).all()  # +-0.5 s
    assert ((frame.lower <= ticks) & (ticks <= frame.upper)).all()
    # every earlier event's lower bound is at most every later event's upper bound
    assert (frame.lower.cummax() <= frame.upper).all()
    q = kleene.compile("PATTERN SEQ(ReducerStart a, ReducerEnd b)", time="interval")
    assert q.run_detailed(table).rejected == []
