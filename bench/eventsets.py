"""Match windows: the throughput gain of the pruning techniques (match-windows paper,
section 6, Figures 6-8).

Each SES pattern runs through the two-phase strategy (kleene/eventsets/twophase.py)
with the automaton and with the join-tree matcher as algorithm A, first as the plain
match window (no pruning: the baseline), then with filtering (f), partitioning (p) and
the necessary match conditions (c). The gain of a technique is its throughput (events
per CPU second) divided by the baseline's in the same run. Three experiments:

* ``variables`` (Figures 6-7 (a)-(d)): Pseq = ⟨{v1}, …, {vk}⟩ and Pset = ⟨{v1, …, vk}⟩
  for k = 1 … ``--max-variables``, each variable a random label (Onco: a drug or blood
  count, all variables of one patient; NYSE: a symbol's trade), ``--samples`` random
  patterns per k, gains averaged;
* ``tau`` (Figures 6-7 (e)-(f)): Ponco = ⟨{c, d}, {p+, r+}, {b, h}⟩ per patient and
  Pnyse = ⟨{a+, g+}, {m+}⟩ (rising Apple and Google prices in any order, then a falling
  IBM price) for several τ;
* ``size`` (Figure 8): Pnyse over |E| from 10^2 up to ``--max-size``.

Onco is ``kleene.datagen.chemo`` (patients on shifted treatment cycles, times in
seconds), NYSE ``kleene.datagen.trades`` (times in ms). The baseline streams the events
through ``push`` until they run out or ``--limit`` CPU seconds pass, then drains its
windows; every pruning then reads that same prefix, so all find the same matches
(checked) and the ratio of events per CPU second is the gain; the size experiment reads
all of each |E| (no limit). Algorithm A returns what it returns in the paper's
experiments (section 6): the automaton, the SES algorithm, the earliest and maximal
matches of each window (selected while matching), the join tree, ZStream, every match
(``--output earliest-maximal`` or ``all`` gives both algorithms the same). NYSE
patterns have no equality to partition on, so there only f and fc are run, as in the
paper.

Every case gets the generator's input in both forms, its Arrow table and its dict rows.
The baseline is the plain match window with A called on every window, timed event by
event (Algorithm 1, dict rows) and column-wise over the prefix from the dict rows and
from the table; the fastest counts. The prunings read the prefix's table column-wise
(``kleene/eventsets/batch.py``: the filtering mask, partition codes, windows and
Theorem 2's conditions computed over the whole prefix; ``--path events`` reads its dict
rows event by event instead), timed as the median of repeated runs; column ``A`` is
the share of the last pruning's time spent in A (its calls, and the decoding of the
candidate events' fits from their bit vectors, ``take_fits``, which stands in for A's
own property tests).

The defaults run in a few minutes (k = 1, 2, 4, 6, 8, 10, one pattern per k, 0.5 CPU s
per baseline, |E| up to 10^4); ``--full`` runs the full sizes (k = 1 … 10, two
patterns per k, 1 CPU s, |E| up to 10^5).

``--only nyse/set --k 10`` runs one row of the variables experiment (its patterns drawn
as in the whole run) and prints each case's CPU times, without a plot; with ``--only`` or
``--k`` only the variables experiment runs unless ``--experiments`` is given.

    python -m bench.eventsets [--experiments variables,tau,size] [--full]
                              [--max-variables K] [--samples N] [--limit S]
                              [--max-size N] [--output paper|earliest-maximal|all]
                              [--only WORKLOAD/KIND] [--k K,...]
                              [--path columns|events] [--docs]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import Any

from kleene.eventsets.automaton import AutomatonMatcher
from kleene.eventsets.compile import ses_pattern
from kleene.eventsets.jointree import JoinTreeMatcher
from kleene.eventsets.twophase import Flags, TwoPhase

ALGORITHMS: dict[str, Callable[..., Any]] = {
    "automaton": AutomatonMatcher,
    "join tree": JoinTreeMatcher,
}
PRUNINGS = {"onco": ("none", "f", "fp", "fpc"), "nyse": ("none", "f", "fc")}
LABELS = ("C", "D", "R", "P", "B", "H")
SYMBOLS = ("AAPL", "GOOG", "IBM", "MSFT", "AMZN", "ORCL")
DAY = 86_400
DOCS_IMG = Path(__file__).resolve().parents[1] / "docs" / "img"


# --- workloads and patterns ---------------------------------------------------------


class Input:
    """One workload in both forms: the generator's Arrow table and its dict rows."""

    def __init__(self, table: Any) -> None:
        self.table = table
        self.rows: list[dict[str, Any]] = table.to_pylist()

    def prefix(self, n: int) -> Input:
        return Input(self.table.slice(0, n))


