"""``kleene generate``: write one of the papers' workloads (the stock stream, the Hadoop
trace, the uncertain stream) to a file."""

from __future__ import annotations

import argparse
import time

from rich.console import Console

from kleene.cli._common import EXIT_OK, EXIT_USAGE, CliError, refuse_overwrites, shown
from kleene.io import infer_format, is_stdio, write_table


def cmd_generate(args: argparse.Namespace, out: Console, err: Console) -> int:
    from kleene.datagen import hadoop, stock, uncertain

    fmt = infer_format(args.output, args.output_format, option="--output-format")
    refuse_overwrites([], [("--output", args.output)])
    started = time.perf_counter()
    try:
        if args.workload == "hadoop":
            table = hadoop.generate(
                args.jobs, nodes=args.nodes, seed=args.seed, straggler_prob=args.straggler_prob
            )
            what = f"Hadoop trace events ({args.jobs} jobs, {args.nodes} nodes, seed {args.seed})"
            if args.imprecise:
                table = uncertain.with_intervals(table)
                what += " with uncertainty intervals (lower/upper in 0.1 s)"
        elif args.workload == "uncertain":
            table = uncertain.generate(args.events, delta=args.delta, period=args.period)
            what = f"events with uncertainty intervals (delta {args.delta})"
        else:
            table = stock.generate(
                args.events,
                symbols=args.symbols,
                increase_prob=args.increase_prob,
                seed=args.seed,
                step=args.step,
            )
            what = (
                f"stock events ({args.symbols} symbols, p={args.increase_prob}, seed {args.seed})"
            )
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
