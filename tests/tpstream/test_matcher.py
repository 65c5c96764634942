"""The TPStream matcher against a brute-force reference (sections 4.4, 5.2, 5.3).

Random situation streams are fed as a deriver would: each symbol's situations are
disjoint; a situation is reported started at its start, at a deferred start when its
symbol has only a minimum duration, never when it has a maximum; it is reported
finished at its end when it satisfies its duration constraint. The reference is the
cross product of the finished situations filtered by the constraints and the window
(Definitions 11-13), and the earliest detection time is computed here from Table 2.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from kleene.tpstream.matcher import SituationMatcher
from kleene.tpstream.model import Allen, Constraint, Situation, TemporalPattern, holds

SYMBOLS = ("A", "B", "C", "D")

# Table 2's prefix groups (with the mirrored ones the text calls analogous), as
# ``left R right``; before/meets form a group whose bound is t3 anyway.
GROUPS = [
    {Allen.BEFORE, Allen.MEETS},
    {Allen.AFTER, Allen.MET_BY},
    {Allen.STARTS, Allen.EQUALS, Allen.STARTED_BY},
    {Allen.OVERLAPS, Allen.FINISHED_BY, Allen.CONTAINS},
    {Allen.OVERLAPPED_BY, Allen.FINISHES, Allen.DURING},
]


def relation_of(a: Situation, b: Situation) -> Allen:
    """The one Allen relation that holds of a, b (they are jointly exhaustive)."""
    (r,) = [r for r in Allen if holds(r, a.start, a.end, b.start, b.end)]
    return r


def pair_detection(c: Constraint, a: Situation, b: Situation) -> int:
    """t_d of the relation a, b satisfy: t3 of δ_R, or the later start when the
    constraint holds R's whole prefix group (section 5.3.1)."""
    r = relation_of(a, b)
    if any(r in g and g <= c.relations for g in GROUPS):
        return max(a.start, b.start)
    return sorted([a.start, a.end, b.start, b.end])[2]


def established(pattern: TemporalPattern, config: dict[str, Situation]) -> int:
    t = max(s.start for s in config.values())
    for c in pattern.constraints:
        t = max(t, pair_detection(c, config[c.left], config[c.right]))
    return t


def reference(pattern, streams):
    """{configuration id: configuration} of every match (Definitions 11-13)."""
    out = {}
    for combo in itertools.product(*(streams[x] for x in pattern.symbols)):
        config = dict(zip(pattern.symbols, combo, strict=True))
        if not all(c.holds(config[c.left], config[c.right]) for c in pattern.constraints):
            continue
        first = min(s.start for s in config.values())
        if established(pattern, config) - first <= pattern.window:
            out[ident(config)] = config
    return out


def ident(config):
    return tuple((x, config[x].start) for x in sorted(config))


def visible_from(pattern, s, lag: int) -> int:
    """When a deriver reports the situation: its start, a deferred start (the first
    event at or after start + minimum, ``lag`` later when events are sparse), or its
    end when it has a maximum duration or ends before the deferred start."""
    lo, hi = pattern.durations.get(s.symbol, (None, None))
    if hi is not None:
        return s.end
    if lo is None:
        return s.start
    return min(s.start + lo + lag, s.end)


def run(matcher, pattern, streams, lags):
    """Feed the streams as a deriver would; return the matches in output order."""
    started, finished = defaultdict(list), defaultdict(list)
    for x in pattern.symbols:
        for s in streams[x]:
            vis = visible_from(pattern, s, lags[s.symbol])
            if vis < s.end:
                started[vis].append(Situation(x, (), s.start, None, 0, 0))
            finished[s.end].append(s)
    out = []
    for t in sorted(set(started) | set(finished)):
        out.extend(matcher.update(t, started[t], finished[t]))
    out.extend(matcher.flush(max(finished, default=0) + 1))
    return out