def onco(patients: int, days: int) -> Input:
    from kleene.datagen import chemo

    return Input(chemo.generate(patients, days=days, seed=1))


def nyse(events: int, rate: float) -> Input:
    from kleene.datagen import trades

    return Input(trades.generate(events, symbols=10, seed=1, rate=rate))


def _sets(kind: str, members: list[str]) -> str:
    if kind == "seq":
        return ", ".join("{" + m + "}" for m in members)
    return "{" + ", ".join(members) + "}"


def onco_pattern(kind: str, labels: list[str], tau_days: float) -> str:
    names = [f"v{i}" for i in range(len(labels))]
    where = [f"{a}.PID = {b}.PID" for a, b in pairwise(names)]
    members = [f"{label} {n}" for label, n in zip(labels, names, strict=True)]
    text = f"PATTERN SEQ({_sets(kind, members)})"
    if where:
        text += " WHERE " + " AND ".join(where)
    return f"{text} WITHIN {tau_days * DAY:g}"


def nyse_pattern(kind: str, symbols: list[str], tau_ms: float) -> str:
    names = [f"v{i}" for i in range(len(symbols))]
    where = [f"{n}.symbol = '{s}'" for n, s in zip(names, symbols, strict=True)]
    members = [f"Trade {n}" for n in names]
    return f"PATTERN SEQ({_sets(kind, members)}) WHERE {' AND '.join(where)} WITHIN {tau_ms:g}"


def p_onco(tau_days: float) -> str:
    return (
        "PATTERN SEQ({C c, D d}, {P+ p, R+ r}, {B b, H h}) WHERE c.PID = d.PID AND "
        "d.PID = p.PID AND p.PID = r.PID AND r.PID = b.PID AND b.PID = h.PID "
        f"WITHIN {tau_days * DAY:g}"
    )


def p_nyse(tau_ms: float) -> str:
    return (
        "PATTERN SEQ({Trade+ a, Trade+ g}, {Trade+ m}) WHERE a.symbol = 'AAPL' AND "
        "g.symbol = 'GOOG' AND m.symbol = 'IBM' AND prev(a.price) < a.price AND "
        f"prev(g.price) < g.price AND prev(m.price) > m.price WITHIN {tau_ms:g}"
    )


# --- measuring ----------------------------------------------------------------------


def _strategy(query: str, algorithm: str, pruning: str, output: str) -> TwoPhase:
    f = Flags.parse(pruning)
    a = partial(ALGORITHMS[algorithm], output=output)
    return TwoPhase(ses_pattern(query), a, f.filtering, f.partitioning, f.conditions)


def throughput(
    query: str,
    algorithm: str,
    pruning: str,
    events: list[dict[str, Any]],
    limit: float,
    output: str = "all",
) -> dict[str, Any]:
    """Events per CPU second of one case read event by event (Algorithm 1): the events
    are read until they run out or ``limit`` CPU seconds pass, then the windows are
    drained (the end of the stream), so the matches are all those of the prefix read."""
    strategy = _strategy(query, algorithm, pruning, output)
    start = time.process_time()
    matches, read = 0, 0
    for event in events:
        matches += len(strategy.push(read, event))
        read += 1
        if time.process_time() - start > limit:
            break
    matches += len(strategy.flush())
    seconds = max(time.process_time() - start, 1e-6)
    return {"read": read, "cpu_s": seconds, "matches": matches}


