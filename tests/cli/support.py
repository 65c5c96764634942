"""Running the real ``kleene`` command in a subprocess, and reading what it wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from kleene.match import Match

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def kleene(
    *args: str | Path, cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``python -m kleene ARGS`` with this interpreter; never raises on a non-zero exit."""
    env = {k: v for k, v in os.environ.items() if k != "KLEENE_TRACEBACK"}
    env["COLUMNS"] = "120"
    return subprocess.run(
        [sys.executable, "-m", "kleene", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env=env,
        timeout=timeout,
        check=False,
    )


def expected_record(m: Match) -> dict[str, Any]:
    """What one output line holds for a match, built from the public Match API."""
    record: dict[str, Any] = {
        "ids": {var: list(ids) for var, ids in m.ids().items()},
        "start": m.start,
        "end": m.end,
        "partition": list(m.partition),
    }
    record.update(m.values())
    return json.loads(json.dumps(record, default=str))


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def read_parquet_matches(path: Path) -> list[dict[str, Any]]:
    """Parquet match rows in the JSON lines shape (partition struct back to a list)."""
    rows = pq.read_table(path).to_pylist()
    for row in rows:
        if isinstance(row.get("partition"), dict):
            row["partition"] = list(row["partition"].values())
    return json.loads(json.dumps(rows, default=str))


def canonical(records: Iterable[dict[str, Any]]) -> list[str]:
    """Records as sorted JSON texts, to compare outputs as multisets."""
    return sorted(json.dumps(r, sort_keys=True) for r in records)
