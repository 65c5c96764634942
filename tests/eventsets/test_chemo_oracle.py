"""Definition 2 on the Chemo example (Figures 1 and 2, Examples 3-5), by the oracle.

Which reading is taken: the definition wins. Example 4's "complete list of matches"
names eight substitutions, but Definition 2 admits eleven on the relation of Figure 1:
it leaves out {c/e1, p/e9, b/e11} (e9 is a Prednisone of patient 1 on 12 Jul, e11 a blood
count on 17 Jul, 14 days after e1) and {c/e7, p/e10, b/e12}, {c/e7, p/e10, b/e13} (e10 is
a Prednisone of patient 2 on 15 Jul, before the blood counts e12 and e13). The tests
assert all eleven. None of the three is earliest (a Prednisone starts earlier: e3, e8),
so the earliest-and-maximal subset is Example 5's list of three.
"""

from __future__ import annotations

from kleene.oracle.eventsets import evaluate
from tests.eventsets.chemo import Q1, e, rows


def bindings(c: int, p: tuple[int, ...], b: int) -> dict[str, tuple[int, ...]]:
    return {"c": e(c), "p": e(*p), "b": e(b)}


def keys(matches: list) -> set:
    return {tuple(sorted(m.bindings.items())) for m in matches}


def expected(*gammas: dict[str, tuple[int, ...]]) -> set:
    return {tuple(sorted(g.items())) for g in gammas}


# Example 4's list, then the three it leaves out
LISTED = [
    bindings(1, (3,), 11),
    bindings(7, (5,), 12),
    bindings(7, (8,), 12),
    bindings(1, (3, 9), 11),
    bindings(7, (5,), 13),
    bindings(7, (8,), 13),
    bindings(7, (5, 8), 12),
    bindings(7, (5, 8), 13),
]
OMITTED = [bindings(1, (9,), 11), bindings(7, (10,), 12), bindings(7, (10,), 13)]


def test_definition_2_admits_the_listed_matches_and_the_three_omitted() -> None:
    found = keys(evaluate(Q1, rows(), time_unit="d"))
    assert found == expected(*LISTED, *OMITTED)
    assert len(found) == 11


def test_figure_2_match_satisfies_the_instantiation_of_example_3() -> None:
    # γ = {c/<e7>, p/<e5, e8>, b/<e12>}: 88 < 98, all of patient 2, e12 after e5, e7, e8
    assert expected(bindings(7, (5, 8), 12)) <= keys(evaluate(Q1, rows(), time_unit="d"))


def test_rising_prednisone_is_required() -> None:
    # e5 and e10 both give 88 mg: <e5, e10> breaks prev(p.V) < p.V, as does <e8, e10>
    found = keys(evaluate(Q1, rows(), time_unit="d"))
    assert not any(dict(k)["p"] in (e(5, 10), e(8, 10), e(5, 8, 10)) for k in found)


def test_fifteen_days_exclude_e14() -> None:
    # e14 (22 Jul) is 19 days after e1 (3 Jul): no match of patient 1 ends there
    found = keys(evaluate(Q1, rows(), time_unit="d"))
    assert not any(dict(k)["b"] == e(14) for k in found)
    shorter = keys(evaluate(Q1.replace("15 days", "13 days"), rows(), time_unit="d"))
    # 17 Jul - 3 Jul = 14 days > 13: patient 1's matches go
    assert all(dict(k)["c"] == e(7) for k in shorter)


def test_earliest_and_maximal_matches_are_example_5s_list() -> None:
    found = keys(evaluate(Q1, rows(), time_unit="d", output="earliest-maximal"))
    assert found == expected(
        bindings(1, (3, 9), 11), bindings(7, (5, 8), 12), bindings(7, (8,), 12)
    )


def test_earliest_matches() -> None:
    # Example 5: {c/e7, p/<e5, e8>, b/e13} is not earliest (e12 comes before e13); the
    # omitted matches are not earliest either (p could start at e3, at e8)
    found = keys(evaluate(Q1, rows(), time_unit="d", output="earliest"))
    assert found == expected(
        bindings(1, (3,), 11),
        bindings(1, (3, 9), 11),
        bindings(7, (5,), 12),
        bindings(7, (5, 8), 12),
        bindings(7, (8,), 12),
    )


def test_maximal_matches() -> None:
    # Example 5: {c/e7, p/e5, b/e12} is not maximal (p extends by e8); <e8> and <e10>
    # cannot be extended: e10 (88) after e8 (98) falls, e5 is before the match starts
    found = keys(evaluate(Q1, rows(), time_unit="d", output="maximal"))
    assert found == expected(
        bindings(1, (3, 9), 11),
        bindings(7, (5, 8), 12),
        bindings(7, (5, 8), 13),
        bindings(7, (8,), 12),
        bindings(7, (8,), 13),
        bindings(7, (10,), 12),
        bindings(7, (10,), 13),
    )
