"""The flags of ``kleene run`` and ``kleene explain`` that shape a query, and the one
place that checks them against the query's kind.

A flag sets one compile option of :func:`kleene.compile` (``--strategy`` sets
``strategy``), so a kind takes the flag when its query class has the option
(:meth:`kleene.kinds.Kind.options`) and its command-line part does not refuse it
(:attr:`kleene.cli._kinds.CliPart.refuses`, for a flag whose option means another thing
to the kind). A flag that sets no option (``--png``) says itself which kinds take it. A
flag given to a kind that does not take it is a usage error naming the flag, the kind
and the kinds that take it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kleene import kinds
from kleene.cli._args import CLI_MAX_MATCHES, INTERVAL_ENGINES
from kleene.cli._common import EXIT_USAGE, CliError
from kleene.cli._kinds import CliPart, part_of
from kleene.kinds import Kind
from kleene.runtime.limits import DEFAULT_MAX_RUNS


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Flag:
    """One flag and the compile option it sets."""

    name: str
    #: its attribute in the parsed arguments (missing: the command has no such flag)
    dest: str
    #: the compile option it sets; None: a flag of the command, taken as ``takes`` says
    option: str | None
    #: values that mean the flag was not given (besides None and False)
    unset: tuple[Any, ...] = ()
    #: the command's own default is passed too (it differs from the API's or equals it)
    passes_default: bool = False
    #: the option's value from the flag's
    to_option: Callable[[Any], Any] = _same
    #: named with its value in messages ("--engine events")
    shows_value: bool = False
    #: which kinds take a flag that sets no option
    takes: Callable[[CliPart], bool] | None = None

    def given(self, value: Any) -> bool:
        if value is None or value is False:
            return False
        return not any(type(value) is type(u) and value == u for u in self.unset)

    def shown(self, value: Any) -> str:
        return f"{self.name} {value}" if self.shows_value else self.name


def _interval_engine(value: Any) -> str:
    return value if value in INTERVAL_ENGINES else "auto"  # local, spark: any framework


FLAGS = (
    Flag("--time-field", "time_field", "time_field", ("timestamp",), passes_default=True),
    Flag("--type-field", "type_field", "type_field", ("type",), passes_default=True),
    Flag("--id-field", "id_field", "id_field", ("id",), passes_default=True),
    Flag("--time-unit", "time_unit", "time_unit"),
    Flag("--strategy", "strategy", "strategy"),
    Flag("--non-overlap", "non_overlap", "output", to_option=lambda _: "non_overlap"),
    Flag("--match-windows", "match_windows", "match_windows"),
    Flag("--allowed-lateness", "allowed_lateness", "allowed_lateness", (0.0,)),
    Flag("--max-runs", "max_runs", "max_runs", (DEFAULT_MAX_RUNS,), passes_default=True),
    Flag(
        "--max-matches",
        "max_matches",
        "max_matches",
        (CLI_MAX_MATCHES,),
        passes_default=True,
        to_option=lambda v: v or None,  # 0: no limit
    ),
    Flag("--algorithm", "algorithm", "algorithm"),
    Flag("--preprocessing", "preprocessing", "preprocessing"),
    Flag(
        "--engine",
        "engine",
        "engine",
        ("local", "spark"),
        passes_default=True,
        to_option=_interval_engine,
        shows_value=True,
    ),
    Flag("--lower-field", "lower_field", "lower_field", ("lower",), passes_default=True),
    Flag("--upper-field", "upper_field", "upper_field", ("upper",), passes_default=True),
    Flag("--uncertainty", "uncertainty", "uncertainty"),
    Flag("--u-max", "u_max", "u_max"),
    Flag("--confidence", "confidence", "confidence"),
    Flag("--png", "png", None, takes=lambda part: part.draw is not None),
)


def takes(kind: Kind, flag: Flag) -> bool:
    """Whether ``kind`` takes ``flag``."""
    part = part_of(kind)
    if flag.name in part.refuses:
        return False
    if flag.option is None:
        return flag.takes is not None and flag.takes(part)
    return flag.option in kind.options()


def compile_options(kind: Kind, args: argparse.Namespace) -> dict[str, Any]:
    """The compile options the command's flags give a query of ``kind``; a usage error
    for the first flag given that ``kind`` does not take."""
    options: dict[str, Any] = {}
    for flag in FLAGS:
        value = getattr(args, flag.dest, None)
        if not takes(kind, flag):
            if flag.given(value):
                raise CliError(refusal(kind, flag, value, args.time), EXIT_USAGE)
            continue
        passed = flag.given(value) or (flag.passes_default and value is not None)
        if flag.option is not None and passed:
            options[flag.option] = flag.to_option(value)
    return options


def refusal(kind: Kind, flag: Flag, value: Any, time: str) -> str:
    """Why ``flag`` is refused for ``kind``, and which kinds take it (with the ``--time``
    they need when it is not ``time``)."""
    note = part_of(kind).notes.get(flag.name)
    message = f"{flag.shown(value)} does not apply to {kind.a_title}"
    if note:
        message += f": {note}"
    by_time: dict[str, list[str]] = {}
    for other in kinds.kinds():
        if other is not kind and takes(other, flag):
            needs = "" if time in other.times else f" (--time {other.times[0]})"
            by_time.setdefault(needs, []).append(other.a_title)
    if by_time:
        groups = [_listed(titles) + needs for needs, titles in by_time.items()]
        message += "; it applies to " + " and to ".join(groups)
    return message


def _listed(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else items[0]
