"""Running ``kleene.cli.main`` in this process (fast), with standard input and output
captured as bytes."""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from kleene.cli import main


@dataclass
class Done:
    code: int
    stdout: bytes
    stderr: str


def run_main(monkeypatch: pytest.MonkeyPatch, *args: str | Path, stdin: bytes = b"") -> Done:
    """``kleene ARGS`` in process; never raises on a non-zero exit (argparse's own exit 2
    for a usage error becomes the code)."""
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    with monkeypatch.context() as patch:
        patch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
        patch.setattr(sys, "stdout", stdout)
        patch.setattr(sys, "stderr", stderr)
        patch.setenv("COLUMNS", "120")
        patch.delenv("KLEENE_TRACEBACK", raising=False)
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 2
        stdout.flush()
        stderr.flush()
    return Done(code, out.getvalue(), err.getvalue().decode("utf-8", "replace"))
