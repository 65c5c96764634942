"""kleene.spark.match runs without the virtual environment activated: Spark's Python
workers use the driver's interpreter (where kleene is installed) when PYSPARK_PYTHON is
not set, rather than the first ``python3`` on the PATH."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parents[2]

# the session is made before kleene.spark is imported, as a user's own code would
SCRIPT = """
from pyspark.sql import SparkSession
spark = (SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
         .config("spark.sql.shuffle.partitions", "1").getOrCreate())
import kleene.spark as ks
df = spark.createDataFrame([(0, "A", 1), (1, "B", 2)], "id long, type string, timestamp long")
print("matches", ks.match(df, "PATTERN SEQ(A a, B b) WITHIN 5").matches.count())
"""


def test_match_runs_with_a_bare_path(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV")
    }
    env["PATH"] = "/usr/bin:/bin"  # python3 here has neither pyspark nor kleene
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "matches 1" in done.stdout
