"""The message browser decodes keys and values that confluent-kafka's Avro, JSON Schema and Protobuf
serializers wrote through a real broker with our registry; unknown ids and bad payloads say why."""

from __future__ import annotations

import json
import struct
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext

from controlplane.accounts import services as accounts
from controlplane.schemas import cache, decoding, services
from controlplane.schemas.api import auth
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import TeamRole
from tests.fixtures.engines import ManagedCluster
from tests.integration.schemas.protobuf_orders import order_classes
from tests.integration.topics.clients import produce_one
from tests.integration.topics.world import KafkaWorld, build_world, create_topic

pytestmark = pytest.mark.integration


@dataclass
class BrowseWorld:
    kafka: KafkaWorld
    registry: SchemaRegistryClient

    def topic(self, suffix: str) -> tuple[str, str]:
        """A new topic of team A: its name and its browse URL."""
        name = f"{self.kafka.topic_prefix_a}{suffix}-{uuid.uuid4().hex[:6]}"
        topic = create_topic(self.kafka, self.kafka.developer_a, name)
        return name, f"/api/v1/topics/{topic['id']}/messages/"

    def produce(self, topic: str, *, key: bytes | None = None, value: bytes | None = None) -> None:
        assert produce_one(self.kafka.producer(), topic, value, key=key) is None

    def browse(self, url: str) -> list[dict[str, Any]]:
        response = self.kafka.viewer_a.get(url, {"start": "earliest"})
        assert response.status_code == 200, response.content
        return response.json()["messages"]


