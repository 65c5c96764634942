"""Shared test settings: hypothesis profiles sized for CI's two cores.

HYPOTHESIS_PROFILE picks one: "dev" (quick, default locally), "ci" (default when CI is
set: 150 examples per property without its own count; the engine-vs-oracle properties
alone run it over 16 strategy/output/engine combinations, which is most of their cost)
or "stress" (thousands, for bug hunting).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=_QUIET)
settings.register_profile("ci", max_examples=150, deadline=None, suppress_health_check=_QUIET)
settings.register_profile("stress", max_examples=3000, deadline=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def in_spark_group(nodeid: str) -> bool:
    """Whether a test runs in the Spark group: the tests under tests/spark and those named
    ``test_spark_*`` elsewhere (``kleene run --engine spark``)."""
    return nodeid.startswith("tests/spark/") or "::test_spark_" in nodeid


def pytest_itemcollected(item: pytest.Item) -> None:
    spark = item.get_closest_marker("spark") is not None or "spark" in getattr(
        item, "fixturenames", ()
    )
    if spark and not in_spark_group(item.nodeid):
        raise pytest.UsageError(
            f"{item.nodeid} uses Spark: put it under tests/spark or name it test_spark_*"
        )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``-n N`` (xdist's default ``load`` mode), every Spark test goes to one worker,
    as the first and largest unit of work: one JVM starts, not one per worker, and no two
    Spark sessions compete for the cores. The other tests are handed out one by one to
    whichever worker is free, as with ``load``, so the workers finish together."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SparkGroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "spark" if in_spark_group(nodeid) else nodeid

    return SparkGroupScheduling(config, log)


# per-test settings of the shared session: ``kleene run --engine spark --master local[1]``
# run in process sets the session's shuffle partitions to 1; each test starts from these
SPARK_SQL_SETTINGS = {
    "spark.sql.shuffle.partitions": "2",
    # small Arrow batches, so one partition key spans several batches
    "spark.sql.execution.arrow.maxRecordsPerBatch": "1500",
}


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    """One local SparkSession for every Spark test (a cold session costs ~10 s); tests
    that run ``kleene run --engine spark`` in process use it too."""
    from kleene.spark import local_session

    session = local_session(
        2,
        shuffle_partitions=2,
        driver_memory="1g",
        app_name="kleene-tests",
        conf={**SPARK_SQL_SETTINGS, "spark.default.parallelism": "2"},
    )
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _spark_settings(request: pytest.FixtureRequest) -> None:
    if "spark" in request.fixturenames:
        session = request.getfixturevalue("spark")
        for key, value in SPARK_SQL_SETTINGS.items():
            session.conf.set(key, value)
