"""Partition-key inference and partition contiguity (docs/semantics.md, "Partitions")."""

from __future__ import annotations

from kleene.lang import ast
from kleene.oracle import evaluate, partition_attributes
from tests.helpers import id_sets, match, stream
from tests.oracle.build import cur, equiv, first, neg, one, op, plus, prev, query, ref

PARTITION = ast.Strategy.PARTITION_CONTIGUITY
NEXT = ast.Strategy.SKIP_TILL_NEXT_MATCH
STRICT = ast.Strategy.STRICT_CONTIGUITY

SYMBOL_QUERY = query(one("A", "a"), plus("B", "b"), one("C", "c"), where=(equiv("symbol"),))


def test_partition_contiguity_follows_each_symbol() -> None:
    events = stream(
        "a1@1",
        "a2@2",
        "b1@3",
        "b2@4",
        "b3@5",
        "c1@6",
        "c2@7",
        symbol=["X", "Y", "X", "Y", "X", "Y", "X"],
    )
    # X: a1 b1 b3 c2 is contiguous once the Y events are ignored; Y: a2 b2 c1 likewise.
    assert id_sets(evaluate(SYMBOL_QUERY, events, strategy=PARTITION)) == {
        match(a="a1", b=("b1", "b3"), c="c2"),
        match(a="a2", b=("b2",), c="c1"),
    }
    # Strict contiguity: a1's run dies at a2, a2's at b1 (symbol X fails b[i].symbol = a.symbol).
    assert evaluate(SYMBOL_QUERY, events, strategy=STRICT) == []


def test_an_irrelevant_event_of_the_partition_kills_the_run() -> None:
    events = stream(
        "a1@1",
        "a2@2",
        "b1@3",
        "b2@4",
        "b3@5",
        "a3@5.5",
        "c1@6",
        "c2@7",
        symbol=["X", "Y", "X", "Y", "X", "X", "Y", "X"],
    )
    # a3 is in partition X: a1's run at b[i] can neither take, proceed nor ignore it; a3's
    # own run at b[1] dies at c2. Partition Y still matches.
    assert id_sets(evaluate(SYMBOL_QUERY, events, strategy=PARTITION)) == {
        match(a="a2", b=("b2",), c="c1"),
    }
    # Skip till next match ignores a3 (not a take), so a1's run survives.
    assert id_sets(evaluate(SYMBOL_QUERY, events, strategy=NEXT)) == {
        match(a="a1", b=("b1", "b3"), c="c2"),
        match(a="a2", b=("b2",), c="c1"),
    }


def test_an_equality_between_variables_forms_no_partition() -> None:
    q = query(
        one("A", "a"), one("B", "b"), where=(op("==", ref("a", "acct"), ref("b", "account")),)
    )
    events = [
        {"type": "A", "id": "a1", "timestamp": 1, "acct": 1},
        {"type": "B", "id": "b2", "timestamp": 2, "account": 2},
        {"type": "B", "id": "b1", "timestamp": 3, "account": 1},
    ]
    # No equivalence test: one partition, so partition contiguity is strict contiguity.
    # b2 fails b's begin formula (account 2) and cannot be ignored: a1's run dies. (Were
    # the equality a partition, b2 would lie outside a1's and be ignored: a1 b1.)
    assert evaluate(q, events, strategy=PARTITION) == []
    assert evaluate(q, events, strategy=STRICT) == []
    # Skip till next match ignores b2 (not a begin) and takes b1.
    assert id_sets(evaluate(q, events, strategy=NEXT)) == {match(a="a1", b="b1")}


PRICED = query(
    one("A", "a"),
    one("B", "b"),
    where=(equiv("symbol"), op("==", ref("a", "price"), ref("b", "price"))),
)


