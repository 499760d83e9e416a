"""Dynamic broker configs on a single node: AlterConfigs / IncrementalAlterConfigs on BROKER resources (this
broker's id and the cluster default ""), BROKER_LOGGER and GROUP, with confluent-kafka, kafka-python and
raw requests (neither client sends the cluster default ""). They take effect at once and survive a restart."""

from __future__ import annotations

import contextlib
import socket
import struct
from collections.abc import Callable

import pytest
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ResourceType,
)
from kafka.admin import ConfigResource as KafkaPythonResource
from kafka.admin import KafkaAdminClient
from kio.schema.incremental_alter_configs.v1.request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from kio.static.primitive import i8

from tests.fixtures.broker import BrokerProcess
from tests.integration.broker.helpers import create_topic
from tests.integration.broker.kafka_wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

SET, DELETE, APPEND, SUBTRACT = (
    AlterConfigOpType.SET,
    AlterConfigOpType.DELETE,
    AlterConfigOpType.APPEND,
    AlterConfigOpType.SUBTRACT,
)


def _alter(
    admin: AdminClient, kind: ResourceType, name: str, *ops: tuple[str, AlterConfigOpType, str | None]
) -> None:
    resource = ConfigResource(
        kind, name, incremental_configs=[ConfigEntry(n, v, incremental_operation=op) for n, op, v in ops]
    )
    admin.incremental_alter_configs([resource])[resource].result(15)


def _describe(admin: AdminClient, kind: ResourceType, name: str) -> dict:
    resource = ConfigResource(kind, name)
    return admin.describe_configs([resource])[resource].result(15)


def _refusal(call: Callable[[], object]) -> KafkaError:
    with pytest.raises(KafkaException) as raised:
        call()
    return raised.value.args[0]


def set_cluster_default(bootstrap: str, name: str, value: str | None) -> int:
    """IncrementalAlterConfigs on broker "" (the cluster-wide default), which no client library sends."""
    return _wire_alter(bootstrap, "", name, value)[0]


def _wire_alter(bootstrap: str, broker: str, name: str, value: str | None) -> tuple[int, str | None]:
    """IncrementalAlterConfigs SET (DELETE for None) on broker resource `broker`: (error code, message)."""
    operation = SET.value if value is not None else DELETE.value
    request = IncrementalAlterConfigsRequest(
        resources=(
            AlterConfigsResource(
                resource_type=i8(4),
                resource_name=broker,
                configs=(AlterableConfig(name=name, config_operation=i8(operation), value=value),),
            ),
        ),
        validate_only=False,
    )
    with WireClient(bootstrap) as client:
        response = client.request(request).responses[0]
    return int(response.error_code), response.error_message


def _produce(bootstrap: str, topic: str, size: int) -> KafkaError | None:
    """Produce one record of `size` bytes; the broker's error, or None."""
    outcome: list[KafkaError | None] = []
    producer = Producer({"bootstrap.servers": bootstrap, "message.max.bytes": 10_000_000, "retries": 0})
    producer.produce(topic, b"x" * size, on_delivery=lambda err, _msg: outcome.append(err))
    producer.flush(15)
    return outcome[0]


