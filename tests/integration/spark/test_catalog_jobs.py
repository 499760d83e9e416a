"""Catalog job details on the shared local[2] session against a real broker, called in-process (every job
also runs end to end through the Celery worker in test_catalog_runs.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from confluent_kafka import Producer

from controlplane.spark.jobs import json_schema_inference, topic_copy
from controlplane.spark.jobs.runtime import JobContext, TopicRange
from tests.integration.spark.conftest import create_topic

pytestmark = pytest.mark.integration

BASE_MS = 1_700_000_000_000


def produce_timed(
    bootstrap: str, topic: str, records: list[tuple[int, bytes | None, bytes | None, int]]
) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for partition, key, value, timestamp in records:
        producer.produce(topic, key=key, value=value, partition=partition, timestamp=timestamp)
    assert producer.flush(15) == 0


@pytest.fixture
def context(broker, tmp_path: Path) -> JobContext:
    return JobContext(kafka_config={"bootstrap.servers": broker.bootstrap}, output_dir=tmp_path)


def test_json_schema_inference_reports_presence_conflicts_and_a_schema(spark, context, broker, topic_name):
    create_topic(broker.bootstrap, topic_name)
    values = [
        *[json.dumps({"id": i, "name": f"n{i}", "tags": ["a"]}).encode() for i in range(6)],
        json.dumps({"id": "seven", "address": {"city": "Oslo"}}).encode(),
        b"not json",
    ]
    produce_timed(broker.bootstrap, topic_name, [(0, None, v, BASE_MS) for v in values])
    result = json_schema_inference.run(
        spark, json_schema_inference.Parameters(TopicRange(topic_name)), context
    )
    fields = {row[0]: row for row in result.tables["fields"].rows}
    assert fields["id"][1:] == [7, 1.0, "integer,string", True]
    assert fields["name"][1:] == [6, round(6 / 7, 4), "string", False]
    assert fields["address.city"][1:3] == [1, round(1 / 7, 4)]
    assert result.metrics["parse_errors"] == 1
    schema = result.documents["json_schema"]
    assert schema["required"] == ["id"]
    assert schema["properties"]["address"]["properties"]["city"]["type"] == "string"
    avro = {f["name"]: f for f in result.documents["avro_schema"]["fields"]}
    assert avro["id"]["type"] == "string"  # integer and string conflict: widened
    assert avro["name"]["type"] == ["null", "string"]


def test_topic_copy_refuses_anything_but_a_select(spark, context, topic_name):
    parameters = topic_copy.Parameters(TopicRange(topic_name), target_topic="x", sql="DROP TABLE source")
    with pytest.raises(ValueError, match="single SELECT"):
        topic_copy.run(spark, parameters, context)
