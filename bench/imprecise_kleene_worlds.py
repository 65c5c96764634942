"""The plain-enumeration baseline of ``bench.imprecise_kleene``: Kleene closure over
interval events as session 5 evaluated it, each partial signature keeping every world
(the instant of each selected event, U^k of them for k events of U points), with no
confidence threshold. Kept unchanged as the baseline of SASE++ Figure 6(a); the engine
uses :mod:`kleene.imprecise.kleene_dp`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from kleene.imprecise.kleene_dp import KleeneFramework
from kleene.imprecise.model import IntervalEvent, Probability
from kleene.imprecise.result import ImpreciseMatch

# a partial world: the instant of each selected event (in selection order), its probability
World = tuple[tuple[int, ...], Probability]


class WorldsKleene(KleeneFramework):
    """Admitted interval events in; at the end of the input, every signature whose
    confidence passes ``keep``, each partial signature carrying its worlds."""

    def flush(self) -> list[ImpreciseMatch]:
        out: list[ImpreciseMatch] = []
        for chosen, worlds in self._signatures(0, [], [((), 1)]):
            result = self._result(chosen, worlds)
            if result is not None:
                out.append(result)
        return out

    def _signatures(
        self, k: int, chosen: list[tuple[int, IntervalEvent]], worlds: list[World]
    ) -> Iterator[tuple[list[tuple[int, IntervalEvent]], list[World]]]:
        """Depth first over components k.. (Algorithm 1 for the Kleene ones)."""
        if k == len(self.components):
            yield chosen, worlds
            return
        _, kleene, etype = self.components[k]
        candidates = self._candidates(etype)
        for i, e in enumerate(candidates):
            grown = self._extend(worlds, chosen, k, e)
            if not self._alive(grown):
                continue
            now = [*chosen, (k, e)]
            yield from self._signatures(k + 1, now, grown)
            if kleene:
                yield from self._more(k, i, candidates, now, grown)

    def _more(
        self,
        k: int,
        i: int,
        candidates: Sequence[IntervalEvent],
        chosen: list[tuple[int, IntervalEvent]],
        worlds: list[World],
    ) -> Iterator[tuple[list[tuple[int, IntervalEvent]], list[World]]]:
        """The Kleene sets of component k grown from ``chosen`` by events after e[i]."""
        for j in range(i + 1, len(candidates)):
            e = candidates[j]
            grown = self._extend(worlds, chosen, k, e)
            if not self._alive(grown):
                continue
            now = [*chosen, (k, e)]
            yield from self._signatures(k + 1, now, grown)
            yield from self._more(k, j, candidates, now, grown)

    def _alive(self, worlds: list[World]) -> bool:
        if not worlds:
            return False
        return bool(self.keep(sum((p for _, p in worlds), start=0 * worlds[0][1])))

    def _extend(
        self, worlds: list[World], chosen: list[tuple[int, IntervalEvent]], k: int, e: IntervalEvent
    ) -> list[World]:
        """The partial worlds with e selected into component k at each of its instants:
        after every event of earlier components, apart from the events of component k,
        within the window."""
        earlier = [n for n, (c, _) in enumerate(chosen) if c < k]
        same = [n for n, (c, _) in enumerate(chosen) if c == k]
        if any(x.id == e.id for _, x in chosen):
            return []
        out: list[World] = []
        for times, p in worlds:
            floor = max((times[n] for n in earlier), default=None)
            taken = {times[n] for n in same}
            low = min(times, default=e.lower)
            high = max(times, default=e.upper)
            for offset, q in enumerate(e.pmf):
                t = e.lower + offset
                if not q or (floor is not None and t <= floor) or t in taken:
                    continue
                if times and self.window is not None and max(high, t) - min(low, t) > self.window:
                    continue
                out.append(((*times, t), p * q))
        return out

    def _result(
        self, chosen: list[tuple[int, IntervalEvent]], worlds: list[World]
    ) -> ImpreciseMatch | None:
        confidence: Probability = 0 * worlds[0][1]
        start = end = None
        vector = None
        for times, p in worlds:
            reached = self._accepts(chosen, times)
            if reached is None:
                continue
            confidence += p
            start = min(times) if start is None else min(start, *times)
            end = max(times) if end is None else max(end, *times)
            vector = reached if vector is None else vector
        if vector is None or not self.keep(confidence):
            return None
        assert start is not None and end is not None
        return self.match(chosen, vector, start, end, confidence)

    def _accepts(
        self, chosen: list[tuple[int, IntervalEvent]], times: tuple[int, ...]
    ) -> tuple[Any, ...] | None:
        """The state vector after the plan's edges select the events in time order, or
        None when some edge or proceed formula fails."""
        steps = self.steps
        states = self.plan.states
        order = sorted(range(len(chosen)), key=lambda n: times[n])
        first_point = chosen[order[0]][1].at(times[order[0]])
        key = steps.key(first_point)
        if key is None:
            return None
        vector: tuple[Any, ...] | None = self.plan.initial_vector
        j: int | None = 0
        for n in order:
            var = self.components[chosen[n][0]][0]
            point = chosen[n][1].at(times[n])
            assert j is not None and vector is not None
            state = states[j]
            if state.var != var:
                if state.exit is None or state.proceed is None or not state.proceed(vector):
                    return None
                j = state.exit
                state = states[j]
            vector = steps.take(j, point, key, vector)
            if vector is None:
                return None
            j = state.then
        if j is not None and vector is not None:
            head = states[j]
            if head.kind != "rest" or head.exit is not None or head.proceed is None:
                return None
            if not head.proceed(vector):
                return None
        return vector
