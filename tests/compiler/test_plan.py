"""Compilation to NFA^b: states, conjunct placement, the state vector, partition keys."""

import pytest

import kleene

QUERY3 = """PATTERN SEQ(Stock+ a[], Stock b)
WHERE skip_till_next_match(a[], b) {
    [symbol] and a[1].volume > 1000 and a[i].price > avg(a[..i-1].price)
    and b.volume < 0.8 * a[a.LEN].volume }
WITHIN 1 hour"""


def plan(text, **options):
    return kleene.compile(text, **options).plan


def test_states_follow_the_pattern():
    p = plan("PATTERN SEQ(A a, B+ b[], ~(D d), C c)")
    assert [(s.name, s.kind) for s in p.states] == [
        ("a", "single"),
        ("b[1]", "first"),
        ("b[i]", "rest"),
        ("c", "single"),
    ]
    assert [s.last for s in p.states] == [False, False, False, True]
    assert [(n.var, n.before, n.after) for n in p.negations] == [("d", 1, 2)]


def test_conjuncts_sit_on_the_edge_of_their_last_identifier():
    p = plan(QUERY3)
    first, rest, b = p.states
    assert first.property_text == ("a[1].volume > 1000",)
    assert rest.edge_text == ("a[i].price > avg(a[..i-1].price)",)
    assert b.edge_text == ("b.volume < 0.8 * a[a.LEN].volume",)
    assert rest.proceed_text == ()


def test_iterator_predicate_without_previous_also_applies_to_the_first_element():
    p = plan("PATTERN SEQ(A+ a[], B b) WHERE skip_till_next_match { a[i].x > 3 }")
    assert p.states[0].property_text == ("a[i].x > 3",)
    assert p.states[1].property_text == ("a[i].x > 3",)


def test_array_end_conditions_go_on_the_proceed_edge():
    p = plan("PATTERN SEQ(A+ a[], B b) WHERE skip_till_next_match { a.LEN >= 3 }")
    assert p.states[1].proceed_text == ("a.LEN >= 3",)


def test_state_vector_holds_what_later_edges_read():
    assert plan(QUERY3).layout.describe() == ["sum(a[].price)", "a.LEN", "a[a.LEN].volume"]


@pytest.mark.parametrize(
    "where,partition,hashed",
    [
        ("[symbol]", ("symbol",), ("symbol",)),
        ("a.symbol = b.symbol", (), ("symbol",)),
        ("[symbol, venue]", ("symbol", "venue"), ("symbol", "venue")),
        ("a.job = b.jid", (), ("jid|job",)),
        ("[venue] and a.symbol = b.symbol", ("venue",), ("venue", "symbol")),
        ("a.symbol = b.symbol or a.x = 1", (), ()),
        ("a.symbol = 'X'", (), ()),
    ],
)
def test_partition_and_hash_key_inference(where, partition, hashed):
    # the partition is the equivalence tests'; under skip till any match runs are also
    # indexed by the attributes that equalities tie across every variable
    q = kleene.compile(f"PATTERN SEQ(A a, B b) WHERE skip_till_any_match {{ {where} }}")
    assert q.partition_attributes == partition
    assert (q.plan.key.names if q.plan.routed else ()) == hashed


def test_partition_contiguity_routes_by_the_partition_only():
    text = "PATTERN SEQ(A a, B b) WHERE partition_contiguity {{ {} }}"
    tested = plan(text.format("[venue] and a.symbol = b.symbol"))
    assert tested.routed and tested.key.names == ("venue",)
    assert not plan(text.format("a.symbol = b.symbol")).routed
    # non-overlap output is per partition, so it routes by the partition too
    nonoverlap = plan(
        "PATTERN SEQ(A a, B b) WHERE skip_till_any_match { a.symbol = b.symbol }",
        output="non-overlap",
    )
    assert not nonoverlap.routed


def test_skip_till_next_match_hashes_only_by_keys_checked_on_arrival():
    text = "PATTERN SEQ(A a, B b, C c) WHERE skip_till_next_match {{ {} }}"
    # b.x is compared with a.x when b is taken: every class value is checked on arrival
    assert plan(text.format("a.x = b.x and b.x = c.x")).key.names == ("x",)
    # b.x is compared only when c arrives: a B of another x would still be taken, so
    # hiding it from the run (routing) would change the result
    assert not plan(text.format("a.x = c.x and b.x = c.x")).routed
    assert plan(text.format("a.x = c.x and b.x = c.x"), strategy="skip_till_any_match").routed


def test_partition_key_needs_every_positive_variable():
    q = kleene.compile("PATTERN SEQ(A a, B b, C c) WHERE skip_till_any_match { a.k = b.k }")
    assert q.partition_attributes == ()


def test_negated_conjuncts_do_not_make_a_key():
    q = kleene.compile(
        "PATTERN SEQ(A a, ~(N n), B b) WHERE skip_till_any_match { a.k = n.k and n.k = b.k }"
    )
    assert q.partition_attributes == ()


def test_strict_contiguity_never_routes_by_key():
    assert not plan(QUERY3, strategy="strict_contiguity").routed
    assert plan(QUERY3, strategy="partition_contiguity").routed


def test_explain_shows_the_automaton():
    text = kleene.compile(QUERY3).explain()
    for needle in (
        "strategy: skip_till_next_match",
        "partition key: symbol",
        "[1] a[i]",
        "take -> [1]",
        "proceed -> [2]",
        "begin -> F",
        "window: 3600",
    ):
        assert needle in text


def test_auto_engine_postpones_kleene_under_skip_till_any_match():
    q = kleene.compile("PATTERN SEQ(A a, B+ b[], C c) WHERE skip_till_any_match { }")
    assert q.config.engine == "postpone"
    assert q.explain().startswith("engine: postpone (Kleene closure under skip till any")
    assert kleene.compile(QUERY3).config.engine == "nfa"
    assert kleene.compile(QUERY3, engine="merge").config.engine == "merge"


def test_engine_errors():
    with pytest.raises(kleene.QueryError, match="postponing engine"):
        kleene.compile(QUERY3, engine="postpone")
    with pytest.raises(kleene.QueryError, match="unknown engine"):
        kleene.compile(QUERY3, engine="fastest")


def test_explain_names_the_partition_and_the_hash_key():
    text = "PATTERN SEQ(A a, B b) WHERE {} {{ [venue] and a.symbol = b.symbol }}"
    hashed = kleene.compile(text.format("skip_till_any_match")).explain()
    assert "partition key: venue (runs indexed by hash key venue, symbol)" in hashed
    contiguous = kleene.compile(text.format("partition_contiguity")).explain()
    assert "partition key: venue (runs indexed by key)" in contiguous


def test_the_module_docstring_lists_the_passes_in_the_order_they_run():
    import re

    from kleene.compiler import build

    listed = re.findall(r"^\d+\. ``(\w+)``", build.__doc__ or "", re.MULTILINE)
    assert listed == [p.__name__ for p in build.PASSES]
    assert all(p.__doc__ for p in build.PASSES)
