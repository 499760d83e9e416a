"""Dynamic broker configs: the replication throttles are changed at runtime through AlterConfigs."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import KafkaError, Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ResourceType,
)

from tests.fixtures.cluster import LocalCluster
from tests.integration.broker.test_dynamic_broker_configs import set_cluster_default
from tests.integration.cluster.fault_checker import create_topic, partition_states, wait_for_isr

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

THROTTLE = "leader.replication.throttled.rate"


def _alter(admin: AdminClient, broker: str, *entries: ConfigEntry) -> None:
    resource = ConfigResource(ResourceType.BROKER, broker, incremental_configs=list(entries))
    admin.incremental_alter_configs([resource])[resource].result(15)


def _set(name: str, value: str) -> ConfigEntry:
    return ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)


def _delete(name: str) -> ConfigEntry:
    return ConfigEntry(name, None, incremental_operation=AlterConfigOpType.DELETE)


def test_a_dynamic_leader_throttle_holds_a_catching_up_replica_back_until_it_is_removed(
    cluster3: LocalCluster,
) -> None:
    admin = AdminClient(cluster3.client_config())
    create_topic(cluster3, "throttled", 1)
    assert wait_for_isr(cluster3, "throttled", 30)
    leader, replicas, _ = partition_states(cluster3, "throttled")[0]
    lagging = next(r for r in replicas if r != leader)

    cluster3.node(lagging).stop()
    producer = Producer(cluster3.client_config(acks="all", **{"linger.ms": "20"}))
    for _ in range(3000):
        producer.produce("throttled", b"x" * 1000, partition=0)
        producer.poll(0)
    assert producer.flush(30) == 0

    _alter(admin, str(leader), _set(THROTTLE, "100000"))  # 100 kB/s: ~30 s for 3 MB
    resource = ConfigResource(ResourceType.BROKER, str(leader))
    described = admin.describe_configs([resource])[resource].result(15)
    assert described[THROTTLE].value == "100000"
    assert described[THROTTLE].source == ConfigSource.DYNAMIC_BROKER_CONFIG.value

    cluster3.node(lagging).start()
    time.sleep(6)
    _, _, isr = partition_states(cluster3, "throttled")[0]
    assert lagging not in isr, "the throttled replica caught up 3 MB at 100 kB/s within 6 s"

    _alter(admin, str(leader), _delete(THROTTLE))
    assert wait_for_isr(cluster3, "throttled", 20), (
        "the replica did not catch up once the throttle was removed"
    )


def test_broker_configs_that_cannot_change_at_runtime_are_refused(cluster3: LocalCluster) -> None:
    admin = AdminClient(cluster3.client_config())
    with pytest.raises(Exception, match=r"Cannot update these configs dynamically: Set\(log.dirs\)"):
        _alter(admin, "1", _set("log.dirs", "/elsewhere"))
    with pytest.raises(
        Exception, match=r"Invalid value -5 for configuration leader\.replication\.throttled\.rate"
    ):
        _alter(admin, "1", _set(THROTTLE, "-5"))


def test_the_cluster_default_reaches_every_broker_takes_effect_and_outlives_a_restart(
    cluster3: LocalCluster,
) -> None:
    admin = AdminClient(cluster3.client_config())
    # No client library sends the cluster default "" (librdkafka and kafka-python refuse the name).
    assert set_cluster_default(cluster3.node(1).bootstrap, "message.max.bytes", "20000") == 0
    create_topic(cluster3, "capped", 1)
    for broker_id in (1, 2, 3):
        entry = _describe_broker(admin, broker_id)["message.max.bytes"]
        assert (entry.value, entry.source) == ("20000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG.value)
    producer = Producer(
        cluster3.client_config(acks="all", **{"message.max.bytes": "10000000", "retries": "0"})
    )
    outcome: list[object] = []
    producer.produce("capped", b"x" * 50_000, on_delivery=lambda err, _msg: outcome.append(err))
    producer.flush(30)
    assert outcome
    assert getattr(outcome[0], "code", lambda: None)() == KafkaError.MSG_SIZE_TOO_LARGE

    _alter(admin, "2", _set("message.max.bytes", "30000"))
    cluster3.node(2).restart()
    cluster3.wait_ready()
    entry = _describe_broker(admin, 2)["message.max.bytes"]
    assert (entry.value, entry.source) == ("30000", ConfigSource.DYNAMIC_BROKER_CONFIG.value)
    assert _describe_broker(admin, 1)["message.max.bytes"].value == "20000"

    group = ConfigResource(
        ResourceType.GROUP, "g1", incremental_configs=[_set("consumer.heartbeat.interval.ms", "6000")]
    )
    admin.incremental_alter_configs([group])[group].result(15)
    described = admin.describe_configs([ConfigResource(ResourceType.GROUP, "g1")])
    assert next(iter(described.values())).result(15)["consumer.heartbeat.interval.ms"].value == "6000"


def _describe_broker(admin: AdminClient, broker_id: int) -> dict:
    resource = ConfigResource(ResourceType.BROKER, str(broker_id))
    return admin.describe_configs([resource])[resource].result(15)
