"""Group administration through confluent-kafka's and kafka-python's admin clients."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from confluent_kafka import (
    Consumer,
    ConsumerGroupState,
    ConsumerGroupTopicPartitions,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from kafka import KafkaAdminClient
from kafka.admin import MemberToRemove
from kafka.structs import TopicPartition as KafkaPythonTopicPartition

from .test_groups_confluent import (
    balanced,
    consumers_closed_at_teardown,
    create_topic,
    poll_until,
    unique,
)

pytestmark = pytest.mark.integration


@pytest.fixture
def open_consumer() -> Iterator[Callable[..., Consumer]]:
    yield from consumers_closed_at_teardown()


@pytest.fixture
def admin(broker) -> AdminClient:
    return AdminClient({"bootstrap.servers": broker.bootstrap})


@pytest.fixture
def kafka_python_admin(broker):
    client = KafkaAdminClient(bootstrap_servers=broker.bootstrap, request_timeout_ms=10000)
    yield client
    client.close()


def set_offsets(admin: AdminClient, group: str, *partitions: TopicPartition) -> None:
    request = [ConsumerGroupTopicPartitions(group, list(partitions))]
    admin.alter_consumer_group_offsets(request)[group].result(10)


def read_offsets(admin: AdminClient, group: str) -> dict[tuple[str, int], int]:
    result = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group].result(10)
    return {(tp.topic, tp.partition): tp.offset for tp in result.topic_partitions}


def test_it_lists_describes_and_deletes_a_live_group(broker, admin: AdminClient, open_consumer) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 2)
    member = open_consumer(broker.bootstrap, group, **{"client.id": "describe-me"})
    member.subscribe([topic])
    poll_until([member], balanced([member], 2))

    listed = admin.list_consumer_groups(states={ConsumerGroupState.STABLE}).result(10)
    assert group in {g.group_id for g in listed.valid}
    empty_only = admin.list_consumer_groups(states={ConsumerGroupState.EMPTY}).result(10)
    assert group not in {g.group_id for g in empty_only.valid}

    description = admin.describe_consumer_groups([group])[group].result(10)
    assert description.state == ConsumerGroupState.STABLE
    assert description.partition_assignor == "range"
    (described,) = description.members
    assert described.client_id == "describe-me"
    assert described.host.endswith("127.0.0.1")
    assert sorted(tp.partition for tp in described.assignment.topic_partitions) == [0, 1]
    assert description.coordinator.id == 1

    with pytest.raises(KafkaException) as refused:
        admin.delete_consumer_groups([group])[group].result(10)
    assert refused.value.args[0].name() == "NON_EMPTY_GROUP"

    member.close()
    admin.delete_consumer_groups([group])[group].result(10)
    assert group not in {g.group_id for g in admin.list_consumer_groups().result(10).valid}


def test_it_alters_and_lists_offsets_of_an_empty_group(broker, admin: AdminClient) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 3)
    set_offsets(admin, group, TopicPartition(topic, 0, 10), TopicPartition(topic, 2, 30))
    assert read_offsets(admin, group) == {(topic, 0): 10, (topic, 2): 30}
    set_offsets(admin, group, TopicPartition(topic, 0, 11))
    assert read_offsets(admin, group) == {(topic, 0): 11, (topic, 2): 30}
    description = admin.describe_consumer_groups([group])[group].result(10)
    assert description.state == ConsumerGroupState.EMPTY
    assert description.members == []


def test_deleting_an_unknown_group_reports_group_id_not_found(admin: AdminClient) -> None:
    group = unique("missing")
    with pytest.raises(KafkaException) as failure:
        admin.delete_consumer_groups([group])[group].result(10)
    assert failure.value.args[0].name() == "GROUP_ID_NOT_FOUND"


def test_offset_delete_is_refused_for_consumed_topics_and_allowed_for_others(
    broker, admin: AdminClient, kafka_python_admin, open_consumer
) -> None:
    consumed, old, group = unique("consumed"), unique("old"), unique("g")
    create_topic(broker.bootstrap, consumed, 1)
    create_topic(broker.bootstrap, old, 1)
    set_offsets(admin, group, TopicPartition(consumed, 0, 5), TopicPartition(old, 0, 7))
    member = open_consumer(broker.bootstrap, group)
    member.subscribe([consumed])
    poll_until([member], balanced([member], 1))

    result = kafka_python_admin.delete_group_offsets(
        group, [KafkaPythonTopicPartition(consumed, 0), KafkaPythonTopicPartition(old, 0)]
    )
    errors = {tp.topic: error for tp, error in result.items()}
    assert errors[old].errno == 0
    assert errors[consumed].errno == 86  # GROUP_SUBSCRIBED_TO_TOPIC
    assert read_offsets(admin, group) == {(consumed, 0): 5}
    member.close()


def test_kafka_python_admin_lists_describes_and_deletes_groups(
    broker, kafka_python_admin, open_consumer
) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 1)
    member = open_consumer(broker.bootstrap, group, **{"client.id": "kp-visible"})
    member.subscribe([topic])
    poll_until([member], balanced([member], 1))
    member.commit(offsets=[TopicPartition(topic, 0, 3)], asynchronous=False)

    listed = {entry["group_id"]: entry for entry in kafka_python_admin.list_groups()}
    assert listed[group]["group_state"] == "Stable"
    assert listed[group]["protocol_type"] == "consumer"
    description = kafka_python_admin.describe_groups([group])[group]
    assert description["error"] is None
    assert description["protocol_data"] == "range"
    assert [m["client_id"] for m in description["members"]] == ["kp-visible"]
    offsets = kafka_python_admin.list_group_offsets(group)[group]
    assert offsets[KafkaPythonTopicPartition(topic, 0)].offset == 3

    assert kafka_python_admin.delete_groups([group]) == {group: "NonEmptyGroupError"}
    member.close()
    missing = unique("nobody")
    assert kafka_python_admin.delete_groups([group, missing]) == {
        group: "OK",
        missing: "GroupIdNotFoundError",
    }


def test_static_members_are_removed_by_instance_id_in_one_leave_group(
    broker, admin: AdminClient, kafka_python_admin, open_consumer
) -> None:
    topic, group = unique("t"), unique("g")
    create_topic(broker.bootstrap, topic, 2)
    members = [
        open_consumer(
            broker.bootstrap, group, **{"group.instance.id": f"pod-{i}", "session.timeout.ms": 30000}
        )
        for i in range(2)
    ]
    for member in members:
        member.subscribe([topic])
    poll_until(members, balanced(members, 2))
    for member in members:
        member.close()  # static members do not leave on close: they stay until removed or expired
    assert len(admin.describe_consumer_groups([group])[group].result(10).members) == 2

    result = kafka_python_admin.remove_group_members(
        group,
        [MemberToRemove(group_instance_id="pod-0"), MemberToRemove(group_instance_id="pod-1"),
         MemberToRemove(group_instance_id="pod-9")],
    )  # fmt: skip
    # The broker echoes the member ids as sent (empty here), so kafka-python keys by instance id.
    errors = {key: error.errno for key, error in result.items()}
    assert errors == {"pod-0": 0, "pod-1": 0, "pod-9": 25}  # UNKNOWN_MEMBER_ID for the stranger
    described = admin.describe_consumer_groups([group])[group].result(10)
    assert (described.state, described.members) == (ConsumerGroupState.EMPTY, [])
