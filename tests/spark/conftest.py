"""One local SparkSession for every Spark test (a cold session costs ~10 s)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from kleene.spark import local_session


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = local_session(
        2,
        shuffle_partitions=2,
        driver_memory="1g",
        app_name="kleene-tests",
        conf={
            # small Arrow batches, so one partition key spans several batches
            "spark.sql.execution.arrow.maxRecordsPerBatch": "1500",
            "spark.default.parallelism": "2",
        },
    )
    yield session
    session.stop()