def test_message_max_bytes_set_at_runtime_limits_topics_without_their_own_and_survives_a_restart(
    fresh_broker: BrokerProcess,
) -> None:
    bootstrap = fresh_broker.bootstrap
    plain = create_topic(bootstrap, "plain")
    own = create_topic(bootstrap, "own", **{"max.message.bytes": "200000"})
    assert _produce(bootstrap, plain, 50_000) is None

    assert set_cluster_default(bootstrap, "message.max.bytes", "20000") == 0
    error = _produce(bootstrap, plain, 50_000)
    assert error is not None
    assert error.code() == KafkaError.MSG_SIZE_TOO_LARGE
    assert _produce(bootstrap, own, 50_000) is None, "a topic's own max.message.bytes wins"

    admin = AdminClient({"bootstrap.servers": bootstrap})
    entry = _describe(admin, ResourceType.BROKER, "1")["message.max.bytes"]
    assert (entry.value, entry.source) == ("20000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)
    topic_entry = _describe(admin, ResourceType.TOPIC, plain)["max.message.bytes"]
    assert (topic_entry.value, topic_entry.source) == (
        "20000",
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value,
    )

    # This broker's own value wins over the cluster default; synonyms list every layer, the winner first.
    _alter(admin, ResourceType.BROKER, "1", ("message.max.bytes", SET, "60000"))
    # (confluent-kafka keys synonyms by name and so keeps one: kafka-python shows them all)
    kafka_python = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        described = kafka_python.describe_configs(
            [KafkaPythonResource("BROKER", "1", ["message.max.bytes"])], include_synonyms=True
        )
    finally:
        kafka_python.close()
    entry = described["broker"]["1"]["message.max.bytes"]
    assert entry["config_source"] == "DYNAMIC_BROKER_CONFIG"
    assert [(s["value"], s["source"]) for s in entry["synonyms"]] == [
        ("60000", "DYNAMIC_BROKER_CONFIG"),
        ("20000", "DYNAMIC_DEFAULT_BROKER_CONFIG"),
        ("1048588", "DEFAULT_CONFIG"),
    ]
    assert _produce(bootstrap, plain, 50_000) is None

    fresh_broker.restart()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    assert _describe(admin, ResourceType.BROKER, "1")["message.max.bytes"].value == "60000"
    error = _produce(bootstrap, plain, 70_000)
    assert error is not None
    assert error.code() == KafkaError.MSG_SIZE_TOO_LARGE

    _alter(admin, ResourceType.BROKER, "1", ("message.max.bytes", DELETE, None))
    assert set_cluster_default(bootstrap, "message.max.bytes", None) == 0
    entry = _describe(admin, ResourceType.BROKER, "1")["message.max.bytes"]
    assert (entry.value, entry.source) == ("1048588", ConfigSource.DEFAULT_CONFIG.value)
    assert _produce(bootstrap, plain, 500_000) is None


def test_refusals_name_the_config_and_the_reason(broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})

    def alter(name: str, value: str) -> Callable[[], None]:
        return lambda: _alter(admin, ResourceType.BROKER, "1", (name, SET, value))

    error = _refusal(alter("log.dirs", "/elsewhere"))
    assert error.code() == KafkaError.INVALID_REQUEST
    assert "Cannot update these configs dynamically: Set(log.dirs)" in error.str()
    error = _refusal(alter("no.such.config", "1"))
    assert error.code() == KafkaError.INVALID_CONFIG
    assert "no.such.config" in error.str()
    # Kafka 4.2 answers INVALID_REQUEST to a bad broker config value (INVALID_CONFIG to an unknown name, which
    # it accepts and we refuse).
    error = _refusal(alter("message.max.bytes", "lots"))
    assert error.code() == KafkaError.INVALID_REQUEST
    assert "Invalid value lots for configuration message.max.bytes" in error.str()
    error = _refusal(alter("log.segment.bytes", "5"))
    assert error.code() == KafkaError.INVALID_REQUEST
    assert "log.segment.bytes" in error.str()
    # (librdkafka sends a broker's configs to that broker: only a raw request reaches us for an unknown id)
    assert _wire_alter(broker.bootstrap, "7", "message.max.bytes", "1000") == (
        KafkaError.INVALID_REQUEST,
        "Unknown broker id 7",
    )
    assert _describe(admin, ResourceType.BROKER, "1")["message.max.bytes"].value == "1048588", (
        "nothing changed"
    )


