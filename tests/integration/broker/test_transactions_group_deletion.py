"""DeleteGroups on a group whose offsets a transaction still holds (confluent-kafka's transactional
producer against one broker process). As in Kafka: a group without members is deleted, the
transaction's pending offsets with it; the commit marker that follows leaves the group deleted, also
after a restart replays `__consumer_offsets`, while the transaction's records are committed."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import OFFSET_INVALID, Consumer, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient

from tests.fixtures.broker import BrokerProcess

from .test_transactions_clients import create_topics, read_all, transactional_producer, unique

pytestmark = pytest.mark.integration


def committed_offset(bootstrap: str, group: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        (found,) = consumer.committed([TopicPartition(topic, 0)], 10)
        return found.offset
    finally:
        consumer.close()


def listed_groups(admin: AdminClient) -> set[str]:
    return {listed.group_id for listed in admin.list_consumer_groups().result(10).valid}


def test_a_group_deleted_with_offsets_pending_in_a_transaction_stays_deleted(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    broker = broker_factory()
    source, sink, group = unique("del-in"), unique("del-out"), unique("del-group")
    create_topics(broker.bootstrap, 1, source, sink)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    producer = transactional_producer(broker.bootstrap, unique("del-tid"))
    member_less = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})

    producer.begin_transaction()
    producer.produce(sink, value=b"kept", partition=0)
    producer.send_offsets_to_transaction(
        [TopicPartition(source, 0, 7)], member_less.consumer_group_metadata(), 20
    )
    # The offsets are pending in the open transaction: the group has no members, so it may go.
    admin.delete_consumer_groups([group], request_timeout=10)[group].result(10)
    producer.commit_transaction(30)

    assert committed_offset(broker.bootstrap, group, source) == OFFSET_INVALID
    assert group not in listed_groups(admin)
    assert read_all(broker.bootstrap, sink, 1, isolation="read_committed", expect_at_least=1) == [b"kept"]
    member_less.close()

    broker.kill9()
    broker.start()  # replays __consumer_offsets: the tombstones drop the transaction's offsets there too
    assert committed_offset(broker.bootstrap, group, source) == OFFSET_INVALID
    assert group not in listed_groups(AdminClient({"bootstrap.servers": broker.bootstrap}))


def test_a_group_with_members_is_not_deleted_while_its_offsets_are_pending(broker: BrokerProcess) -> None:
    source, group = unique("busy-in"), unique("busy-group")
    create_topics(broker.bootstrap, 1, source)
    member = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group, "session.timeout.ms": 6000})
    member.subscribe([source])
    try:
        while not member.assignment():
            member.poll(0.2)
        producer = transactional_producer(broker.bootstrap, unique("busy-tid"))
        producer.begin_transaction()
        producer.send_offsets_to_transaction(
            [TopicPartition(source, 0, 3)], member.consumer_group_metadata(), 20
        )
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        with pytest.raises(KafkaException) as refused:
            admin.delete_consumer_groups([group], request_timeout=10)[group].result(10)
        assert refused.value.args[0].code() == KafkaError.NON_EMPTY_GROUP
        producer.commit_transaction(30)
        (found,) = member.committed([TopicPartition(source, 0)], 10)
        assert found.offset == 3
    finally:
        member.close()