@pytest.fixture
def browse_world(live_server, transactional_db, settings, secure_broker) -> BrowseWorld:
    """Team A's topics on a secure broker, and a registry client with a team A developer key."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    for forget in (cache.clear, auth.forget_everything, services.forget_parsed, decoding.forget_decoders):
        forget()
    world = build_world(ManagedCluster.of_streamhub(secure_broker))
    _key, token = accounts.create_api_key(
        actor=Actor.system(), name="registry", role=TeamRole.DEVELOPER, service_account=world.account_a
    )
    client = SchemaRegistryClient(
        {
            "url": f"{live_server.url}/clusters/{world.cluster.pk}/schema-registry",
            "basic.auth.user.info": f"{token.key_id}:{token.secret}",
            "max.retries": 0,
        }
    )
    return BrowseWorld(kafka=world, registry=client)


def serialized(serializer: Any, topic: str, value: Any, field: str = MessageField.VALUE) -> bytes:
    return serializer(value, SerializationContext(topic, field))


PAYMENT = {
    "type": "record",
    "name": "Payment",
    "namespace": "com.acme.payments",
    "fields": [
        {"name": "id", "type": "string"},
        {"name": "amount", "type": "double"},
        {"name": "raw", "type": "bytes"},
        {"name": "note", "type": ["null", "string"], "default": None},
    ],
}


def test_avro_keys_and_values_are_decoded_with_their_subjects(browse_world: BrowseWorld) -> None:
    topic, url = browse_world.topic("avro")
    key_serializer = AvroSerializer(browse_world.registry, json.dumps("string"))
    value_serializer = AvroSerializer(browse_world.registry, json.dumps(PAYMENT))
    payment = {"id": "p1", "amount": 12.5, "raw": b"\x00\xff", "note": None}
    browse_world.produce(
        topic,
        key=serialized(key_serializer, topic, "customer-7", MessageField.KEY),
        value=serialized(value_serializer, topic, payment),
    )

    [message] = browse_world.browse(url)
    key_id = browse_world.registry.get_latest_version(f"{topic}-key").schema_id
    value_id = browse_world.registry.get_latest_version(f"{topic}-value").schema_id
    assert message["key"]["decoded"] == {
        "schema_id": key_id,
        "format": "AVRO",
        "subject": f"{topic}-key",
        "version": 1,
        "message_type": None,
        "value": "customer-7",
        "error": None,
    }
    assert message["value"]["encoding"] == "base64"  # the raw bytes are still there
    assert message["value"]["decoded"]["schema_id"] == value_id
    assert message["value"]["decoded"]["subject"] == f"{topic}-value"
    assert message["value"]["decoded"]["value"] == {"id": "p1", "amount": 12.5, "raw": "AP8=", "note": None}


ORDER_JSON = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "title": "Order",
    "type": "object",
    "properties": {"id": {"type": "string"}, "lines": {"type": "array", "items": {"type": "object"}}},
    "required": ["id"],
}


def test_json_schema_values_are_decoded_and_plain_keys_are_left_alone(browse_world: BrowseWorld) -> None:
    topic, url = browse_world.topic("json")
    serializer = JSONSerializer(json.dumps(ORDER_JSON), browse_world.registry)
    order = {"id": "o1", "lines": [{"sku": "x", "qty": 2}]}
    browse_world.produce(topic, key=b"o1", value=serialized(serializer, topic, order))

    [message] = browse_world.browse(url)
    assert message["key"] == {"data": "o1", "encoding": "utf-8"}
    decoded = message["value"]["decoded"]
    assert (decoded["format"], decoded["subject"], decoded["version"]) == ("JSON", f"{topic}-value", 1)
    assert decoded["value"] == order
    assert decoded["error"] is None


def test_protobuf_messages_with_a_nested_type_and_an_import_are_decoded(browse_world: BrowseWorld) -> None:
    topic, url = browse_world.topic("proto")
    # Imports are registered under their file name: inside team A's prefix, so its key may write it.
    order_class, line_class = order_classes(
        f"{browse_world.kafka.topic_prefix_a}common.proto", receipt_first=True
    )
    conf = {"use.deprecated.format": False}
    order = order_class(id="o1", lines=[line_class(sku="x", qty=2)])
    order.total.cents = 1250
    order.total.currency = "EUR"
    browse_world.produce(
        topic, value=serialized(ProtobufSerializer(order_class, browse_world.registry, conf), topic, order)
    )
    # The nested message alone: same file, same schema id, message index path [1, 0].
    browse_world.produce(
        topic,
        value=serialized(
            ProtobufSerializer(line_class, browse_world.registry, conf), topic, line_class(sku="y")
        ),
    )

    first, second = browse_world.browse(url)
    decoded = first["value"]["decoded"]
    assert decoded["error"] is None
    assert (decoded["format"], decoded["message_type"]) == ("PROTOBUF", "acme.orders.Order")
    assert decoded["value"] == {
        "id": "o1",
        "total": {"cents": "1250", "currency": "EUR"},  # int64 as a string, the proto3 JSON mapping
        "lines": [{"sku": "x", "qty": 2}],
    }
    nested = second["value"]["decoded"]
    assert nested["schema_id"] == decoded["schema_id"]
    assert nested["message_type"] == "acme.orders.Order.Line"
    assert nested["value"] == {"sku": "y", "qty": 0}


def test_unknown_ids_and_payloads_that_do_not_match_their_schema_say_why(browse_world: BrowseWorld) -> None:
    topic, url = browse_world.topic("bad")
    serializer = AvroSerializer(browse_world.registry, json.dumps(PAYMENT))
    good = serialized(serializer, topic, {"id": "p1", "amount": 1.0, "raw": b"", "note": "n"})
    schema_id = struct.unpack(">I", good[1:5])[0]
    browse_world.produce(topic, key=b"\x00" + struct.pack(">I", schema_id + 1000) + b"x", value=good[:-3])
    browse_world.produce(topic, value=good + b"\x01\x02")

    cut_short, too_long = browse_world.browse(url)
    assert cut_short["key"]["decoded"]["error"] == f"Schema {schema_id + 1000} not found"
    assert cut_short["key"]["decoded"]["format"] is None
    assert cut_short["value"]["decoded"]["value"] is None
    assert "Not Avro data of this schema" in cut_short["value"]["decoded"]["error"]
    assert too_long["value"]["decoded"]["error"] == (
        "2 bytes are left over after the Avro record: another schema?"
    )
    assert too_long["key"] == {"data": None, "encoding": "null"}
