"""Shared pieces of the benchmarks: machine facts, timing in fresh processes, tables."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"


def machine() -> str:
    """One line naming the machine a result was measured on."""
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB, Python {platform.python_version()}"


def run_isolated(
    module: str, payload: dict[str, Any], timeout: float | None = None
) -> dict[str, Any]:
    """Run ``module``'s ``measure(payload)`` in a fresh interpreter (so peak RSS is the
    case's own) and return its JSON result."""
    code = (
        "import json, sys, resource, importlib\n"
        f"mod = importlib.import_module({module!r})\n"
        "out = mod.measure(json.loads(sys.argv[1]))\n"
        "out['peak_rss_mib'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024\n"
        "print(json.dumps(out))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).parent.parent))
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(payload)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A Markdown table of ``rows`` restricted to ``columns``."""

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:,.1f}" if abs(v) >= 10 else f"{v:.3g}"
        if isinstance(v, int):
            return f"{v:,}"
        return str(v)

    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def save_plot(fig: Any, ax: Any, path: Path) -> None:
    """Finish a matplotlib figure (legend, grid, tight layout) and save it to ``path``."""
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot: {path}")
