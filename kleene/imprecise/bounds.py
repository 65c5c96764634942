"""Valid lower and upper bounds of the events of a match (VLDB 2010, section 4.1 and
Appendices C.1-C.2).

In a point match t_1 < ... < t_l, so each event's instant lies in a *valid interval*
[vlb, vub] narrower than its uncertainty interval: vlb_j = max(vlb_{j-1} + 1, lower_j)
(first pass), rub_j = min(rub_{j+1} - 1, upper_j) (second pass) and, with a window W,
vub_l = min(rub_l, rub_1 + W) then vub_j = min(vub_{j+1} - 1, rub_j) (third pass). An
empty valid interval (vlb > vub) means the events form no match.

The window is the inclusive one of point events (t_l - t_1 <= W); the paper's appendix
reads it as < W, hence its ``T_m = rub_1 + W - 1``.

Every bound here is a necessary condition only: any point match of the events has each
t_j inside [vlb_j, vub_j], so pruning by them never loses a match. Whether a match is
possible at all, and with which probability, the confidence computation
(:mod:`kleene.imprecise.confidence`) decides over the points of the valid intervals.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

Interval = tuple[int, int]  # (lower, upper) or (vlb, vub)
Slots = tuple[Interval | None, ...]  # per pattern component, None where unmatched


@dataclass(frozen=True)
class Passes:
    """The three passes of section 4.1 over a whole match: per event its vlb, rub and
    vub; ``valid`` is False when some valid interval is empty."""

    vlb: tuple[int, ...]
    rub: tuple[int, ...]
    vub: tuple[int, ...]
    valid: bool


def three_passes(intervals: Sequence[Interval], window: float | None) -> Passes:
    """The bounds of the events of a complete match, in query order (section 4.1)."""
    vlb = [intervals[0][0]]
    for lower, _ in intervals[1:]:
        vlb.append(max(vlb[-1] + 1, lower))
    rub = [intervals[-1][1]]
    for _, upper in reversed(intervals[:-1]):
        rub.append(min(rub[-1] - 1, upper))
    rub.reverse()
    vub = list(rub)
    if window is not None and rub[-1] > rub[0] + window:
        vub[-1] = int(rub[0] + window)
        for j in range(len(vub) - 2, -1, -1):
            vub[j] = min(vub[j + 1] - 1, rub[j])
    valid = all(lo <= hi for lo, hi in zip(vlb, vub, strict=True))
    return Passes(tuple(vlb), tuple(rub), tuple(vub), valid)


def extend(prefix: Slots, interval: Interval, window: float | None) -> Slots | None:
    """The one-pass form of Appendix C.1: the valid intervals of a partial match
    ``prefix`` (in query order) extended by an event with uncertainty interval
    ``interval``, or None when ext() fails. Step 1 sets the new event's vlb from the
    last one's and its vub to its upper bound; step 2 lowers the vubs of the prefix
    backwards, stopping at the first one it leaves unchanged (those before it stay as
    they were); step 3 checks vlb <= upper and the window against the first event's
    vub."""
    lower, upper = interval
    if not prefix:
        return ((lower, upper),) if lower <= upper else None
    last = prefix[-1]
    vlb = max(last[0] + 1, lower)  # type: ignore[index]
    if vlb > upper:
        return None
    if window is not None and vlb > prefix[0][1] + window:  # type: ignore[index]
        return None
    k, bound = len(prefix) - 1, upper - 1  # vub_k = min(vub_{k+1} - 1, vub_k)
    if last[1] <= bound:  # type: ignore[index]
        return (*prefix, (vlb, upper))
    out: list[Interval | None] = [*prefix, (vlb, upper)]
    while k >= 0 and (s := out[k])[1] > bound:  # type: ignore[index]
        out[k] = (s[0], bound)  # type: ignore[index]
        k, bound = k - 1, bound - 1
    return tuple(out)


def place(slots: Slots, j: int, interval: Interval, window: float | None) -> Slots | None:
    """The any-state form of Appendix C.2, step 2: the valid intervals after an event
    with uncertainty interval ``interval`` takes component j of a run whose
    matched components have valid intervals ``slots`` (each non-empty). Within the
    contiguous block of matched components around j, vlbs are raised forward from j
    and vubs lowered backward from j; each pass stops at the first bound it leaves
    unchanged, since the bounds past it stay as they were; other blocks keep theirs.
    None when a valid interval becomes empty or the events at the two ends of the run
    break the window."""
    lo, hi = interval
    n = len(slots)
    if j and (s := slots[j - 1]) is not None and s[0] >= lo:
        lo = s[0] + 1
    if j + 1 < n and (s := slots[j + 1]) is not None and s[1] <= hi:
        hi = s[1] - 1
    if lo > hi:
        return None
    out = list(slots)
    out[j] = (lo, hi)
    k, bound = j + 1, lo  # forward: vlb_k = max(vlb_{k-1} + 1, vlb_k)
    while k < n and (s := out[k]) is not None and s[0] <= bound:
        bound += 1
        if bound > s[1]:
            return None
        out[k] = (bound, s[1])
        k += 1
    k, bound = j - 1, hi  # backward: vub_k = min(vub_{k+1} - 1, vub_k)
    while k >= 0 and (s := out[k]) is not None and s[1] >= bound:
        bound -= 1
        if bound < s[0]:
            return None
        out[k] = (s[0], bound)
        k -= 1
    if window is not None:
        first = last = (lo, hi)
        for s in out:
            if s is not None:
                first = s
                break
        for s in reversed(out):
            if s is not None:
                last = s
                break
        if last[0] > first[1] + window:
            return None
    return tuple(out)


def finish(slots: Slots, window: float | None) -> tuple[Interval, ...] | None:
    """The third pass over a complete match's valid intervals: the last event's vub is
    at most the first's plus W, carried backwards; None when an interval empties."""
    if None not in slots and (window is None or slots[-1][1] <= slots[0][1] + window):  # type: ignore[index]
        return slots  # type: ignore[return-value]
    bounds: list[Interval] = [s for s in slots if s is not None]
    if window is None or bounds[-1][1] <= bounds[0][1] + window:
        return tuple(bounds)
    last = int(bounds[0][1] + window)
    bounds[-1] = (bounds[-1][0], last)
    for j in range(len(bounds) - 2, -1, -1):
        bounds[j] = (bounds[j][0], min(bounds[j + 1][1] - 1, bounds[j][1]))
    if any(lo > hi for lo, hi in bounds):
        return None
    return tuple(bounds)
