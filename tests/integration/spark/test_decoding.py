"""decode_values turns Avro, JSON Schema and Protobuf values framed with schema ids into columns, with the
writer's schema fetched by the executors from the control plane's registry (a live server) using a service
account's API key; undecodable values are counted, and fail the query only when asked to."""

from __future__ import annotations

import json
import uuid

import pytest
from confluent_kafka import Producer
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext
from pyspark.errors import PythonException

from controlplane.spark.decoding import decode_values, undecodable_count
from tests.integration.schemas.conftest import _build_registry
from tests.integration.schemas.protobuf_orders import order_classes
from tests.integration.spark.conftest import create_topic

pytestmark = pytest.mark.integration

PAYMENT = {
    "type": "record",
    "name": "Payment",
    "namespace": "com.acme.payments",
    "fields": [{"name": "id", "type": "string"}, {"name": "amount", "type": "double"}],
}
ORDER_JSON = json.dumps(
    {
        "type": "object",
        "properties": {"id": {"type": "string"}, "qty": {"type": "integer"}},
        "required": ["id"],
    }
)


@pytest.fixture
def framed_topics(live_server, transactional_db, broker):
    """Three topics, one per format, each with two framed values; the Avro one also holds two bad values."""
    registry = _build_registry(live_server.url)
    client = registry.client(registry.org_admin)
    suffix = uuid.uuid4().hex[:8]
    topics = {
        kind: create_topic(broker.bootstrap, f"payments.{kind}-{suffix}")
        for kind in ("avro", "json", "proto")
    }
    order_class, line_class = order_classes()
    orders = [order_class(id="o1", lines=[line_class(sku="x", qty=2)]), order_class(id="o2")]
    orders[0].total.cents = 1250
    serializers = {
        "avro": AvroSerializer(client, json.dumps(PAYMENT)),
        "json": JSONSerializer(ORDER_JSON, client),
        "proto": ProtobufSerializer(order_class, client, conf={"use.deprecated.format": False}),
    }
    values = {
        "avro": [{"id": "p1", "amount": 9.5}, {"id": "p2", "amount": 0.25}],
        "json": [{"id": "o1", "qty": 2}, {"id": "o2"}],
        "proto": orders,
    }
    producer = Producer({"bootstrap.servers": broker.bootstrap})
    for kind, topic in topics.items():
        for value in values[kind]:
            producer.produce(
                topic, value=serializers[kind](value, SerializationContext(topic, MessageField.VALUE))
            )
    # Not framed at all, and framed with a schema id the registry does not have.
    producer.produce(topics["avro"], value=b"plain text")
    producer.produce(topics["avro"], value=b"\x00\x00\x0f\x42\x3f{}")
    assert producer.flush(10) == 0
    return registry, topics


def _read(spark, broker, topic: str):
    return (
        spark.read.format("topics")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", topic)
        .load()
    )


def test_it_decodes_each_format_with_the_writer_schema_and_counts_what_it_cannot(
    spark, broker, framed_topics
):
    registry, topics = framed_topics
    options = {"registry_url": registry.url, "basic_auth": registry.team_a_developer}

    avro = decode_values(_read(spark, broker, topics["avro"]), schema="id string, amount double", **options)
    rows = avro.orderBy("offset").collect()
    assert [(r.decoded.id, r.decoded.amount) if r.decoded else None for r in rows] == [
        ("p1", 9.5),
        ("p2", 0.25),
        None,
        None,
    ]
    assert rows[0].schema_id == rows[1].schema_id > 0
    assert "not framed" in rows[2].decode_error
    assert rows[3].schema_id == 999999
    assert "cannot be loaded" in rows[3].decode_error
    assert undecodable_count(avro) == 2

    documents = decode_values(_read(spark, broker, topics["json"]), **options).orderBy("offset").collect()
    assert [json.loads(r.decoded) for r in documents] == [{"id": "o1", "qty": 2}, {"id": "o2"}]

    # The Protobuf schema imports acme/common.proto, a subject outside the team's prefixes: the organization
    # admin's key may read it.
    orders = (
        decode_values(
            _read(spark, broker, topics["proto"]), registry_url=registry.url, basic_auth=registry.org_admin
        )
        .orderBy("offset")
        .collect()
    )
    assert [r.decode_error for r in orders] == [None, None]
    assert [json.loads(r.decoded) for r in orders] == [
        {"id": "o1", "total": {"cents": "1250"}, "lines": [{"sku": "x", "qty": 2}]},
        {"id": "o2"},
    ]
    assert all(r.decode_error is None for r in documents + orders)


def test_an_undecodable_value_fails_the_query_when_asked_to(spark, broker, framed_topics):
    registry, topics = framed_topics
    strict = decode_values(
        _read(spark, broker, topics["avro"]),
        registry_url=registry.url,
        basic_auth=registry.team_a_developer,
        fail_on_error=True,
    )
    with pytest.raises(PythonException, match="not framed by a schema id"):
        strict.collect()