def test_with_an_equivalence_test_the_equality_stays_a_condition() -> None:
    events = stream("a1@1", "b1@2", "b2@3", symbol=["X", "X", "X"], price=[10, 11, 10])
    # Partition X holds all three events. b1 is the next event of a1's partition and
    # fails b.price = a.price, so a1's run dies. (Were the price part of the partition,
    # b1 (X, 11) would lie outside a1's (X, 10) and be ignored: a1 b2.)
    assert evaluate(PRICED, events, strategy=PARTITION) == []
    assert id_sets(evaluate(PRICED, events, strategy=NEXT)) == {match(a="a1", b="b2")}
    # An event of another symbol is outside the partition and is ignored.
    other = stream("a1@1", "b1@2", "b2@3", symbol=["X", "Y", "X"], price=[10, 11, 10])
    assert id_sets(evaluate(PRICED, other, strategy=PARTITION)) == {match(a="a1", b="b2")}


def test_non_overlap_is_per_partition_of_the_equivalence_tests() -> None:
    # a1 b1 (price 1) and a2 b2 (price 2) overlap in time: with one partition (no
    # equivalence test) non-overlap keeps only the first; [price] keeps both.
    events = stream("a1@1", "a2@2", "b1@3", "b2@4", price=[1, 2, 1, 2])
    equal = query(
        one("A", "a"), one("B", "b"), where=(op("==", ref("a", "price"), ref("b", "price")),)
    )
    tested = query(one("A", "a"), one("B", "b"), where=(equiv("price"),))
    for q, expected in (
        (equal, {match(a="a1", b="b1")}),
        (tested, {match(a="a1", b="b1"), match(a="a2", b="b2")}),
    ):
        found = evaluate(q, events, strategy=NEXT, output=ast.OutputFormat.NON_OVERLAP)
        assert id_sets(found) == expected


def test_event_of_another_type_uses_the_common_attribute() -> None:
    q = query(one("A", "a"), one("B", "b"), where=(equiv("k"),))
    same = stream("a1@1", "z1@2", "b1@3", k=[1, 1, 1])
    other = stream("a1@1", "z1@2", "b1@3", k=[1, 2, 1])
    # z1 (k=1) is in the run's partition and is not a B: the run dies.
    assert evaluate(q, same, strategy=PARTITION) == []
    # z1 (k=2) is in another partition: ignored.
    assert id_sets(evaluate(q, other, strategy=PARTITION)) == {match(a="a1", b="b1")}


def test_event_without_the_key_attribute_is_in_no_partition() -> None:
    q = query(one("A", "a"), one("B", "b"), where=(equiv("k"),))
    events = [
        {"type": "A", "id": "a1", "timestamp": 1, "k": 1},
        {"type": "Z", "id": "z1", "timestamp": 2},
        {"type": "B", "id": "b1", "timestamp": 3, "k": 1},
    ]
    # z1 has no k: it belongs to no partition, so a1's run ignores it.
    assert id_sets(evaluate(q, events, strategy=PARTITION)) == {match(a="a1", b="b1")}


def test_inferred_keys() -> None:
    a, b, c = one("A", "a"), one("B", "b"), one("C", "c")
    bs = plus("B", "b")
    # An equivalence test over every variable.
    assert partition_attributes(query(a, b, where=(equiv("symbol"),))) == ("symbol",)
    # A strategy list that leaves c out ties only a and b.
    assert partition_attributes(query(a, b, c, where=(equiv("x"),), scope=("a", "b"))) == ()
    # Equalities between variables form no partition, however they tie the variables.
    chain = (op("==", ref("a", "x"), ref("b", "x")), op("==", ref("b", "x"), ref("c", "x")))
    assert partition_attributes(query(a, b, c, where=chain)) == ()
    assert partition_attributes(query(a, bs, where=(op("==", ref("a", "x"), cur("b", "x")),))) == ()
    consecutive = (
        op("==", ref("a", "x"), first("b", "x")),
        op("==", cur("b", "x"), prev("b", "x")),
    )
    assert partition_attributes(query(a, bs, where=consecutive)) == ()
    # With an equivalence test, only its attributes.
    assert partition_attributes(query(a, b, c, where=(equiv("k"), *chain))) == ("k",)
    # A negated variable is not needed to cover the key.
    assert partition_attributes(query(a, neg("N", "n"), b, where=(equiv("k"),))) == ("k",)
    # Two equivalence attributes give a two-part key.
    assert partition_attributes(query(a, b, where=(equiv("k", "j"),))) == ("j", "k")
