"""The bit vectors of an Arrow table (kleene/eventsets/filtering.py): properties on a
string column are evaluated on its distinct values (by the generated per-event code
when they are few, by the columnar backend otherwise) and spread by the events' codes;
the automaton takes the candidate events' fits from those bits; condition 6 is tested
once per group of variables with the same properties. Each must give what the
per-event path gives."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kleene.eventsets import filtering
from kleene.eventsets.automaton import AutomatonMatcher
from kleene.eventsets.batch import Conditions
from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.filtering import PropertyBits
from kleene.eventsets.model import SesMatch
from kleene.eventsets.sources import TableSource, _one_value
from kleene.eventsets.twophase import Flags, TwoPhase
from tests.eventsets.test_batch import _run, _theorem_2

QUERIES = (
    "PATTERN SEQ({A a, A b, B+ c}) WHERE a.s = 'p' AND b.s = 'p' AND c.s != 'q' "
    "AND c.n > 1 WITHIN 5",
    "PATTERN SEQ({A a}, {B b, D d}) WHERE a.s < 'q' AND b.s >= 'p' AND d.s = 'é' "
    "AND a.n = 2 WITHIN 5",
    "PATTERN SEQ({A a, D d}) WHERE a.s = d.s AND d.s > '' WITHIN 3",
)


#: how a table holds its string columns (``type`` and ``s``)
STRINGS = (pa.string(), pa.large_string(), pa.dictionary(pa.int32(), pa.string()))


@st.composite
def _tables(draw: st.DrawFn) -> tuple[list[dict[str, Any]], pa.Table]:
    """Rows in time order, ``s`` from a few strings or from many (some null), and a
    table of them: its string columns plain, 64-bit or dictionary-encoded, the table
    possibly a slice of a longer one (an offset into its buffers) and in two chunks
    (each with its own dictionary)."""
    few = st.sampled_from(("p", "q", "r", "é", "", "pq"))
    values = draw(st.sampled_from((few, st.text("pqé", max_size=3), st.none() | few)))
    n = draw(st.integers(0, 12))
    rows = [
        {
            "type": draw(st.sampled_from("ABD")),
            "timestamp": t,
            "s": draw(values),
            "n": draw(st.integers(0, 3)),
        }
        for t in range(n)
    ]
    kind = draw(st.sampled_from(STRINGS))
    schema = pa.schema([("type", kind), ("timestamp", pa.int64()), ("s", kind), ("n", pa.int64())])

    def table(part: list[dict[str, Any]]) -> pa.Table:
        return pa.Table.from_pydict({k: [r[k] for r in part] for k in schema.names}, schema)

    skip = draw(st.integers(0, 2))  # rows before the slice
    cut = draw(st.none() | st.integers(0, n))  # where the second chunk starts
    before = [{"type": "B", "timestamp": -1, "s": "zz", "n": 9}] * skip
    if cut is None:
        return rows, table(before + rows).slice(skip)
    return rows, pa.concat_tables([table(before + rows[:cut]).slice(skip), table(rows[cut:])])


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(QUERIES), _tables())
def test_bits_of_a_table_equal_each_events(
    query: str, drawn: tuple[list[dict[str, Any]], pa.Table]
) -> None:
    rows, table = drawn
    assert table.to_pylist() == rows
    bits = PropertyBits(ses_pattern(query))
    want = [bits.of(row) for row in rows]
    saved = filtering.ROW_TESTS
    try:
        for limit in (0, saved):  # the columnar backend, then row tests on few values
            filtering.ROW_TESTS = limit
            assert bits.array(TableSource(table)).tolist() == want, limit
    finally:
        filtering.ROW_TESTS = saved


ROWS = [
    {"type": t, "timestamp": k, "s": s, "n": k}
    for k, (t, s) in enumerate([("A", "p"), ("B", "q"), ("A", "q"), ("B", "r"), ("D", "p")])
]


def test_the_automaton_takes_the_fits_the_bits_say() -> None:
    """Fits taken from the bit vectors are those the automaton's own tests find, and A
    binds by the bits it is given, not by its tests: told that event 2 (``s`` = 'q')
    fits a and b, it finds the matches its tests rule out."""
    pattern = ses_pattern(QUERIES[0])
    bits = PropertyBits(pattern).array(ROWS).tolist()
    assert bits == [0b110, 0, 0, 0b001, 0]
    tested = AutomatonMatcher(pattern, output="all")
    assert tested._fitting(ROWS, range(5)) == [(0, 1), (), (), (2,), ()]
    assert tested.matches(ROWS, range(5)) == []  # one A event with s = 'p' only
    told = AutomatonMatcher(pattern, output="all")
    wrong = [0b110, 0, 0b110, 0b001, 0]
    told.take_fits(ROWS, range(5), wrong)
    assert told._fitting(ROWS, range(5)) == [(0, 1), (), (0, 1), (2,), ()]
    assert sorted(m.key() for m in told.matches(ROWS, range(5))) == sorted(
        SesMatch({"a": (x,), "b": (y,), "c": (3,)}).key() for x, y in ((0, 2), (2, 0))
    )


class _Failing(AutomatonMatcher):
    """A that raises on its first window."""

    def each(self, events: Any, positions: Any) -> Any:
        raise RuntimeError("A failed")


@pytest.mark.parametrize("algorithm", [AutomatonMatcher, _Failing])
def test_the_fits_of_a_batch_are_forgotten_after_it(algorithm: type[AutomatonMatcher]) -> None:
    """After a batch, A holds none of its fits (they would be stale for the next
    batch's events at the same positions), also when A raised on a window."""
    strategy = TwoPhase(ses_pattern(QUERIES[0]), algorithm, conditions=False)  # A is called
    taken: list[int] = []
    keep = strategy.algorithm.take_fits

    def take_fits(events: Any, positions: Any, bits: Any) -> None:
        taken.append(len(bits))
        keep(events, positions, bits)

    strategy.algorithm.take_fits = take_fits  # type: ignore[method-assign]
    if algorithm is _Failing:
        with pytest.raises(RuntimeError, match="A failed"):
            strategy.run_columns(pa.Table.from_pylist(ROWS))
    else:
        strategy.run_columns(pa.Table.from_pylist(ROWS))
    assert taken[0] > 0 and taken[-1] == 0
    assert isinstance(strategy.algorithm, AutomatonMatcher) and not strategy.algorithm._given


def test_fits_are_taken_only_where_the_bits_are_computed() -> None:
    """Without filtering and conditions the bit vectors are not computed (zeros): A
    must test the properties itself."""
    rows = [{"type": t, "timestamp": k, "s": "p", "n": 2} for k, t in enumerate("AAB")]
    taken: list[list[int]] = []

    class Taking(AutomatonMatcher):
        def take_fits(self, events: Any, positions: Any, bits: Any) -> None:
            taken.append(list(bits))
            super().take_fits(events, positions, bits)

    for pruning in ("none", "p", "f", "c", "fpc"):
        taken.clear()
        f = Flags.parse(pruning)
        strategy = TwoPhase(
            ses_pattern(QUERIES[0]), Taking, f.filtering, f.partitioning, f.conditions
        )
        assert len(strategy.run_columns(pa.Table.from_pylist(rows))) == 2  # a, b swapped
        # the batch's fits, then nothing (A keeps no rows of a finished batch)
        wanted = [[0b110, 0b110, 0b001], []] if pruning not in ("none", "p") else []
        assert taken == wanted, pruning


def _branches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of condition 6's branches as they run, in order."""
    ran: list[str] = []
    for name in ("by_union", "by_prefix_sums"):
        method = getattr(Conditions, name)

        def spy(self: Conditions, *args: Any, _method: Any = method, _name: str = name) -> Any:
            ran.append(_name)
            return _method(self, *args)

        monkeypatch.setattr(Conditions, name, spy)
    return ran


def test_condition_6_tests_alike_variables_once_as_theorem_2_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """a and b have the same properties: one A event meets condition 6 for both
    (Theorem 2 asks for an event per variable, not a distinct one), so the window
    [A, B, B] is a candidate although it holds no match; [B, A, B] fails condition 5.
    The windows are short: condition 6 is the OR of their bit vectors."""
    ran = _branches(monkeypatch)
    query = "PATTERN SEQ({A a, A b, B c}) WITHIN 5"
    rows = [{"type": t, "timestamp": k, "id": k} for k, t in enumerate(["A", "B", "B", "D", "B"])]
    found, batch, _ = _run(query, "fc", rows, columns=True)
    assert found == [] and ran == ["by_union"]
    pattern = ses_pattern(query)
    windows = [(0, 1, 2, 4), (1, 2, 4), (2, 4), (4,)]
    assert batch.calls == [w for w in windows if _theorem_2(pattern, rows, w)] == [(0, 1, 2, 4)]


def test_condition_6_over_long_windows_by_prefix_sums(monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows longer in total than groups x events are tested by prefix sums: here
    every window runs to the end, and only the first holds a B."""
    ran = _branches(monkeypatch)
    query = "PATTERN SEQ({A a, B b}) WITHIN 100"
    rows = [{"type": t, "timestamp": k, "id": k} for k, t in enumerate("BAAAAA")]
    found, batch, _ = _run(query, "fc", rows, columns=True)
    assert ran == ["by_prefix_sums"]
    assert batch.calls == [(0, 1, 2, 3, 4, 5)] and len(found) == 5  # a: any A
    pattern = ses_pattern(query)
    starts = [tuple(range(i, 6)) for i in range(6)]
    assert batch.calls == [w for w in starts if _theorem_2(pattern, rows, w)]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_both_ways_of_condition_6_test_it(data: st.DataObject) -> None:
    """The OR of the bit vectors and the prefix sums keep the same windows: those
    holding an event of every variable (a and b alike, c and d not)."""
    conditions = Conditions(ses_pattern("PATTERN SEQ({A a, A b}, {B c, D d}) WITHIN 5"))
    n = data.draw(st.integers(1, 10))
    vectors = st.sampled_from((0, 0b1100, 0b0010, 0b0001, 0b0011))  # a, b: both or none
    bits = np.array(data.draw(st.lists(vectors, min_size=n, max_size=n)), dtype=np.int64)
    ends = np.array([data.draw(st.integers(i + 1, n)) for i in range(n)], dtype=np.intp)
    starts = np.array(sorted(data.draw(st.sets(st.integers(0, n - 1), min_size=1))))
    want = [int(np.bitwise_or.reduce(bits[i : ends[i]])) == 0b1111 for i in starts]
    assert conditions.by_union(bits, ends, starts).tolist() == want
    assert conditions.by_prefix_sums(bits, ends, starts).tolist() == want


@settings(max_examples=60, deadline=None)
@example(["a", "aa", ""], 0, False)  # the same bytes over lengths that differ
@given(
    st.lists(st.sampled_from(("ab", "ab", "ba", "a", "aa", "a\x00", "", "é", "ée")), max_size=6),
    st.integers(0, 2),
    st.booleans(),
)
def test_a_string_column_of_one_value(values: list[str], skip: int, large: bool) -> None:
    """A column is told to hold one value by its bytes, also as a slice of a longer
    array (an offset into its buffers) and with 64-bit offsets."""
    kind = pa.large_string() if large else pa.string()
    array = pa.array(["zz"] * skip + values + ["q"], type=kind).slice(skip, len(values))
    assert array.to_pylist() == values
    assert _one_value(array, large) == (len(set(values)) == 1)
    if len(set(values)) == 1:  # and the source's codes say so
        codes, distinct = TableSource(pa.table({"s": array})).codes("s") or ((), ())
        assert list(codes) == [0] * len(values) and distinct.to_pylist() == values[:1]


def test_a_dictionary_column_gives_its_indices_as_codes() -> None:
    """A dictionary-encoded string column's codes are its indices into one dictionary
    for all its chunks (each chunk had its own); a dictionary longer than the column
    (a short slice of a long one) gives none, nor does one with a null."""
    kind = pa.dictionary(pa.int8(), pa.string())
    chunks = [pa.array(["zz", "p", "q", "p"], type=kind).slice(1), pa.array(["r", "q"], type=kind)]
    coded = TableSource(pa.table({"s": pa.chunked_array(chunks)})).codes("s")
    assert coded is not None
    codes, distinct = coded
    assert distinct.take(pa.array(codes)).to_pylist() == ["p", "q", "p", "r", "q"]
    short = pa.table({"s": pa.array(["p", "q", "r", "s"], type=kind).slice(1, 2)})
    assert TableSource(short).codes("s") is None
    nulls = pa.DictionaryArray.from_arrays(pa.array([0, 1], pa.int8()), pa.array(["p", None]))
    assert TableSource(pa.table({"s": nulls})).codes("s") is None
