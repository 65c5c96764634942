"""Adaptive evaluation orders under a shifting workload (EDBT 2018, section 6.4.2, Figure 8b).

Q3 of section 6.4 (``A before B AND A before C AND B before C``) over three synthetic
situation streams whose occurrence ratio shifts from 1:1:1 to 1:50:50 to 50:1:50, with
the same number of situations in each phase. The paper's settings are the defaults:
window 10,000 s, smoothing factor alpha 0.01, migration threshold 0.2. Each stream's
situations are spread evenly over the phase (period = phase span / count, duration
20-50 % of the period, so the situations of one stream never touch); the span follows
from ``--per-window``, each stream's situations per window at 1:1:1 (5 by default: the
paper's generator gives about 118, whose matches Python could not produce in minutes),
so the default ``--per-phase`` 150,000 makes phases of 10,000 windows, as the paper's
(its phases are 100M events, at its density also about 10,000 windows; the share of a
phase spent before the planner notices a shift falls with the phase's length). The
low-latency matcher runs once with each of the 6 fixed evaluation orders and once driven
by :class:`AdaptivePlanner` per ``--observe-every`` value (attached to the matcher, which
takes its order on a switch). Throughput is situations (starts and ends) fed per CPU
second of matcher + planner time per phase. The machine is shared, so the
configurations run interleaved: each repeat feeds all of them (fresh matchers) the same
chunk of ``--chunk`` updates, in a shuffled order, before any gets the next chunk; a
chunk's time is its least over the repeats and a phase's the sum over its chunks (the
garbage collector runs between chunks, untimed). Every configuration must find the same
number of matches (checked). The best fixed order of a phase is chosen after the fact;
the adaptive run starts from the planner's initial plan (equal buffer sizes, Table 3's
selectivities). "adaptive, replayed" applies the (first) adaptive run's switches at the
same updates without the planner: its distance from the best fixed order is the cost of
the decisions (the time to notice a shift), the adaptive run's distance from it the
planner's own cost. The attached planner observes when the update's time reaches a
mark about ``--observe-every`` units of the matcher's work ahead (an ended situation or
a range query each, at the rate of the previous interval or half the one before, if
more: a planner's turn then costs
a bounded share of the matcher's time, and comes sooner when the order turns costly),
each observation weighing as the situations that ended since the previous one (a
selectivity at most as the range queries that measured it), with the mean of the buffer sizes
at the interval's two ends (observing every update costs more than the matcher's own
work in the skewed phases).

    python -m bench.tpstream_adaptive [--per-phase N] [--per-window K | --span T]
                                      [--window W] [--alpha A] [--threshold T]
                                      [--seed S] [--repeat R] [--chunk C]
                                      [--observe-every K[,K...]] [--outside]
"""

from __future__ import annotations

import argparse
import gc
import itertools
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench._common import machine, table
from kleene.tpstream.adaptive import AdaptivePlanner
from kleene.tpstream.matcher import SituationMatcher
from kleene.tpstream.model import Allen, Constraint, Situation, TemporalPattern
from kleene.tpstream.optimizer import CostModel

PHASES = ((1, 1, 1), (1, 50, 50), (50, 1, 50))
SYMBOLS = ("A", "B", "C")


def q3(window: int) -> TemporalPattern:
    before = frozenset({Allen.BEFORE})
    pairs = (("A", "B"), ("A", "C"), ("B", "C"))
    return TemporalPattern(SYMBOLS, tuple(Constraint(a, b, before) for a, b in pairs), window)


def phase_situations(
    ratio: tuple[int, ...], count: int, span: int, offset: int, rng: random.Random
) -> list[Situation]:
    """``count`` situations over ``[offset, offset + span)`` split by ``ratio``."""
    out = []
    for symbol, share in zip(SYMBOLS, ratio, strict=True):
        n = max(1, round(count * share / sum(ratio)))
        period = span / n
        if period < 2:
            raise SystemExit(f"--span {span} is too short for {n} situations of {symbol}")
        for k in range(n):
            start = offset + int(k * period)
            length = max(1, int(period * rng.uniform(0.2, 0.5)))
            out.append(Situation(symbol, (), start, start + length, 0, 0))
    return out


Update = tuple[int, list[Situation], list[Situation]]


def updates(situations: list[Situation]) -> list[Update]:
    """The matcher calls a deriver would make: each situation visible at its start and
    finished at its end."""
    started: dict[int, list[Situation]] = defaultdict(list)
    finished: dict[int, list[Situation]] = defaultdict(list)
    for s in situations:
        started[int(s.start)].append(Situation(s.symbol, (), s.start, None, 0, 0))
        finished[int(s.end or 0)].append(s)
    return [(t, started[t], finished[t]) for t in sorted(set(started) | set(finished))]