class _Timed:
    """Algorithm A with the CPU time spent in it counted: its calls and the fits it
    takes from the bit vectors (``take_fits``, the property tests it would otherwise
    run itself)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0

    def __getattr__(self, name: str) -> Any:  # what else A offers (AttributeError if not)
        attribute = getattr(self.inner, name)
        return partial(self._timed, attribute) if name == "take_fits" else attribute

    def matches(self, rows: Any, positions: Any) -> Any:
        return self._timed(self.inner.matches, rows, positions)

    def _timed(self, call: Callable[..., Any], *args: Any) -> Any:
        start = time.process_time()
        try:
            return call(*args)
        finally:
            self.seconds += time.process_time() - start


def batch(query: str, algorithm: str, pruning: str, events: Any, output: str) -> dict[str, Any]:
    """CPU seconds of one case over a whole finite input (dict rows or an Arrow table)
    with the pre-processing computed column-wise (``TwoPhase.run_columns``): the median
    of runs repeated until they take 0.2 CPU s (at least 3, once if one run takes
    longer), and the share of a further run's time spent in A."""
    strategy = _strategy(query, algorithm, pruning, output)
    runs: list[float] = []
    while not runs or (sum(runs) < 0.2 and (len(runs) < 3 or runs[0] < 0.2 / 3)):
        start = time.process_time()
        matches = len(strategy.run_columns(events))
        runs.append(max(time.process_time() - start, 1e-6))
        if runs[0] > 0.2:
            break
    timed = _Timed(strategy.algorithm)
    strategy.algorithm = timed
    start = time.process_time()
    strategy.run_columns(events)
    share = timed.seconds / max(time.process_time() - start, 1e-6)
    return {"cpu_s": statistics.median(runs), "matches": matches, "a_share": share}


#: the output each algorithm computes in the paper's experiments (section 6): the SES
#: automaton finds earliest and maximal matches, ZStream's join tree all of them
PAPER_OUTPUT = {"automaton": "earliest-maximal", "join tree": "all"}
#: print each case's CPU times (set by --only)
VERBOSE = False


def gains(
    query: str,
    workload: str,
    events: Input,
    limit: float,
    output: str = "paper",
    path: str = "columns",
) -> dict[tuple[str, str], float]:
    """(algorithm, pruning) -> throughput gain over that algorithm's baseline, every
    pruning reading the prefix the baseline read within ``limit`` (same matches).
    ``output`` "paper" gives each algorithm its output in the paper. The baseline is the
    plain match window, event by event as Algorithm 1 reads it (dict rows) or
    column-wise (from the dict rows and from the Arrow table), whichever is fastest;
    the prunings run column-wise from the table (``path`` "columns") or event by event
    ("events"). (algorithm, "A") is the share of the last pruning's time spent in
    algorithm A."""
    out = {}
    for algorithm in ALGORITHMS:
        chosen = PAPER_OUTPUT[algorithm] if output == "paper" else output
        base = throughput(query, algorithm, "none", events.rows, limit, chosen)
        prefix = events.prefix(base["read"])
        plain = [batch(query, algorithm, "none", x, chosen) for x in (prefix.rows, prefix.table)]
        if any(p["matches"] != base["matches"] for p in plain):
            raise AssertionError(f"the column-wise windows changed the matches of {query}")
        base_s = min(base["cpu_s"], *(p["cpu_s"] for p in plain))
        for pruning in PRUNINGS[workload][1:]:
            if path == "columns":
                found = batch(query, algorithm, pruning, prefix.table, chosen)
                out[algorithm, "A"] = found["a_share"]
            else:
                found = throughput(query, algorithm, pruning, prefix.rows, float("inf"), chosen)
            if found["matches"] != base["matches"]:
                raise AssertionError(f"{pruning} changed the matches of {query}")
            out[algorithm, pruning] = base_s / found["cpu_s"]
            if VERBOSE:
                ms = [x * 1e3 for x in (base_s, base["cpu_s"], *(p["cpu_s"] for p in plain))]
                print(
                    f"  {algorithm} {pruning}: |E| {base['read']}, baseline {ms[0]:.1f} ms "
                    f"(event by event {ms[1]:.1f}, column-wise from rows {ms[2]:.1f}, from "
                    f"the table {ms[3]:.1f}), {pruning} {found['cpu_s'] * 1e3:.2f} ms, "
                    f"gain {base_s / found['cpu_s']:.1f}",
                    flush=True,
                )
    return out


