"""The SparkSession kleene runs on: the settings its Python code needs.

Spark starts one Python worker per task; the workers must import kleene, so they run the
same interpreter as the driver (``PYSPARK_PYTHON = sys.executable``, where the package is
installed). Streaming state lives in the RocksDB state store, which
``transformWithStateInPandas`` requires. The session time zone is UTC, so timestamps
handed to Python workers as naive values mean what the engine assumes (naive = UTC).
"""

from __future__ import annotations

import os
import sys
from typing import Any

from pyspark.sql import SparkSession

ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"

_DEFAULTS: dict[str, str] = {
    "spark.sql.streaming.stateStore.providerClass": ROCKSDB_PROVIDER,
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
}


def ensure_python_env() -> None:
    """Make Spark's Python workers use this interpreter (set before a session starts)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)


def use_this_python(spark: SparkSession) -> None:
    """Make the Python workers of a local session that was started without
    ``PYSPARK_PYTHON`` run this interpreter (where kleene is installed), not the
    ``python3`` first on the PATH. A ``PYSPARK_PYTHON`` of the user's is kept."""
    chosen = os.environ.get("PYSPARK_PYTHON")
    context = spark.sparkContext
    if chosen not in (None, sys.executable) or not str(context.master).startswith("local"):
        return
    ensure_python_env()
    context.pythonExec = sys.executable


def session(master: str | None = None) -> SparkSession:
    """The session for a master URL: :func:`local_session` for ``local``, ``local[n]``,
    ``local[*]`` or None, else a session on that cluster with kleene's settings."""
    if master is None or master.startswith("local["):
        cores = "*" if master is None else master[len("local[") : -1]
        return local_session(cores if cores == "*" else int(cores))
    if master == "local":
        return local_session(1)
    ensure_python_env()
    return (
        SparkSession.builder.master(master)
        .appName("kleene")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )


def local_session(
    cores: int | str = "*",
    *,
    shuffle_partitions: int | None = None,
    driver_memory: str = "1g",
    app_name: str = "kleene",
    conf: dict[str, Any] | None = None,
) -> SparkSession:
    """A local SparkSession (``local[cores]``) configured for kleene.

    ``shuffle_partitions`` defaults to the number of cores (Spark's 200 are far too many
    for one machine). Options in ``conf`` override the defaults.
    """
    ensure_python_env()
    if shuffle_partitions is None:
        shuffle_partitions = (os.cpu_count() or 1) if cores == "*" else int(cores)
    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(app_name)
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
    )
    for key, value in {**_DEFAULTS, **(conf or {})}.items():
        builder = builder.config(key, str(value))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def active_session(spark: SparkSession | None = None) -> SparkSession:
    """The given session, else the active one, else a new local session."""
    if spark is not None:
        return spark
    active = SparkSession.getActiveSession()
    return active if active is not None else local_session()
