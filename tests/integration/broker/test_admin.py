"""Topic and config administration through real admin clients."""

import subprocess

import pytest
from confluent_kafka import KafkaException, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)

pytestmark = pytest.mark.integration


def admin_for(broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


def create(admin: AdminClient, *topics: NewTopic, validate_only: bool = False) -> dict:
    futures = admin.create_topics(list(topics), operation_timeout=5, validate_only=validate_only)
    outcome = {}
    for name, future in futures.items():
        try:
            future.result(10)
            outcome[name] = None
        except KafkaException as exc:
            outcome[name] = exc.args[0]
    return outcome


def test_it_creates_lists_and_deletes_a_topic(broker, topic_name):
    admin = admin_for(broker)
    assert create(admin, NewTopic(topic_name, num_partitions=3, replication_factor=1)) == {topic_name: None}
    metadata = admin.list_topics(timeout=10)
    assert sorted(metadata.topics[topic_name].partitions) == [0, 1, 2]
    assert metadata.topics[topic_name].partitions[0].leader == 1
    admin.delete_topics([topic_name], operation_timeout=5)[topic_name].result(10)
    assert topic_name not in admin.list_topics(timeout=10).topics


def test_it_refuses_a_duplicate_topic(broker, topic_name):
    admin = admin_for(broker)
    create(admin, NewTopic(topic_name, 1, 1))
    error = create(admin, NewTopic(topic_name, 1, 1))[topic_name]
    assert error.name() == "TOPIC_ALREADY_EXISTS"


@pytest.mark.parametrize(
    ("name", "partitions", "replication", "config", "expected"),
    [
        ("bad/name", 1, 1, {}, "TOPIC_EXCEPTION"),
        ("x" * 250, 1, 1, {}, "TOPIC_EXCEPTION"),
        ("zero-partitions", 0, 1, {}, "INVALID_PARTITIONS"),
        ("three-replicas", 1, 3, {}, "INVALID_REPLICATION_FACTOR"),
        ("bad-config", 1, 1, {"retention.ms": "soon"}, "INVALID_CONFIG"),
        ("unknown-config", 1, 1, {"no.such.config": "1"}, "INVALID_CONFIG"),
    ],
)
def test_it_rejects_invalid_topics_with_the_right_error(
    broker, name, partitions, replication, config, expected
):
    error = create(admin_for(broker), NewTopic(name, partitions, replication, config=config))[name]
    assert error is not None
    assert error.name() == expected


def test_validate_only_creates_nothing(broker, topic_name):
    admin = admin_for(broker)
    assert create(admin, NewTopic(topic_name, 2, 1), validate_only=True) == {topic_name: None}
    assert topic_name not in admin.list_topics(timeout=10).topics


def test_topics_differing_only_in_dot_and_underscore_collide(broker, topic_name):
    admin = admin_for(broker)
    create(admin, NewTopic(f"{topic_name}.a", 1, 1))
    error = create(admin, NewTopic(f"{topic_name}_a", 1, 1))[f"{topic_name}_a"]
    assert error.name() == "TOPIC_EXCEPTION"


def test_it_creates_with_a_manual_replica_assignment_and_checks_it(broker, topic_name):
    # confluent-kafka 2.16's Python layer refuses replica assignments, so kafka-python sends them.
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic as KpNewTopic
    from kafka.errors import InvalidReplicationAssignmentError

    admin = KafkaAdminClient(bootstrap_servers=broker.bootstrap)
    try:
        admin.create_topics([KpNewTopic(topic_name, -1, -1, replica_assignments={0: [1], 1: [1]})])
        assert len(admin_for(broker).list_topics(timeout=10).topics[topic_name].partitions) == 2
        with pytest.raises(InvalidReplicationAssignmentError):
            admin.create_topics([KpNewTopic(topic_name + "-x", -1, -1, replica_assignments={0: [7]})])
    finally:
        admin.close()


def test_it_describes_topic_configs_with_defaults_and_overrides(broker, topic_name):
    admin = admin_for(broker)
    create(admin, NewTopic(topic_name, 1, 1, config={"retention.ms": "3600000", "cleanup.policy": "compact"}))
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic_name)
    configs = admin.describe_configs([resource])[resource].result(10)
    assert configs["retention.ms"].value == "3600000"
    assert configs["retention.ms"].source == ConfigSource.DYNAMIC_TOPIC_CONFIG.value
    assert configs["cleanup.policy"].value == "compact"
    assert configs["segment.bytes"].value == "1073741824"
    assert configs["segment.bytes"].is_default
    assert configs["max.message.bytes"].value == "1048588"


