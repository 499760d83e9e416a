"""Consumer-protocol groups (KIP-848) under ACLs, as Kafka 4.0 has them (KAFKA-18813).

A regex subscription resolves only to the topics its member may DESCRIBE; a member naming a topic it may
not describe is refused (TOPIC_AUTHORIZATION_FAILED); ConsumerGroupDescribe describes a group only to a
principal that may describe every topic the group names. Real SASL users, raw requests (librdkafka does
not expose ConsumerGroupDescribe's per-member detail) and a confluent-kafka consumer with a regex.
"""

from __future__ import annotations

import datetime
import time

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import AclOperation, ResourcePatternType, ResourceType
from kio.schema.consumer_group_describe.v0.request import ConsumerGroupDescribeRequest
from kio.schema.consumer_group_heartbeat.v1.request import ConsumerGroupHeartbeatRequest
from kio.schema.errors import ErrorCode

from tests.fixtures.broker import SecureBrokerProcess
from tests.integration.broker.kafka_wire import join_consumer_group
from tests.integration.broker_security.clients import (
    add_scram_user,
    create_topic_as_admin,
    grant,
    unique,
)
from tests.integration.broker_security.wire import admin_wire_client, user_wire_client

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def describe(wire, group: str) -> object:
    return wire.request(
        ConsumerGroupDescribeRequest(group_ids=(group,), include_authorized_operations=False)
    ).groups[0]


def new_user(broker: SecureBrokerProcess) -> tuple[str, str]:
    user, password = unique("user"), "pw-" + unique("s")
    add_scram_user(broker, user, password)
    return user, password


def test_a_regex_resolves_only_to_topics_the_member_may_describe(secure_broker: SecureBrokerProcess) -> None:
    prefix = unique("acl848")
    visible_a, visible_b, secret = f"{prefix}.visible-a", f"{prefix}.visible-b", f"{prefix}.secret"
    create_topic_as_admin(secure_broker, visible_a, partitions=2)
    create_topic_as_admin(secure_broker, visible_b, partitions=1)
    create_topic_as_admin(secure_broker, secret, partitions=3)
    group = f"{prefix}.group"
    member, member_password = new_user(secure_broker)
    grant(secure_broker, member, ResourceType.GROUP, group, AclOperation.READ)
    grant(
        secure_broker,
        member,
        ResourceType.TOPIC,
        f"{prefix}.visible",
        AclOperation.READ,
        pattern=ResourcePatternType.PREFIXED,
    )

    with user_wire_client(secure_broker, member, member_password) as wire:
        # Naming a topic it may not describe is refused outright.
        refused = join_consumer_group(wire, group, (visible_a, secret))
        assert refused.error_code == ErrorCode.topic_authorization_failed
        # A regex matching all three resolves to the two it may describe.
        joined = join_consumer_group(wire, group, None, regex=rf"{prefix}\..*")
        assert joined.error_code == ErrorCode.none, joined
        # As in Kafka the group resolves the new regex in the background: a later heartbeat gets it.
        answer = joined
        deadline = time.monotonic() + 10
        while not (answer.assignment and answer.assignment.topic_partitions):
            assert time.monotonic() < deadline, answer
            time.sleep(0.1)
            answer = wire.request(
                ConsumerGroupHeartbeatRequest(
                    group_id=group,
                    member_id=joined.member_id,
                    member_epoch=answer.member_epoch,
                    instance_id=None,
                    rack_id=None,
                    rebalance_timeout=datetime.timedelta(milliseconds=-1),
                    subscribed_topic_names=None,
                    subscribed_topic_regex=None,
                    server_assignor=None,
                    topic_partitions=(),
                )
            )
            assert answer.error_code == ErrorCode.none, answer
        # The secret topic has 3 partitions: the two visible ones have 2 and 1 (the names are
        # checked in the description below).
        assigned = sorted(len(tp.partitions) for tp in answer.assignment.topic_partitions)
        assert assigned == [1, 2]

    # The super user sees the group, and no trace of the secret topic in it.
    with admin_wire_client(secure_broker) as wire:
        described = describe(wire, group)
    assert described.error_code == ErrorCode.none, described
    named = {tp.topic_name for m in described.members for tp in m.target_assignment.topic_partitions}
    assert named == {visible_a, visible_b}

    # A viewer that may describe the group but only one of its topics gets no description.
    viewer, viewer_password = new_user(secure_broker)
    grant(secure_broker, viewer, ResourceType.GROUP, group, AclOperation.DESCRIBE)
    grant(secure_broker, viewer, ResourceType.TOPIC, visible_a, AclOperation.DESCRIBE)
    with user_wire_client(secure_broker, viewer, viewer_password) as wire:
        hidden = describe(wire, group)
        assert hidden.error_code == ErrorCode.topic_authorization_failed
        assert hidden.members == ()
        grant(secure_broker, viewer, ResourceType.TOPIC, visible_b, AclOperation.DESCRIBE)
        assert describe(wire, group).error_code == ErrorCode.none


def test_a_confluent_consumer_with_a_regex_reads_only_describable_topics(
    secure_broker: SecureBrokerProcess,
) -> None:
    prefix = unique("rx848")
    visible, secret = f"{prefix}.visible", f"{prefix}.secret"
    create_topic_as_admin(secure_broker, visible, partitions=2)
    create_topic_as_admin(secure_broker, secret, partitions=1)
    producer = Producer(secure_broker.client_config())
    for topic in (visible, secret):
        for index in range(3):
            producer.produce(topic, f"{topic}-{index}".encode())
    assert producer.flush(10) == 0
    group = f"{prefix}.group"
    member, member_password = new_user(secure_broker)
    grant(secure_broker, member, ResourceType.GROUP, group, AclOperation.READ)
    grant(secure_broker, member, ResourceType.TOPIC, visible, AclOperation.READ)

    consumer = Consumer(
        {
            **secure_broker.client_config(member, member_password, "SCRAM-SHA-256"),
            "group.id": group,
            "group.protocol": "consumer",
            "auto.offset.reset": "earliest",
        }
    )
    try:
        consumer.subscribe([rf"^{prefix}\..*"])
        received: list[tuple[str, bytes]] = []
        deadline = time.monotonic() + 30
        while len(received) < 3 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                received.append((message.topic(), message.value()))
        # A little longer: nothing of the secret topic may arrive.
        settle = time.monotonic() + 3
        while time.monotonic() < settle:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                received.append((message.topic(), message.value()))
        assert sorted(received) == [(visible, f"{visible}-{i}".encode()) for i in range(3)]
        assert {tp.topic for tp in consumer.assignment()} == {visible}
        # The coordinator never assigned the secret topic (librdkafka alone would hide it: it
        # cannot name a topic id its metadata does not show).
        with admin_wire_client(secure_broker) as wire:
            described = describe(wire, group)
        named = {tp.topic_name for m in described.members for tp in m.target_assignment.topic_partitions}
        assert named == {visible}
    finally:
        consumer.close()
