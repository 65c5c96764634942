"""The TPStream query language (EDBT 2018, section 3, Listing 1): parsing, validation
and the errors a user sees."""

from __future__ import annotations

import pytest

import kleene
from kleene.errors import QueryError, QuerySyntaxError
from kleene.tpstream.compile import build_plan
from kleene.tpstream.model import Allen
from kleene.tpstream.query import TemporalQuery

LISTING_1 = """FROM CarSensors CS PARTITION BY CS.car_id
DEFINE A AS CS.accel > 8 AT LEAST 5s,
       B AS CS.speed > 70 BETWEEN 4s AND 30s,
       C AS CS.accel < -9 AT LEAST 3s
PATTERN A meets B; A overlaps B; A starts B; A during B
        AND C during B; B finishes C; B overlaps C; B meets C
        AND A before C
WITHIN 5 MINUTES
RETURN first(B.car_id) AS id, avg(B.speed) AS avg_speed;"""


def error(text: str) -> QueryError:
    with pytest.raises(QueryError) as caught:
        build_plan(text)
    return caught.value


def test_listing_1_compiles_to_its_plan() -> None:
    plan = build_plan(LISTING_1)
    assert plan.stream == "CarSensors"
    assert plan.partition == ("car_id",)
    assert plan.symbol_names == ("A", "B", "C")
    pattern = plan.pattern_for("number", "s")
    assert pattern.window == 300
    assert pattern.durations == {"A": (5, None), "B": (4, 30), "C": (3, None)}
    ab, cb, ac = pattern.constraints
    assert (ab.left, ab.right) == ("A", "B")
    assert ab.relations == {Allen.MEETS, Allen.OVERLAPS, Allen.STARTS, Allen.DURING}
    # "B finishes C" relates the pair C, B the other way round: C finished-by B
    assert (cb.left, cb.right) == ("C", "B")
    assert cb.relations == {Allen.DURING, Allen.FINISHED_BY, Allen.OVERLAPPED_BY, Allen.MET_BY}
    assert ac.relations == {Allen.BEFORE}
    assert plan.return_names == ("id", "avg_speed")
    b = plan.symbols[1]
    assert [a.name for a in b.aggregates] == ["first(car_id)", "avg(speed)"]
    assert b.holds(tuple({"accel": 0, "speed": 71, "car_id": 1}[a] for a in plan.attributes))
    assert not b.holds(tuple({"accel": 0, "speed": 70, "car_id": 1}[a] for a in plan.attributes))


def test_lengths_follow_the_time_unit_of_the_stream() -> None:
    pattern = build_plan(LISTING_1).pattern_for("number", "ms")
    assert pattern.window == 300_000 and pattern.durations["B"] == (4000, 30_000)
    micros = build_plan(LISTING_1).pattern_for("datetime", None)
    assert micros.window == 300_000_000
    plain = "FROM S DEFINE A AS S.x > 1 AT LEAST 2, B AS S.x < 0 PATTERN A before B WITHIN 7"
    assert build_plan(plain).pattern_for("number", None).window == 7
    with pytest.raises(kleene.EventError, match="AT LEAST 5 seconds has a time unit"):
        build_plan(LISTING_1).pattern_for("number", None)


def test_compile_picks_the_language_by_the_first_keyword() -> None:
    assert isinstance(kleene.compile(LISTING_1), TemporalQuery)
    assert isinstance(
        kleene.compile("// aggressive drivers\n/* v2 */ from " + LISTING_1[5:]), TemporalQuery
    )
    assert isinstance(kleene.compile("PATTERN SEQ(A a, B b) WITHIN 10"), kleene.Query)


@pytest.mark.parametrize(
    ("change", "message", "where"),
    [
        (("A during B", "A durng B"), "unknown relation 'durng' (did you mean during?)", (5, 48)),
        (("C AS", "A AS"), "A is defined twice (first at line 2, column 8)", (4, 8)),
        (("A before C", "A before D"), "'D' is not defined", (7, 13)),
        (("first(B.car_id)", "first(D.car_id)"), "'D' is not a defined symbol", (9, 8)),
        (("first(B.car_id)", "firts(B.car_id)"), "(did you mean first?)", (9, 8)),
        (("avg(B.speed)", "avg(B)"), "avg needs an attribute", (9, 31)),
        (("avg(B.speed)", "B.speed"), "RETURN reads situations through aggregates", (9, 31)),
        (("CS.speed > 70", "X.speed > 70"), "unknown name 'X'", (3, 13)),
        (("CS.speed > 70", "CS.speed + 70"), "the predicate of B is a number", (3, 13)),
        (("CS.speed > 70", "avg(CS[].speed) > 70"), "a predicate reads one event's", (3, 13)),
        (("BETWEEN 4s AND 30s", "BETWEEN 40s AND 30s"), "no situation can satisfy", (3, 8)),
        (("A before C", "A before C; B meets C"), "relate one pair of symbols", (7, 25)),
        (("A before C", "A before A"), "not A to itself", (7, 13)),
        (("AND A before C", "AND A before C AND B after A"), "already related", (7, 28)),
        (("PARTITION BY CS.car_id", "PARTITION BY X.car_id"), "'X' is not the stream", (1, 33)),
    ],
)
def test_invalid_queries_are_refused_where_they_go_wrong(
    change: tuple[str, str], message: str, where: tuple[int, int]
) -> None:
    text = LISTING_1.replace(*change)
    assert text != LISTING_1
    found = error(text)
    assert message in found.message
    assert (found.line, found.column) == where
    assert str(found).endswith("^")


def test_a_symbol_outside_the_pattern_is_refused() -> None:
    text = LISTING_1.replace("C AS CS.accel < -9 AT LEAST 3s", "C AS CS.accel < -9, D AS CS.x")
    assert "D is defined but takes part in no relation" in error(text).message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("FROM S DEFINE A AS S.x > 1 PATERN A meets B WITHIN 5", "did you mean PATTERN?"),
        ("FROM S DEFINE A AS S.x > 1 AT LEST 5 PATTERN A meets B WITHIN 5", "LEAST or MOST"),
        ("FROM S DEFINE A AS S.x > 1 PATTERN A meets B", "'and', ';' or WITHIN"),
        ("FROM S DEFINE A AS S.x > 1 PATTERN A meets", "expected a name"),
        ("FROM S DEFINE A AS (S.x > 1 PATTERN A meets B WITHIN 5", "expected ')'"),
    ],
)
def test_syntax_errors_say_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        build_plan(text)
    assert message in str(caught.value)
    assert caught.value.line == 1


def test_within_must_be_positive() -> None:
    assert "WITHIN must be a positive" in error(LISTING_1.replace("5 MINUTES", "0")).message


def test_the_runtime_speaks_only_the_plan() -> None:
    """The deriver, admission, aggregates and runtime import nothing of the front end."""
    from tests.test_architecture import front_end_imports, modules

    runtime = ["aggregates", "admission", "deriver", "plan", "runtime", "matcher"]
    found = {
        name: uses
        for name, path in modules().items()
        if name.rpartition(".")[2] in runtime and name.startswith("kleene.tpstream.")
        if (uses := front_end_imports(name, path))
    }
    assert len([n for n in modules() if n.startswith("kleene.tpstream.")]) > len(runtime)
    assert not found