def variables(args: argparse.Namespace) -> list[dict[str, Any]]:
    rng = random.Random(7)
    data = {"onco": onco(args.patients, args.days), "nyse": nyse(args.trades, args.rate)}
    rows = []
    for workload, events in data.items():
        for kind in ("seq", "set"):
            for k in args.ks:
                found: dict[tuple[str, str], list[float]] = {}
                for _ in range(args.samples):
                    if workload == "onco":
                        query = onco_pattern(kind, rng.choices(LABELS, k=k), args.tau_days)
                    else:
                        query = nyse_pattern(kind, rng.choices(SYMBOLS, k=k), args.tau_ms)
                    if args.only not in (None, f"{workload}/{kind}") or k not in args.only_ks:
                        continue  # drawn all the same: the patterns of a full run
                    for key, gain in gains(
                        query, workload, events, args.limit, args.output, args.path
                    ).items():
                        found.setdefault(key, []).append(gain)
                if not found:
                    continue
                for (algorithm, pruning), values in found.items():
                    rows.append(
                        {
                            "workload": workload,
                            "pattern": f"P{kind}",
                            "k": k,
                            "algorithm": algorithm,
                            "pruning": pruning,
                            "gain": statistics.mean(values),
                        }
                    )
                print(f"variables {workload} P{kind} k={k} done", flush=True)
    return rows


def taus(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    cases = [
        ("onco", onco(args.patients, args.days), p_onco, (5, 15, 25, 35, 45)),
        ("nyse", nyse(args.trades, args.rate), p_nyse, (10, 30, 50, 70, 90)),
    ]
    for workload, events, make, values in cases:
        for tau in values:
            for (algorithm, pruning), gain in gains(
                make(tau), workload, events, args.limit, args.output, args.path
            ).items():
                rows.append(
                    {
                        "workload": workload,
                        "tau": tau,
                        "algorithm": algorithm,
                        "pruning": pruning,
                        "gain": gain,
                    }
                )
            print(f"tau {workload} {tau} done", flush=True)
    return rows


def sizes(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    size = 100
    while size <= args.max_size:
        events = nyse(size, args.rate)
        for (algorithm, pruning), gain in gains(
            p_nyse(20), "nyse", events, args.size_limit, args.output, args.path
        ).items():
            rows.append({"events": size, "algorithm": algorithm, "pruning": pruning, "gain": gain})
        print(f"size {size} done", flush=True)
        size *= 10
    return rows


# --- output -------------------------------------------------------------------------


def _pivot(rows: list[dict[str, Any]], keys: list[str], x: str) -> list[dict[str, Any]]:
    """One row per (keys..., x) with a column per pruning."""
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for r in rows:
        key = tuple(r[k] for k in [*keys, x])
        out.setdefault(key, {k: r[k] for k in [*keys, x]})[r["pruning"]] = r["gain"]
    return list(out.values())


def _plot(
    panels: list[tuple[str, list[dict[str, Any]], str, bool]], path: Any, dpi: int = 110
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, len(panels), figsize=(3.6 * len(panels), 6), squeeze=False)
    for col, (title, rows, x, logx) in enumerate(panels):
        for row, algorithm in enumerate(ALGORITHMS):
            ax = axes[row][col]
            mine = [r for r in rows if r["algorithm"] == algorithm and r["pruning"] != "A"]
            for pruning in sorted({r["pruning"] for r in mine}, key=len, reverse=True):
                pts = sorted((r[x], r["gain"]) for r in mine if r["pruning"] == pruning)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=pruning)
            ax.set_title(f"{title} ({algorithm})", fontsize=9)
            ax.set_xlabel(x)
            ax.set_ylabel("throughput gain")
            if logx:
                ax.set_xscale("log")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)


def _sizes(args: argparse.Namespace) -> None:
    """The default sizes (a few minutes) or ``--full``'s; explicit options win."""
    quick = not args.full
    if args.max_variables is not None:
        args.ks = list(range(1, args.max_variables + 1))
    else:
        args.ks = [1, 2, 4, 6, 8, 10] if quick else list(range(1, 11))
    args.only_ks = args.ks
    if args.k:  # only these k, with the patterns drawn for all the others as well
        args.only_ks = [int(k) for k in args.k.split(",")]
        args.ks = sorted(set(args.ks) | set(args.only_ks))
    args.samples = args.samples or (1 if quick else 2)
    args.limit = args.limit or (0.5 if quick else 1.0)
    args.max_size = args.max_size or (10_000 if quick else 100_000)
    # |E| is the experiment's variable: the baseline reads all of it (no CPU limit)
    args.size_limit = float("inf")


