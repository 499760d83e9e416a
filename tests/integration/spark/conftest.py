"""One local[2] Spark session for the whole test session (a cold start costs seconds on two cores)."""

from __future__ import annotations

import logging
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    # Python workers unpickle the data source by module name, so they need the repository on their path.
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    from pyspark.sql import SparkSession

    from controlplane.spark.topic_source import TopicDataSource

    session = (
        SparkSession.builder.master("local[2]")
        .appName("streamhub-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    session.dataSource.register(TopicDataSource)
    yield session
    session.stop()
    # py4j logs from finalizers after pytest has closed the captured streams.
    logging.getLogger("py4j").setLevel(logging.WARNING)


@pytest.fixture
def topic_name() -> str:
    return f"spark-{uuid.uuid4().hex[:10]}"


def create_topic(bootstrap: str, name: str, partitions: int = 1, **config: str) -> str:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1, config=config)])[name].result(10)
    return name


def produce(
    bootstrap: str, topic: str, records: list[tuple[int, bytes | None, bytes]], **config: object
) -> None:
    """Produce (partition, key, value) records and wait until all are acknowledged."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, **config})
    for partition, key, value in records:
        producer.produce(topic, key=key, value=value, partition=partition)
    assert producer.flush(15) == 0