Schedule = dict[tuple[int, int], tuple[str, ...]]
# a fixed order, the adaptive planner observing every k units of work, or a replay
Plan = tuple[str, ...] | int | Schedule


def planner(
    pattern: TemporalPattern, args: argparse.Namespace, every: int | None = None
) -> AdaptivePlanner:
    return AdaptivePlanner(
        pattern,
        alpha=args.alpha,
        threshold=args.threshold,
        observe_every=args.observe_every[0] if every is None else every,
        model=CostModel(args.model),
    )


def record(
    pattern: TemporalPattern, phases: list[list[Update]], args: argparse.Namespace
) -> Schedule:
    """The switches the adaptive run makes (untimed): (phase, update) -> new order."""
    matcher = SituationMatcher(pattern)
    matcher.attach(planner(pattern, args))
    schedule: Schedule = {(-1, 0): matcher.order}
    for number, calls in enumerate(phases):
        for i, (t, started, finished) in enumerate(calls):
            before = matcher.order
            matcher.update(t, started, finished)
            if matcher.order != before:
                schedule[(number, i)] = matcher.order
    return schedule


class Runner:
    """One configuration over the phases: a fixed order, adaptive (the planner attached
    to the matcher, consulted inside its update every ``--observe-every`` units of
    work; ``--outside`` calls ``after_update`` after each update, observing every
    ``--observe-every`` updates), or the recorded
    switches replayed without the planner (its decisions without its cost). Every
    configuration runs the same loop (the schedule lookup included)."""

    def __init__(self, pattern: TemporalPattern, plan: Plan, args: argparse.Namespace) -> None:
        self.schedule: Schedule = plan if isinstance(plan, dict) else {}
        self.name = " -> ".join(plan) if isinstance(plan, tuple) else "adaptive"
        self.matcher = SituationMatcher(pattern, plan if isinstance(plan, tuple) else None)
        self.outside: AdaptivePlanner | None = None
        if isinstance(plan, int):
            if len(args.observe_every) > 1:
                self.name = f"adaptive, every {plan}"
            self.outside = planner(pattern, args, plan) if args.outside else None
            self.matcher.attach(None if args.outside else planner(pattern, args, plan))
            if self.outside is not None:
                self.matcher.set_order(self.outside.order)
        elif isinstance(plan, dict):
            self.name = "adaptive, replayed"
            self.matcher.set_order(self.schedule[(-1, 0)])

    def feed(self, number: int, calls: list[Update], first: int) -> int:
        """Updates ``first, first + 1, ...`` of phase ``number``; the matches found."""
        matcher, outside, schedule = self.matcher, self.outside, self.schedule
        matches = 0
        for i, (t, started, finished) in enumerate(calls, first):
            matches += len(matcher.update(t, started, finished))
            if outside is not None:
                outside.after_update(matcher)
            elif (number, i) in schedule:
                matcher.set_order(schedule[(number, i)])
        return matches


