"""The papers' example queries, written as text and parsed (SIGMOD 2008, Figure 1;
SIGMOD 2014, Table 1), with results worked out by hand from docs/semantics.md."""

from __future__ import annotations

from kleene.lang import parse
from kleene.oracle import evaluate
from tests.helpers import id_sets, match


def stock(name: str, time: int, symbol: str, price: int, volume: int) -> dict[str, object]:
    return {
        "type": "Stock",
        "id": name,
        "timestamp": time,
        "symbol": symbol,
        "price": price,
        "volume": volume,
    }


QUERY_3 = """
PATTERN SEQ(Stock+ a[], Stock b)
WHERE skip_till_next_match(a[], b) {
    [symbol]
    and a[1].volume > 1000
    and a[i].price > avg(a[..i-1].price)
    and b.volume < 0.8 * a[a.LEN].volume }
WITHIN 1 hour
"""


def test_sigmod_2008_query_3() -> None:
    events = [
        stock("s1", 0, "IBM", 10, 1500),
        stock("s2", 1, "IBM", 12, 1200),
        stock("s3", 2, "X", 100, 5000),
        stock("s4", 3, "IBM", 11, 900),
        stock("s5", 4, "IBM", 13, 1000),
        stock("s6", 5, "IBM", 9, 700),
    ]
    # Runs begin at s1, s2 (IBM, volume > 1000) and s3 (X, never continued). s1's run takes
    # s2 (12 > 10) but cannot proceed on it (1200 < 0.8 * 1500 is false); s4 fails the take
    # (11 > avg(10, 12) is false) and both proceeds (900 < 960) and is ignored; s5 is taken
    # (13 > 11); s6 proceeds (700 < 800). s2's run goes the same way from avg 12.
    assert id_sets(evaluate(parse(QUERY_3), events)) == {
        match(a=("s1", "s2"), b="s4"),
        match(a=("s1", "s2", "s5"), b="s6"),
        match(a=("s2",), b="s4"),
        match(a=("s2", "s5"), b="s6"),
    }


SHOPLIFTING = """
PATTERN SEQ(SHELF a, ~(REGISTER b), EXIT c)
WHERE skip_till_next_match(a, b, c) { a.tag_id = b.tag_id and a.tag_id = c.tag_id }
WITHIN 12 hours
"""


def test_sigmod_2008_query_1_shoplifting() -> None:
    events = [
        {"type": "SHELF", "id": "s1", "timestamp": 0, "tag_id": 1},
        {"type": "SHELF", "id": "s2", "timestamp": 10, "tag_id": 2},
        {"type": "REGISTER", "id": "r1", "timestamp": 20, "tag_id": 1},
        {"type": "EXIT", "id": "e1", "timestamp": 30, "tag_id": 1},
        {"type": "EXIT", "id": "e2", "timestamp": 40, "tag_id": 2},
        {"type": "SHELF", "id": "s3", "timestamp": 50, "tag_id": 3},
        {"type": "EXIT", "id": "e3", "timestamp": 50 + 12 * 3600 + 1, "tag_id": 3},
    ]
    # Tag 1 was paid for (r1 between s1 and e1); tag 2 left unpaid; tag 3 left after the
    # 12-hour window.
    assert id_sets(evaluate(parse(SHOPLIFTING), events)) == {match(a="s2", c="e2")}


HADOOP_Q1 = """
PATTERN SEQ(JobStart a, Mapper+ b[], JobEnd c)
WHERE [job_id]
WITHIN 1 day
RETURN avg(b[].period), max(b[].period)
"""


def test_sigmod_2014_hadoop_query_1() -> None:
    events = [
        {"type": "JobStart", "id": "j1", "timestamp": 0, "job_id": 1},
        {"type": "Mapper", "id": "m1", "timestamp": 1, "job_id": 1, "period": 3},
        {"type": "JobStart", "id": "j2", "timestamp": 2, "job_id": 2},
        {"type": "Mapper", "id": "m2", "timestamp": 3, "job_id": 2, "period": 10},
        {"type": "Mapper", "id": "m3", "timestamp": 4, "job_id": 1, "period": 5},
        {"type": "JobEnd", "id": "e1", "timestamp": 5, "job_id": 1},
        {"type": "JobEnd", "id": "e2", "timestamp": 6, "job_id": 2},
    ]
    found = {m.ids["a"]: (m.ids, m.values) for m in evaluate(parse(HADOOP_Q1), events)}
    # Each job's run ignores the other job's events (skip till next match).
    assert found == {
        ("j1",): (
            {"a": ("j1",), "b": ("m1", "m3"), "c": ("e1",)},
            {"avg(b[].period)": 4.0, "max(b[].period)": 5},
        ),
        ("j2",): (
            {"a": ("j2",), "b": ("m2",), "c": ("e2",)},
            {"avg(b[].period)": 10.0, "max(b[].period)": 10},
        ),
    }
