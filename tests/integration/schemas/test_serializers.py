"""confluent-kafka 2.16's Avro, JSON Schema and Protobuf serializers produce through a cluster of each engine
(our broker, Apache Kafka: `managed_cluster`) with our registry, and the deserializers consume and decode: with
auto-registration, then with `use.latest.version`."""

import json
import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONDeserializer, JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufDeserializer, ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from tests.fixtures.engines import ManagedCluster
from tests.integration.schemas.protobuf_orders import order_classes

pytestmark = pytest.mark.integration


def round_trip(
    cluster: ManagedCluster,
    topic: str,
    serialize: Callable,
    deserialize: Callable,
    values: list,
    *,
    earlier: int = 0,
) -> list:
    """Produce every value serialized, consume the topic (`earlier` records were there before) and
    return the new values deserialized."""
    producer = Producer(cluster.client_config())
    for value in values:
        payload = serialize(value, SerializationContext(topic, MessageField.VALUE))
        assert payload[0] == 0  # Confluent framing: magic byte, then the schema id
        producer.produce(topic, value=payload)
    assert producer.flush(10) == 0
    consumer = Consumer(
        {
            **cluster.client_config(),
            "group.id": f"reader-{uuid.uuid4().hex}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    decoded = []
    try:
        while len(decoded) < earlier + len(values):
            message = consumer.poll(10)
            assert message is not None, "timed out waiting for records"
            assert message.error() is None, message.error()
            decoded.append(deserialize(message.value(), SerializationContext(topic, MessageField.VALUE)))
    finally:
        consumer.close()
    return decoded[earlier:]


def topic_name() -> str:
    return f"payments.t{uuid.uuid4().hex[:10]}"


PAYMENT = json.dumps(
    {
        "type": "record",
        "name": "Payment",
        "namespace": "com.acme.payments",
        "fields": [
            {"name": "id", "type": "string"},
            {"name": "amount", "type": "double"},
            {"name": "tags", "type": {"type": "array", "items": "string"}, "default": []},
        ],
    }
)


def test_avro_round_trips_with_auto_registration_and_latest_version(
    registry, managed_cluster: ManagedCluster
) -> None:
    client = registry.client(registry.team_a_developer)
    topic = topic_name()
    serializer = AvroSerializer(client, PAYMENT)
    deserializer = AvroDeserializer(client)
    values = [{"id": "p1", "amount": 12.5, "tags": ["a"]}, {"id": "p2", "amount": 3.0, "tags": []}]
    assert round_trip(managed_cluster, topic, serializer, deserializer, values) == values
    assert client.get_latest_version(f"{topic}-value").version == 1

    latest = AvroSerializer(client, None, conf={"auto.register.schemas": False, "use.latest.version": True})
    reader = AvroDeserializer(client, conf={"use.latest.version": True})
    assert round_trip(
        managed_cluster, topic, latest, reader, [{"id": "p3", "amount": 1.0, "tags": []}], earlier=2
    ) == [{"id": "p3", "amount": 1.0, "tags": []}]


ORDER_JSON = json.dumps(
    {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "Order",
        "type": "object",
        "properties": {"id": {"type": "string"}, "qty": {"type": "integer", "minimum": 1}},
        "required": ["id"],
    }
)


def test_json_schema_round_trips_with_auto_registration_and_latest_version(
    registry, managed_cluster: ManagedCluster
) -> None:
    client = registry.client(registry.team_a_developer)
    topic = topic_name()
    serializer = JSONSerializer(ORDER_JSON, client)
    deserializer = JSONDeserializer(ORDER_JSON, schema_registry_client=client)
    values = [{"id": "o1", "qty": 2}, {"id": "o2"}]
    assert round_trip(managed_cluster, topic, serializer, deserializer, values) == values
    registered = client.get_latest_version(f"{topic}-value")
    assert registered.schema.schema_type == "JSON"

    latest = JSONSerializer(None, client, conf={"auto.register.schemas": False, "use.latest.version": True})
    reader = JSONDeserializer(None, schema_registry_client=client, conf={"use.latest.version": True})
    assert round_trip(managed_cluster, topic, latest, reader, [{"id": "o3", "qty": 9}], earlier=2) == [
        {"id": "o3", "qty": 9}
    ]


def test_protobuf_with_a_nested_message_and_an_import_round_trips(
    registry, managed_cluster: ManagedCluster
) -> None:
    client = registry.client(registry.org_admin)  # the import is registered under its file name
    order_class, line_class = order_classes()
    topic = topic_name()
    serializer = ProtobufSerializer(order_class, client, conf={"use.deprecated.format": False})
    deserializer = ProtobufDeserializer(order_class, conf={"use.deprecated.format": False})
    order = order_class(id="o1", lines=[line_class(sku="x", qty=2)])
    order.total.cents = 1250
    order.total.currency = "EUR"
    [decoded] = round_trip(managed_cluster, topic, serializer, deserializer, [order])
    assert decoded == order
    assert client.get_latest_version("acme/common.proto").version == 1
    main = client.get_latest_version(f"{topic}-value")
    assert [ref.name for ref in main.schema.references] == ["acme/common.proto"]
    assert "message Line" in main.schema.schema_str

    # A fresh client: this one cached "latest" in text form above, and the client's cache ignores the format.
    client = registry.client(registry.org_admin)
    latest = ProtobufSerializer(
        order_class, client, conf={"auto.register.schemas": False, "use.latest.version": True}
    )
    # The generic deserializer path: the writer's schema comes from the registry (format=serialized).
    reader = ProtobufDeserializer(
        order_class, conf={"use.latest.version": True}, schema_registry_client=client
    )
    second = order_class(id="o2")
    [decoded] = round_trip(managed_cluster, topic, latest, reader, [second], earlier=1)
    assert decoded.id == "o2"