@st.composite
def situations(draw, symbol, durations):
    """Disjoint situations of one symbol, each within its duration constraint (the
    deriver drops the others)."""
    lo, hi = durations.get(symbol, (None, None))
    out, t = [], draw(st.integers(0, 6))
    for _ in range(draw(st.integers(1, 6))):
        d = draw(st.one_of(st.integers(1, 9), st.integers(10, 40)))
        d = min(max(d, lo or 1), hi or d)
        out.append(Situation(symbol, (), t, t + d, 0, 0))
        t += d + draw(st.integers(1, 6))
    return out


GROUP_SETS = st.sampled_from([frozenset(g) for g in GROUPS]).flatmap(
    lambda g: st.frozensets(st.sampled_from(list(Allen)), max_size=2).map(lambda e: g | e)
)
RELATION_SETS = st.one_of(
    st.frozensets(st.sampled_from(list(Allen)), max_size=4), GROUP_SETS, GROUP_SETS
)


@st.composite
def cases(draw):
    """A pattern over 2-4 symbols and streams for it; each constraint is made to hold,
    most of the time, of one configuration drawn from the streams, so matches occur."""
    n = draw(st.integers(2, 4))
    symbols = SYMBOLS[:n]
    durations = {}
    for x in symbols:
        kind = draw(st.sampled_from(["none", "none", "none", "min", "max", "both"]))
        lo, hi = draw(st.integers(1, 6)), draw(st.integers(6, 30))
        if kind != "none":
            durations[x] = (lo if kind != "max" else None, hi if kind != "min" else None)
    streams = {x: draw(situations(x, durations)) for x in symbols}
    seed = {x: draw(st.sampled_from(v)) for x, v in streams.items() if v}
    pairs = list(itertools.combinations(symbols, 2))
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=n, unique=True))
    constraints = []
    for a, b in chosen:
        rels = draw(RELATION_SETS)
        if a in seed and b in seed and draw(st.integers(0, 9)):
            rels |= {relation_of(seed[a], seed[b])}
        constraints.append(Constraint(a, b, rels))
    window = draw(st.one_of(st.integers(3, 15), st.integers(16, 100)))
    pattern = TemporalPattern(symbols, tuple(constraints), window, durations)
    lags = {x: draw(st.sampled_from([0, 0, 0, 1, 5, 12])) for x in symbols}
    return pattern, streams, lags


def expected_detection(pattern, config, lags):
    vis = max(visible_from(pattern, s, lags[s.symbol]) for s in config.values())
    return max(established(pattern, config), vis)


@settings(max_examples=60, deadline=None)
@given(cases())
def test_every_order_waiting_for_ends_equals_reference(case):
    pattern, streams, lags = case
    want = reference(pattern, streams)
    for order in itertools.permutations(pattern.symbols):
        got = run(SituationMatcher(pattern, order, low_latency=False), pattern, streams, lags)
        ids = [ident(m.situations) for m in got]
        assert len(ids) == len(set(ids)), "duplicate match"
        assert set(ids) == set(want), order
        for m in got:
            assert m.time == m.detected == max(s.end for s in m.situations.values())


@settings(max_examples=60, deadline=None)
@given(cases())
def test_low_latency_same_matches_at_earliest_time(case):
    pattern, streams, lags = case
    want = reference(pattern, streams)
    late = {
        ident(m.situations): m.detected
        for m in run(SituationMatcher(pattern, low_latency=False), pattern, streams, lags)
    }
    for order in itertools.permutations(pattern.symbols):
        got = run(SituationMatcher(pattern, order), pattern, streams, lags)
        ids = [ident(m.situations) for m in got]
        assert len(ids) == len(set(ids)), "duplicate match"
        assert set(ids) == set(want), order
        for m in got:
            config = want[ident(m.situations)]
            assert m.detected == expected_detection(pattern, config, lags), (order, config)
            assert m.detected <= late[ident(m.situations)]
            assert m.detected >= max(s.start for s in config.values())
            for x, s in m.situations.items():  # what the matcher knew then
                assert s.start == config[x].start
                assert s.end is None or s.end == config[x].end <= m.detected
