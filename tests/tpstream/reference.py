"""A naive situation matcher for testing the runtime around it (admission, RETURN,
snapshots) apart from kleene.tpstream.matcher: Algorithm 2 with a full scan of every
buffer, no low latency, no window purge; the window as kleene.tpstream.latency reads it."""

from __future__ import annotations

from itertools import product
from typing import Any

from kleene.tpstream.latency import established
from kleene.tpstream.model import Situation, TemporalMatch, TemporalPattern


class ScanMatcher:
    def __init__(self, pattern: TemporalPattern) -> None:
        self.pattern = pattern
        self.buffers: dict[str, list[Situation]] = {s: [] for s in pattern.symbols}

    def update(self, time: Any, started: Any, finished: Any) -> list[TemporalMatch]:
        found = []
        for s in finished:
            self.buffers[s.symbol].append(s)
            pools = [
                [s] if name == s.symbol else self.buffers[name] for name in self.pattern.symbols
            ]
            for combo in product(*pools):
                chosen = dict(zip(self.pattern.symbols, combo, strict=True))
                ends = [c.end for c in combo]
                if (
                    established(self.pattern, chosen) - min(c.start for c in combo)
                    > self.pattern.window
                ):
                    continue
                if all(c.holds(chosen[c.left], chosen[c.right]) for c in self.pattern.constraints):
                    found.append(TemporalMatch(s.key, chosen, max(ends), time))
        return found

    def matches(self, time: Any, started: Any, finished: Any) -> list[TemporalMatch]:
        return self.update(time, started, finished)

    def advance_to(self, time: Any, going_on: Any) -> None:
        """Nothing to purge: this matcher keeps every situation."""

    def held(self) -> int:
        return sum(map(len, self.buffers.values()))

    def flush(self, time: Any) -> list[TemporalMatch]:
        return []

    def state(self) -> Any:
        return [
            [
                *(s.symbol, s.key, s.start, s.end, s.first, s.last),
                *(dict(s.aggregates), s.first_id, s.last_id),
            ]
            for b in self.buffers.values()
            for s in b
        ]

    @classmethod
    def restore(cls, pattern: TemporalPattern, data: Any) -> ScanMatcher:
        m = cls(pattern)
        for item in data:
            m.buffers[item[0]].append(Situation(*item))
        return m