def main() -> None:
    from bench._common import RESULTS, machine, table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--experiments",
        help="comma-separated (default variables,tau,size; variables only with --only or --k)",
    )
    parser.add_argument(
        "--full",
        action="store_true",
        help="the full sizes (about 20 minutes): k = 1 … 10, 2 patterns per k, 1 CPU s "
        "per baseline, |E| up to 10^5",
    )
    parser.add_argument("--max-variables", type=int, help="k = 1 … this (default 1,2,4,6,8,10)")
    parser.add_argument(
        "--only",
        choices=("onco/seq", "onco/set", "nyse/seq", "nyse/set"),
        help="the variables experiment for this workload and pattern only (the same "
        "random patterns as the whole run)",
    )
    parser.add_argument(
        "--k", help="the variables experiment for these k only (e.g. 10 or 8,10; same patterns)"
    )
    parser.add_argument("--samples", type=int, help="random patterns per k (default 1)")
    parser.add_argument("--limit", type=float, help="CPU seconds per baseline (default 0.5)")
    parser.add_argument("--patients", type=int, default=30)
    parser.add_argument("--days", type=int, default=120)
    parser.add_argument("--tau-days", type=float, default=10)
    parser.add_argument("--trades", type=int, default=3_000)
    parser.add_argument("--rate", type=float, default=250.0, help="trades per second")
    parser.add_argument("--tau-ms", type=float, default=20)
    parser.add_argument("--max-size", type=int, help="largest |E| (default 10^4)")
    parser.add_argument(
        "--output",
        choices=("paper", "earliest-maximal", "all"),
        default="paper",
        help="the matches A returns: as in the paper (default: earliest and maximal for the "
        "automaton, all for the join tree), or the same for both",
    )
    parser.add_argument(
        "--path",
        choices=("columns", "events"),
        default="columns",
        help="how the prunings read the input: column-wise over the whole prefix "
        "(default) or event by event as Algorithm 1 reads a stream",
    )
    parser.add_argument("--docs", action="store_true", help="also save the plot to docs/img")
    args = parser.parse_args()
    _sizes(args)
    global VERBOSE
    VERBOSE = bool(args.only or args.k)
    if args.experiments is None:  # --only and --k pick rows of the variables experiment
        args.experiments = "variables" if VERBOSE else "variables,tau,size"
    chosen = args.experiments.split(",")
    print(
        f"machine: {machine()}; CPU limit per case {args.limit:g} s; output {args.output}; "
        f"prunings read {args.path}; load average {os.getloadavg()[0]:.1f}\n"
    )
    panels = []
    if "variables" in chosen:
        rows = variables(args)
        print(
            table(
                _pivot(rows, ["workload", "pattern", "algorithm"], "k"),
                ["workload", "pattern", "algorithm", "k", "f", "fp", "fc", "fpc", "A"],
            )
        )
        for workload in ("onco", "nyse"):
            for kind in ("Pseq", "Pset"):
                part = [r for r in rows if r["workload"] == workload and r["pattern"] == kind]
                panels.append((f"{kind} {workload}", part, "k", False))
    if "tau" in chosen:
        rows = taus(args)
        print(
            table(
                _pivot(rows, ["workload", "algorithm"], "tau"),
                ["workload", "algorithm", "tau", "f", "fp", "fc", "fpc", "A"],
            )
        )
        for workload in ("onco", "nyse"):
            part = [r for r in rows if r["workload"] == workload]
            panels.append((f"P{workload} τ", part, "tau", False))
    if "size" in chosen:
        rows = sizes(args)
        print(table(_pivot(rows, ["algorithm"], "events"), ["algorithm", "events", "f", "fc", "A"]))
        panels.append(("Pnyse |E|", rows, "events", True))
    if VERBOSE:
        return  # a part of a figure: no plot
    RESULTS.mkdir(exist_ok=True)
    name = f"eventsets-{args.output}.png"
    _plot(panels, RESULTS / name)
    print(f"\nplot: {RESULTS / name}")
    if args.docs:  # small: low resolution, 32 colours
        from PIL import Image

        _plot(panels, DOCS_IMG / name, dpi=60)
        with Image.open(DOCS_IMG / name) as image:
            small = image.convert("RGB").quantize(colors=32)
        small.save(DOCS_IMG / name, optimize=True)
        print(f"plot: {DOCS_IMG / name}")


if __name__ == "__main__":
    main()
