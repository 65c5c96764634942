"""What ``kleene run`` reports: its counts and times, and the summary table printed at
the end."""

from __future__ import annotations

from dataclasses import dataclass, field

from rich.table import Table

from kleene.errors import RunLimitError


@dataclass
class RunStats:
    """What ``kleene run`` reports at the end."""

    engine: str
    query_file: str
    input: str
    input_format: str
    output: str
    rejected_path: str
    events: int = 0
    matches: int = 0
    rejected: int = 0
    seconds: float = 0.0
    startup_seconds: float = 0.0  # starting the engine (the Spark session)
    notes: list[str] = field(default_factory=list)
    stopped: RunLimitError | None = None  # the limit the run stopped at


def summary_table(stats: RunStats) -> Table:
    """The one-screen summary printed after a run."""
    table = Table(title=f"kleene run: {stats.query_file}", show_header=False, title_justify="left")
    table.add_column("what", style="bold")
    table.add_column("value")
    working = stats.seconds - stats.startup_seconds
    rate = stats.events / working if working > 0 else 0.0
    table.add_row("engine", stats.engine)
    table.add_row("input", f"{stats.input} ({stats.input_format})")
    table.add_row("events read", f"{stats.events:,}")
    table.add_row("matches", f"{stats.matches:,}  -> {stats.output}")
    table.add_row("rejected events", f"{stats.rejected:,}  -> {stats.rejected_path}")
    wall = f"{stats.seconds:.2f} s ({rate:,.0f} events/s"
    if stats.startup_seconds:
        wall += f" after {stats.startup_seconds:.1f} s of engine start-up"
    table.add_row("wall time", wall + ")")
    for note in stats.notes:
        table.add_row("note", note)
    return table