def measure(
    pattern: TemporalPattern,
    phases: list[list[Update]],
    plans: list[Plan],
    args: argparse.Namespace,
) -> list[dict[str, Any]]:
    """Every plan over the same updates, interleaved chunk by chunk: each repeat feeds
    all plans (fresh matchers) chunk ``k`` of ``--chunk`` updates in a shuffled order
    before any gets chunk ``k + 1``, so that all of them meet the shared machine's load
    at the same moments. A chunk's CPU time is the least over the repeats (the same
    work each time: the runs are deterministic); a phase's time is the sum over its
    chunks. The garbage collector runs between chunks, untimed."""
    rng = random.Random(args.seed)
    cpu: dict[tuple[int, int, int], float] = {}
    found: dict[tuple[int, int], int] = defaultdict(int)
    final: dict[tuple[int, int], tuple[str, ...]] = {}
    names: list[str] = []
    gc.collect()
    gc.freeze()  # the input stays; collections then only scan what the runs allocate
    gc.disable()
    try:
        for repeat in range(args.repeat):
            runners = [Runner(pattern, plan, args) for plan in plans]
            names = [r.name for r in runners]
            turns = list(range(len(runners)))
            for number, calls in enumerate(phases):
                for first in range(0, len(calls), args.chunk):
                    part = calls[first : first + args.chunk]
                    rng.shuffle(turns)
                    for j in turns:
                        began = time.process_time()
                        matches = runners[j].feed(number, part, first)
                        spent = time.process_time() - began
                        key = (j, number, first)
                        cpu[key] = min(cpu.get(key, spent), spent)
                        if repeat == 0:
                            found[(j, number)] += matches
                    gc.collect()
                final |= {(j, number): r.matcher.order for j, r in enumerate(runners)}
    finally:
        gc.enable()
        gc.unfreeze()
    rows = []
    for j, name in enumerate(names):
        for number, calls in enumerate(phases):
            spent = sum(cpu[(j, number, k)] for k in range(0, len(calls), args.chunk))
            fed = sum(len(s) + len(f) for _, s, f in calls)
            rows.append(
                {
                    "phase": ":".join(map(str, PHASES[number])),
                    "plan": name,
                    "situations": fed,
                    "matches": found[(j, number)],
                    "cpu_s": spent,
                    "per_s": fed / spent if spent else float("inf"),
                    "switches": sum(1 for k, _ in args.schedule if k == number),
                    "final order": " -> ".join(final[(j, number)]),
                }
            )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-phase", type=int, default=150_000, help="situations per phase")
    parser.add_argument("--window", type=int, default=10_000, help="WITHIN, time units (s)")
    parser.add_argument(
        "--per-window",
        type=float,
        default=5.0,
        help="situations of each stream per window at 1:1:1 (sets the phase's span)",
    )
    parser.add_argument("--span", type=int, help="time units per phase (overrides --per-window)")
    parser.add_argument("--alpha", type=float, default=0.01)
    parser.add_argument("--threshold", type=float, default=0.2)
    parser.add_argument(
        "--observe-every",
        type=lambda text: [int(k) for k in text.split(",")],
        default=[256],
        help="units of matcher work (ended situations + range queries) per observation "
        "(updates with --outside); several (comma-separated) run side by side",
    )
    parser.add_argument("--repeat", type=int, default=5, help="runs; each chunk's least counts")
    parser.add_argument("--chunk", type=int, default=250, help="updates per interleaved chunk")
    parser.add_argument("--model", default="searches", choices=[m.value for m in CostModel])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--outside", action="store_true", help="call after_update after each update"
    )
    args = parser.parse_args()
    if args.span is None:
        args.span = round(args.per_phase / len(SYMBOLS) * args.window / args.per_window)
    print(machine())
    rng = random.Random(args.seed)
    pattern = q3(args.window)
    phases = [
        updates(phase_situations(ratio, args.per_phase, args.span, k * args.span, rng))
        for k, ratio in enumerate(PHASES)
    ]
    args.schedule = record(pattern, phases, args)
    plans: list[Plan] = [*itertools.permutations(SYMBOLS), *args.observe_every, args.schedule]
    rows = measure(pattern, phases, plans, args)
    for phase in dict.fromkeys(r["phase"] for r in rows):
        these = [r for r in rows if r["phase"] == phase]
        if len({r["matches"] for r in these}) != 1:
            raise SystemExit(f"plans disagree on the matches of phase {phase}")
        best = max(r["per_s"] for r in these if not r["plan"].startswith("adaptive"))
        for r in these:
            r["vs best fixed"] = r["per_s"] / best
    print(
        f"Q3 = A before B AND A before C AND B before C, WITHIN {args.window}; "
        f"{args.per_phase} situations over {args.span} time units per phase "
        f"({args.span / args.window:.0f} windows); alpha {args.alpha}, "
        f"threshold {args.threshold}, observing every {args.observe_every} "
        + ("updates" if args.outside else "units of work (ends + range queries)")
    )
    columns = ["phase", "plan", "situations", "matches", "cpu_s", "per_s", "vs best fixed"]
    print(table(rows, [*columns, "switches", "final order"]))
    _plot(rows, Path(__file__).parent.parent / "docs" / "img" / "tpstream_adaptive.png")


def _plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path.parent.mkdir(parents=True, exist_ok=True)
    phases = list(dict.fromkeys(r["phase"] for r in rows))
    plans = list(dict.fromkeys(r["plan"] for r in rows))
    width = 0.8 / len(plans)
    fig, ax = plt.subplots(figsize=(10, 4))
    for i, plan in enumerate(plans):
        rates = [
            next(r["per_s"] for r in rows if r["plan"] == plan and r["phase"] == p) for p in phases
        ]
        xs = [k + i * width for k in range(len(phases))]
        ax.bar(
            xs,
            rates,
            width,
            label=plan,
            hatch=None if plan == "adaptive, replayed" or not plan.startswith("adaptive") else "//",
        )
    ax.set_xticks(
        [k + 0.4 - width / 2 for k in range(len(phases))], [f"A:B:C = {p}" for p in phases]
    )
    ax.set_ylabel("situations per CPU second")
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8, ncol=7, loc="upper center", bbox_to_anchor=(0.5, -0.1))
    ax.set_title(
        "Q3 under a shifting occurrence ratio: fixed orders vs adaptive (EDBT 2018, 6.4.2)"
    )
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
