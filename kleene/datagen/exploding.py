"""Adversarial inputs, one per kind of query, on which the number of matches grows
exponentially with the input: the checks that ``max_matches`` stops every kind while
its matches are produced, in bounded time and memory (tests/contract, bench/limits.py).

Each function returns ``(query text, events, compile options)``.
"""

from __future__ import annotations

from typing import Any

Events = list[dict[str, Any]]
Case = tuple[str, Events, dict[str, Any]]


def _ones(n: int, etype: str, last: str, types: str = "") -> Events:
    kinds = types or etype
    events = [
        {"type": kinds[i % len(kinds)], "id": i, "timestamp": i + 1, "x": 1} for i in range(n)
    ]
    return [*events, {"type": last, "id": n, "timestamp": n + 1, "x": 1}]


def sase(n: int = 40) -> Case:
    """A Kleene closure under skip till any match: 2^n - 1 matches."""
    text = (
        "PATTERN SEQ(A+ a[], C c) WHERE skip_till_any_match(a[], c) { a[i].x = a[i-1].x } "
        "WITHIN 100000"
    )
    return text, _ones(n, "A", "C"), {}


def program(n: int = 8) -> Case:
    """Each A is a derived R; the returned query's Kleene closure over them explodes
    (a definition's own matches count against the limit too, so n stays below it)."""
    text = (
        "DEFINE R AS PATTERN A a RETURN a.x AS x;\n"
        "PATTERN SEQ(R+ r[], C c) WHERE skip_till_any_match(r[], c) { r[i].x = r[i-1].x } "
        "WITHIN 100000"
    )
    return text, _ones(n, "A", "C"), {}


def interval(n: int = 24) -> Case:
    """n overlapping intervals under a Kleene closure (the VLDB 2010 point framework's
    worst case)."""
    text = (
        "PATTERN SEQ(A+ a[], B b) WHERE skip_till_any_match(a[], b) { a[i].x = a[i-1].x } "
        "WITHIN 1000"
    )
    events = [{"type": "A", "id": i, "lower": i, "upper": i + 30, "x": 1} for i in range(n)]
    last = {"type": "B", "id": n, "lower": n + 16, "upper": n + 16, "x": 1}
    return text, [*events, last], {"time": "interval"}


def tpstream(n: int = 2000) -> Case:
    """Many short A, B and C situations in one long window: configurations grow with
    the cube of the situations."""
    text = (
        "FROM S DEFINE A AS S.x = 0, B AS S.x = 1, C AS S.y = 0 "
        "PATTERN A before B AND B before C WITHIN 100000"
    )
    events = [{"id": i, "timestamp": i + 1, "x": i % 2, "y": (i // 3) % 2} for i in range(n)]
    return text, events, {}


def eventset(n: int = 24) -> Case:
    """Alternating A and B events, then a C: every pair of non-empty subsets of the As
    and the Bs is a match."""
    return "PATTERN SEQ({A+ a, B+ b}, C c) WITHIN 1000", _ones(n, "A", "C", types="AB"), {}


#: the case of each kind, by its name in kleene.kinds
BY_KIND = {
    "sase": sase,
    "program": program,
    "interval": interval,
    "tpstream": tpstream,
    "eventset": eventset,
}