def test_it_alters_configs_incrementally_and_wholesale(broker, topic_name):
    admin = admin_for(broker)
    create(admin, NewTopic(topic_name, 1, 1))
    resource = ConfigResource(
        ConfigResource.Type.TOPIC,
        topic_name,
        incremental_configs=[
            ConfigEntry("retention.ms", "1000", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    admin.incremental_alter_configs([resource])[resource].result(10)
    described = admin.describe_configs([ConfigResource("topic", topic_name)])
    assert next(iter(described.values())).result(10)["retention.ms"].value == "1000"

    bad = ConfigResource(
        ConfigResource.Type.TOPIC,
        topic_name,
        incremental_configs=[ConfigEntry("retention.ms", "x", incremental_operation=AlterConfigOpType.SET)],
    )
    with pytest.raises(KafkaException) as raised:
        admin.incremental_alter_configs([bad])[bad].result(10)
    assert raised.value.args[0].name() == "INVALID_CONFIG"

    whole = ConfigResource(ConfigResource.Type.TOPIC, topic_name, set_config={"segment.ms": "60000"})
    admin.alter_configs([whole])[whole].result(10)
    configs = next(iter(admin.describe_configs([ConfigResource("topic", topic_name)]).values())).result(10)
    assert configs["segment.ms"].value == "60000"
    # AlterConfigs replaces the override set: retention.ms is back to its default.
    assert configs["retention.ms"].value == "604800000"


def test_it_describes_broker_configs(broker):
    admin = admin_for(broker)
    resource = ConfigResource(ConfigResource.Type.BROKER, "1")
    configs = admin.describe_configs([resource])[resource].result(10)
    assert configs["num.partitions"].value == "1"
    assert configs["group.initial.rebalance.delay.ms"].value == "0"
    assert not configs["group.initial.rebalance.delay.ms"].is_default


def test_it_adds_partitions(broker, topic_name):
    admin = admin_for(broker)
    create(admin, NewTopic(topic_name, 1, 1))
    admin.create_partitions([NewPartitions(topic_name, 4)])[topic_name].result(10)
    assert len(admin.list_topics(timeout=10).topics[topic_name].partitions) == 4
    with pytest.raises(KafkaException) as raised:
        admin.create_partitions([NewPartitions(topic_name, 2)])[topic_name].result(10)
    assert raised.value.args[0].name() == "INVALID_PARTITIONS"


def test_it_deletes_records_and_moves_the_log_start(broker, topic_name):
    from confluent_kafka import Consumer, Producer

    admin = admin_for(broker)
    create(admin, NewTopic(topic_name, 1, 1))
    producer = Producer({"bootstrap.servers": broker.bootstrap, "linger.ms": 0})
    for i in range(10):
        producer.produce(topic_name, value=str(i).encode())
    assert producer.flush(10) == 0
    futures = admin.delete_records([TopicPartition(topic_name, 0, 6)])
    result = next(iter(futures.values())).result(10)
    assert result.low_watermark == 6
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": topic_name})
    low, high = consumer.get_watermark_offsets(TopicPartition(topic_name, 0), timeout=10)
    consumer.close()
    assert (low, high) == (6, 10)


def test_kcat_lists_the_cluster(broker, topic_name, kcat):
    create(admin_for(broker), NewTopic(topic_name, 2, 1))
    output = subprocess.run(
        [kcat, "-b", broker.bootstrap, "-L", "-t", topic_name],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    assert "1 brokers:" in output
    assert f'topic "{topic_name}" with 2 partitions' in output
