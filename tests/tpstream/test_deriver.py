"""The deriver (Algorithm 1) against the oracle's brute-force derivation (Definitions
6-8), and section 5.3's rules for reporting started situations."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings

from kleene.lang.tpstream import parse
from kleene.oracle import tpstream as oracle
from kleene.tpstream.compile import build_plan
from kleene.tpstream.deriver import Deriver
from tests.tpstream.streams import events, queries


def derive_all(text: str, stream: list[dict[str, Any]]) -> tuple[dict, dict, dict]:
    """Per (key, symbol): finished situations, started reports (time, start), and the
    derivers."""
    plan = build_plan(text)
    pattern = plan.pattern_for("number", None)
    derivers: dict[tuple[Any, ...], Deriver] = {}
    finished: dict[tuple[Any, str], list[tuple[Any, Any, int, int]]] = {}
    started: dict[tuple[Any, str], list[tuple[Any, Any]]] = {}
    for position, e in enumerate(stream):
        key = (e["k"],)
        d = derivers.setdefault(key, Deriver(plan, pattern, key))
        new, done = d.push(e["timestamp"], position, tuple(e[a] for a in plan.attributes))
        for s in new:
            assert s.end is None and s.key == key
            started.setdefault((key, s.symbol), []).append((e["timestamp"], s.start))
        for s in done:
            assert s.end == e["timestamp"]
            finished.setdefault((key, s.symbol), []).append(
                (s.start, s.end, s.first, s.last, dict(s.aggregates))
            )
    return finished, started, derivers


@settings(max_examples=100, deadline=None)
@given(queries(), events())
def test_deriver_equals_the_oracle(text: str, stream: list[dict[str, Any]]) -> None:
    finished, _, _ = derive_all(text, stream)
    wanted = {s.name: s.aggregates for s in build_plan(text).symbols}

    def summaries(s: oracle.OracleSituation) -> dict[str, Any]:
        return {a.name: oracle.summary(a.func, a.attr or "", s) for a in wanted[s.symbol]}

    expected = {
        (key, symbol): [
            (s.start, s.end, s.positions[0], s.positions[-1], summaries(s)) for s in found
        ]
        for key, by_symbol in oracle.derive(parse(text), stream).items()
        for symbol, found in by_symbol.items()
        if found
    }
    assert finished == expected


@settings(max_examples=60, deadline=None)
@given(queries(), events())
def test_started_situations_follow_the_duration_rules(
    text: str, stream: list[dict[str, Any]]
) -> None:
    """Without a duration constraint a situation is reported at its start; with only a
    minimum, at the first event where its length so far reaches it; with a maximum,
    never (section 5.3)."""
    _, started, _ = derive_all(text, stream)
    query = parse(text)
    expected: dict[tuple[Any, str], list[tuple[Any, Any]]] = {}
    for key, part in oracle.partitions(query, stream).items():
        for d in query.definitions:
            if d.maximum is not None:
                continue
            low = 0 if d.minimum is None else d.minimum.amount
            ok = [oracle.holds(d.predicate, e) for _, e in part]
            run_start = None
            reported = False
            for (_, e), holds in zip(part, ok, strict=True):
                if not holds:
                    run_start, reported = None, False
                    continue
                if run_start is None:
                    run_start = e["timestamp"]
                if not reported and e["timestamp"] - run_start >= low:
                    expected.setdefault((key, d.symbol), []).append((e["timestamp"], run_start))
                    reported = True
    assert started == expected