def test_list_configs_take_append_and_subtract(fresh_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": fresh_broker.bootstrap})
    _alter(admin, ResourceType.BROKER, "1", ("log.cleanup.policy", APPEND, "compact"))
    assert _describe(admin, ResourceType.BROKER, "1")["log.cleanup.policy"].value == "delete,compact"
    topic = create_topic(fresh_broker.bootstrap, "follows-the-default")
    assert _describe(admin, ResourceType.TOPIC, topic)["cleanup.policy"].value == "delete,compact"
    _alter(admin, ResourceType.BROKER, "1", ("log.cleanup.policy", SUBTRACT, "delete"))
    assert _describe(admin, ResourceType.TOPIC, topic)["cleanup.policy"].value == "compact"
    error = _refusal(lambda: _alter(admin, ResourceType.BROKER, "1", ("message.max.bytes", APPEND, "5")))
    assert error.code() == KafkaError.INVALID_CONFIG


def _open_connections(bootstrap: str, count: int) -> tuple[list[socket.socket], int]:
    """Open `count` connections and ask each for ApiVersions; (the sockets, how many were answered)."""
    host, port = bootstrap.rsplit(":", 1)
    sockets, answered = [], 0
    for correlation_id in range(count):
        sock = socket.create_connection((host, int(port)), timeout=5)
        sockets.append(sock)
        header = struct.pack(">hhih", 18, 0, correlation_id, 4) + b"test"
        sock.sendall(struct.pack(">i", len(header)) + header)
        with contextlib.suppress(ConnectionResetError, TimeoutError):
            answered += len(sock.recv(4)) == 4
    return sockets, answered


def test_max_connections_per_ip_applies_to_new_connections(fresh_broker: BrokerProcess) -> None:
    admin = KafkaAdminClient(bootstrap_servers=fresh_broker.bootstrap)
    try:
        admin.alter_configs([KafkaPythonResource("BROKER", "1", {"max.connections.per.ip": "4"})])
        # kafka-python holds one or two connections itself: at most 4 in all from 127.0.0.1.
        sockets, answered = _open_connections(fresh_broker.bootstrap, 6)
        assert 2 <= answered <= 3
        for sock in sockets:
            sock.close()
        admin.alter_configs(
            [KafkaPythonResource("BROKER", "1", {"max.connections.per.ip": ("DELETE", None)})]
        )
        sockets, answered = _open_connections(fresh_broker.bootstrap, 6)
        assert answered == 6
        for sock in sockets:
            sock.close()
        described = admin.describe_configs(
            [KafkaPythonResource("BROKER", "1", ["max.connections.per.ip"])], config_filter="all"
        )
        assert described["broker"]["1"]["max.connections.per.ip"]["value"] == "2147483647"
    finally:
        admin.close()


def test_broker_logger_levels_are_described_and_altered(broker: BrokerProcess) -> None:
    # confluent-kafka has no BROKER_LOGGER resource type; kafka-python has.
    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)

    def levels() -> dict[str, str]:
        found = admin.describe_configs([KafkaPythonResource("BROKER_LOGGER", "1")], config_filter="all")
        return {name: entry["value"] for name, entry in found["broker_logger"]["1"].items()}

    def alter(name: str, operation: str, level: str | None) -> object:
        resource = KafkaPythonResource("BROKER_LOGGER", "1", {name: (operation, level)})
        return admin.alter_configs([resource], raise_on_unknown=False)["broker_logger"]["1"]

    try:
        assert levels()["root"] == "INFO"
        assert "broker.replication.manager" in levels()
        alter("broker.replication.manager", "SET", "DEBUG")
        assert levels()["broker.replication.manager"] == "DEBUG"
        alter("broker.replication.manager", "DELETE", None)
        assert levels()["broker.replication.manager"] == "INFO"
        # kafka-python reports a refused resource as the error's text: "[Error 40] InvalidConfigurationError: ..."
        assert alter("root", "SET", "LOUD") == (
            "[Error 40] InvalidConfigurationError: Cannot set the log level of root to LOUD as it is not a "
            "supported log level. Valid log levels are TRACE, DEBUG, INFO, WARN, ERROR, FATAL"
        )
        assert alter("no.such.logger", "SET", "INFO") == (
            "[Error 40] InvalidConfigurationError: Logger no.such.logger does not exist!"
        )
        assert str(alter("root", "APPEND", "INFO")).startswith(
            "[Error 42] InvalidRequestError: APPEND operation"
        )
    finally:
        admin.close()


def test_group_configs_are_kept_checked_and_survive_a_restart(fresh_broker: BrokerProcess) -> None:
    admin = AdminClient({"bootstrap.servers": fresh_broker.bootstrap})
    defaults = _describe(admin, ResourceType.GROUP, "not-yet-a-group")
    assert defaults["consumer.session.timeout.ms"].value == "45000"
    _alter(admin, ResourceType.GROUP, "g1", ("consumer.session.timeout.ms", SET, "50000"))
    error = _refusal(
        lambda: _alter(admin, ResourceType.GROUP, "g1", ("consumer.session.timeout.ms", SET, "1"))
    )
    assert error.code() == KafkaError.INVALID_CONFIG
    fresh_broker.restart()
    admin = AdminClient({"bootstrap.servers": fresh_broker.bootstrap})
    entry = _describe(admin, ResourceType.GROUP, "g1")["consumer.session.timeout.ms"]
    assert (entry.value, entry.source) == ("50000", ConfigSource.GROUP_CONFIG.value)
    _alter(admin, ResourceType.GROUP, "g1", ("consumer.session.timeout.ms", DELETE, None))
    assert _describe(admin, ResourceType.GROUP, "g1")["consumer.session.timeout.ms"].value == "45000"


def test_list_config_resources_names_topics_brokers_and_groups_with_configs(
    fresh_broker: BrokerProcess,
) -> None:
    topic = create_topic(fresh_broker.bootstrap, "listed")
    admin = AdminClient({"bootstrap.servers": fresh_broker.bootstrap})
    _alter(admin, ResourceType.GROUP, "configured", ("consumer.heartbeat.interval.ms", SET, "6000"))
    kafka_python = KafkaAdminClient(bootstrap_servers=fresh_broker.bootstrap)
    try:
        everything = kafka_python.list_config_resources()
        only_groups = kafka_python.list_config_resources(["GROUP"])
    finally:
        kafka_python.close()
    assert topic in everything["topic"]
    assert everything["broker"] == ["1"]
    assert everything["broker_logger"] == ["1"]
    assert only_groups == {"group": ["configured"]}
