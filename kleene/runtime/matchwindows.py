"""Match windows in front of a SASE+ engine (the ``match_windows`` option; match-window
paper, sections 4.1-4.3 and Algorithm 1's lazy call).

For a plan the compiler marked (:mod:`kleene.compiler.matchwindows`: a SEQ without
negation under a skip-till strategy, ``all`` output), the events of a batch admitted
whole are read in time order into match windows, one per partition of the plan's key:
an event no state may accept is dropped (Theorem 1); the others carry a bit per positive
variable one of whose states may accept them, and a pattern of one singleton set per
positive variable says what a window needs. A complete window whose necessary match
conditions fail (Theorem 2: fewer events than variables, a first event the first state
cannot take, or no event per variable in order) cannot hold a match starting at its
first event; only the events of the other windows reach the engine.

That gives the engine's matches exactly: a match starting at e uses only events of e's
window, all of which reach the engine when e's window is a candidate; events fed for
other windows are events of the stream the engine would have seen anyway. Windows the
batch cannot complete are kept whole: those starting in the batch's last W at an event
the first variable may take (a later batch may add to them) and, unless the batch is
the stream's first, the events in its first W (their windows may have begun in an
earlier batch). :func:`chained` tests the windows column-wise, at least as strictly
(each variable a distinct event, in order) as the event-set matcher's summary
statistics (:func:`kleene.eventsets.windows.candidates`, which the tests compare it
with), and still only by necessary conditions. The front needs nothing of the event-set
package.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kleene.compiler.plan import Plan
from kleene.events import EventBatch
from kleene.runtime.prefilter import Prefilter


def variable_bits(plan: Plan, accepts: Sequence[np.ndarray]) -> np.ndarray:
    """Per event, the bit vector ``ē`` of the variables one of whose states may accept
    it (``v_1`` the highest bit, as in :mod:`kleene.eventsets.filtering`)."""
    m = len(plan.positive_vars)
    bit = {v: 1 << (m - 1 - i) for i, v in enumerate(plan.positive_vars)}
    n = len(accepts[0]) if accepts else 0
    out = np.zeros(n, dtype=np.int64)
    for state, accepted in zip(plan.states, accepts, strict=True):
        out[accepted] |= bit[state.var]
    return out


def chained(
    m: int, tau: float, times: np.ndarray, bits: np.ndarray, codes: np.ndarray | None, fresh: bool
) -> np.ndarray:
    """The events of candidate windows (module docstring), found column-wise with the
    necessary conditions read for singleton sets in order: a match starting at an event
    of ``v_1`` binds one later event to each further variable, in order, within τ; the
    chain that takes each variable's earliest event after the previous link ends no
    later than any such binding, so the window is a candidate when that chain ends
    within τ (conditions 4 and 5 follow). Where the summary statistics'
    counters (:func:`kleene.eventsets.windows.candidates`) can count one event for two
    variables (after the event that let it count has left the window), the chain
    cannot: it keeps no more events. Found with ``searchsorted`` per partition; each
    candidate window's events are kept as one range."""
    n = len(times)
    keep = np.zeros(n, dtype=bool)
    if not n:
        return keep
    rows = np.flatnonzero(bits)
    if codes is None:
        segments = [rows]
    else:
        order = np.lexsort((rows, codes[rows]))
        rows = rows[order]
        cuts = np.flatnonzero(np.diff(codes[rows])) + 1
        segments = np.split(rows, cuts)
    end = times[-1]
    variables = [1 << (m - 1 - i) for i in range(m)]
    for seg in segments:
        t, b = times[seg], bits[seg]
        starts = np.flatnonzero(b & variables[0])
        if not len(starts):
            continue
        link, chain = starts, np.ones(len(starts), dtype=bool)
        for bit in variables[1:]:
            has = np.flatnonzero(b & bit)
            if not len(has):
                chain[:] = False
                break
            k = np.searchsorted(has, link, side="right")
            chain &= k < len(has)
            link = has[np.minimum(k, len(has) - 1)]
        limit = t[starts] + tau
        open_ = limit >= end  # a later batch may still add to the window
        chosen = starts[open_ | (chain & (t[link] <= limit))]
        if not len(chosen):
            continue
        stops = np.searchsorted(t, t[chosen] + tau, side="right")
        depth = np.zeros(len(seg) + 1, dtype=np.int64)
        np.add.at(depth, chosen, 1)
        np.add.at(depth, stops, -1)
        keep[seg[np.cumsum(depth)[:-1] > 0]] = True
    if not fresh:
        keep |= times <= times[0] + tau
    return keep


class WindowFront:
    """The match windows of one matcher's plan: which events of a batch admitted whole
    reach the engine (see the module docstring)."""

    def __init__(self, plan: Plan) -> None:
        self.plan = plan

    def keep(
        self,
        prefilter: Prefilter,
        batch: EventBatch,
        accepts: Sequence[np.ndarray],
        window: float,
        fresh: bool,
    ) -> np.ndarray:
        """Per event of ``batch``, whether it lies in a candidate window (``accepts``:
        per state, which events it may accept, :meth:`Prefilter.accepts`)."""
        bits = variable_bits(self.plan, accepts)
        codes = None
        if prefilter.key_attrs:
            rows = np.flatnonzero(bits)
            some = prefilter.key_codes(batch, rows)
            if some is not None:
                codes = np.full(len(batch), -1, dtype=np.int64)
                codes[rows] = some
        m = len(self.plan.positive_vars)
        return chained(m, window, batch.times_array(), bits, codes, fresh)
