"""Result construction for postponed matching (SIGMOD 2014, section 5.1).

An intermediate match is a list of *items* in pattern order: anchors (the event chosen
for a single variable) and segments (the candidate events collected for a Kleene
variable). Construction enumerates every way to pick a non-empty, ordered subsequence
of each segment and applies the exact edge formulas of the plan (begin for a Kleene
array's first element, take for the others, proceed when the array ends) as it goes, so
a prefix that fails is abandoned with everything that extends it and the state vector
of a prefix is computed once for all its extensions.
"""

from __future__ import annotations

from typing import Any

from kleene.compiler.plan import State
from kleene.errors import RunLimitError
from kleene.runtime.core import Selection

# (state index, position, event) for a single variable
Anchor = tuple[int, int, tuple[Any, ...]]
# (first-state index, candidates [(position, event, safe)], how many, whether the last
# one and whether the first one must be picked)
Segment = tuple[int, list[tuple[int, tuple[Any, ...], bool]], int, bool, bool]


def construct(
    states: tuple[State, ...],
    items: list[Anchor | Segment],
    initial: tuple[Any, ...],
    limit: int,
) -> list[tuple[list[Selection], tuple[Any, ...]]]:
    """All matches (selections and final vector) the intermediate match contains."""
    results: list[tuple[list[Selection], tuple[Any, ...]]] = []
    # frame: (item index, V, selections so far as a linked list, next candidate, chosen)
    stack: list[tuple[int, tuple[Any, ...], Any, int, int]] = [(0, initial, None, 0, 0)]
    while stack:
        k, vector, chosen, j, count = stack.pop()
        if k == len(items):
            results.append((_unlink(chosen), vector))
            if len(results) > limit:
                raise RunLimitError(
                    f"one intermediate match expands to more than {limit} matches; "
                    "narrow the window or raise max_runs"
                )
            continue
        item = items[k]
        if len(item) == 3:
            state_index, position, e = item
            begun = states[state_index].edge(e, vector)
            if begun is not None:
                stack.append((k + 1, begun, ((state_index, position, e[2], e[1]), chosen), 0, 0))
            continue
        first, candidates, length, forced, fixed = item
        take = states[first + 1]
        if count and not forced and take.proceed(vector):  # type: ignore[misc]
            stack.append((k + 1, vector, chosen, 0, 0))  # the array ends here
        stop = length - 1 if forced else length
        if fixed and not count:
            stop = min(stop, 1)  # only the run's own first event can come first
        for jj in range(stop - 1, j - 1, -1):
            position, e = candidates[jj][0], candidates[jj][1]
            state = take if count else states[first]
            nxt = state.edge(e, vector)
            if nxt is not None:
                link = ((state.index, position, e[2], e[1]), chosen)
                stack.append((k, nxt, link, jj + 1, count + 1))
        if forced and length and not (fixed and not count and length > 1):
            position, e = candidates[length - 1][0], candidates[length - 1][1]
            state = take if count else states[first]
            nxt = state.edge(e, vector)
            if nxt is not None and take.proceed(nxt):  # type: ignore[misc]
                link = ((state.index, position, e[2], e[1]), chosen)
                stack.append((k + 1, nxt, link, 0, 0))
    return results


def _unlink(chosen: Any) -> list[Selection]:
    out = []
    while chosen is not None:
        out.append(chosen[0])
        chosen = chosen[1]
    out.reverse()
    return out
