"""``kleene generate``: write one of the papers' workloads (the stock stream, the Hadoop
trace, the uncertain stream, car reports, situation streams, chemotherapy events, share
trades) to a file."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import pyarrow as pa
from rich.console import Console
from rich.progress import Progress

from kleene.cli._common import EXIT_OK, EXIT_USAGE, CliError, refuse_overwrites, shown
from kleene.io import infer_format, is_stdio, write_table

# a workload's table and how the closing line names what was written
Generated = tuple[pa.Table, str]


def cmd_generate(args: argparse.Namespace, out: Console, err: Console) -> int:
    fmt = infer_format(args.output, args.output_format, option="--output-format")
    refuse_overwrites([], [("--output", args.output)])
    started = time.perf_counter()
    try:
        table, what = WORKLOADS[args.workload](args, err)
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    write_table(table, args.output, fmt)
    seconds = time.perf_counter() - started
    (err if is_stdio(args.output) else out).print(
        f"wrote {table.num_rows:,} {what} to {shown(args.output)} ({fmt.value}) in {seconds:.2f} s",
        markup=False,
        highlight=False,
    )
    return EXIT_OK


def _hadoop(args: argparse.Namespace, err: Console) -> Generated:
    from kleene.datagen import hadoop, uncertain

    table = hadoop.generate(
        args.jobs, nodes=args.nodes, seed=args.seed, straggler_prob=args.straggler_prob
    )
    what = f"Hadoop trace events ({args.jobs} jobs, {args.nodes} nodes, seed {args.seed})"
    if args.imprecise:
        table = uncertain.with_intervals(table)
        what += " with uncertainty intervals (lower/upper in 0.1 s)"
    return table, what


def _uncertain(args: argparse.Namespace, err: Console) -> Generated:
    from kleene.datagen import uncertain

    table = uncertain.generate(args.events, delta=args.delta, period=args.period)
    return table, f"events with uncertainty intervals (delta {args.delta})"


def _stock(args: argparse.Namespace, err: Console) -> Generated:
    from kleene.datagen import stock

    table = stock.generate(
        args.events,
        symbols=args.symbols,
        increase_prob=args.increase_prob,
        seed=args.seed,
        step=args.step,
    )
    return table, f"stock events ({args.symbols} symbols, p={args.increase_prob}, seed {args.seed})"


def _cars(args: argparse.Namespace, err: Console) -> Generated:
    from kleene.datagen import cars

    # simulated second by second: a progress bar on a terminal
    with Progress(console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task("simulating", total=args.duration)
        table = cars.generate(
            args.cars,
            duration=args.duration,
            seed=args.seed,
            aggressive=args.aggressive,
            episodes=args.episodes,
            progress=lambda seconds: bar.update(task, advance=seconds),
        )
    what = (
        f"car reports ({args.cars} cars, {args.duration} s, {args.aggressive:.0%} aggressive, "
        f"seed {args.seed})"
    )
    return table, what


def _situations(args: argparse.Namespace, err: Console) -> Generated:
    from kleene.datagen import situations

    names = None if args.names is None else [n.strip() for n in args.names.split(",")]
    ratios = [_ratio(text) for text in args.ratio or ()]
    hold = situations.DURATION
    holds = {}
    for text in args.hold or ():
        name, _, span = text.rpartition("=")
        if name:
            holds[name] = _range(span, "--hold")
        else:
            hold = _range(span, "--hold")
    table = situations.generate(
        args.duration,
        attributes=args.attributes,
        names=names,
        ratios=ratios,
        seed=args.seed,
        hold=hold,
        gap=situations.GAP if args.gap is None else _range(args.gap, "--gap"),
        holds=holds,
    )
    columns = ", ".join(table.column_names[3:])
    phases = " -> ".join(args.ratio or ())
    what = f"events of situation streams {columns} (seed {args.seed}" + (
        f", ratios {phases})" if phases else ")"
    )
    return table, what


def _ratio(text: str) -> list[float]:
    """``1:50:50`` as weights; ValueError naming the option otherwise."""
    try:
        return [float(w) for w in text.split(":")]
    except ValueError:
        raise ValueError(
            f"--ratio takes one weight per attribute separated by ':' (like 1:50:50), got {text!r}"
        ) from None


def _range(text: str, option: str) -> tuple[int, int]:
    """``10-100`` as an inclusive range of whole seconds; ValueError naming the option."""
    low, _, high = text.partition("-")
    try:
        return int(low), int(high)
    except ValueError:
        raise ValueError(
            f"{option} takes a range of whole seconds like 10-100, got {text!r}"
        ) from None


def _chemo(args: argparse.Namespace, err: Console) -> Generated:
    from kleene.datagen import chemo

    table = chemo.generate(args.patients, days=args.days, seed=args.seed)
    what = f"chemotherapy events ({args.patients} patients, {args.days} days, seed {args.seed})"
    return table, what


def _trades(args: argparse.Namespace, err: Console) -> Generated:
    from kleene.datagen import trades

    table = trades.generate(args.events, symbols=args.symbols, seed=args.seed, rate=args.rate)
    return table, f"share trades ({args.symbols} symbols, {args.rate:g}/s, seed {args.seed})"


# each workload from the parsed options; ``err`` shows progress on long work
WORKLOADS: dict[str, Callable[[argparse.Namespace, Console], Generated]] = {
    "stock": _stock,
    "hadoop": _hadoop,
    "uncertain": _uncertain,
    "cars": _cars,
    "situations": _situations,
    "chemo": _chemo,
    "trades": _trades,
}
