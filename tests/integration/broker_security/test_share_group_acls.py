"""Share groups under ACLs, as Kafka checks them: a heartbeat needs READ on the group and DESCRIBE on the
topics it subscribes to; ShareFetch needs READ on the group and READ on each topic (refused per partition)."""

from __future__ import annotations

import datetime
import uuid

import pytest
from confluent_kafka.admin import AclOperation, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
from kio.schema.errors import ErrorCode
from kio.schema.share_fetch.v2 import request as share_fetch
from kio.schema.share_group_heartbeat.v1.request import ShareGroupHeartbeatRequest
from kio.static.primitive import i32

from tests.fixtures.broker import SecureBrokerProcess
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker_security.clients import (
    add_scram_user,
    admin,
    create_topic_as_admin,
    grant,
    produce_one,
    unique,
)
from tests.integration.broker_security.wire import admin_wire_client, user_wire_client

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def _heartbeat(wire: WireClient, group: str, member: str, topic: str) -> object:
    return wire.request(
        ShareGroupHeartbeatRequest(
            group_id=group, member_id=member, member_epoch=i32(0), subscribed_topic_names=(topic,)
        )
    )


def _fetch(wire: WireClient, group: str, member: str, topic_id: uuid.UUID) -> object:
    return wire.request(
        share_fetch.ShareFetchRequest(
            group_id=group,
            member_id=member,
            share_session_epoch=i32(0),
            max_wait=datetime.timedelta(milliseconds=100),
            min_bytes=i32(1),
            max_bytes=i32(1 << 20),
            max_records=i32(10),
            batch_size=i32(10),
            topics=(
                share_fetch.FetchTopic(
                    topic_id=topic_id,
                    partitions=(
                        share_fetch.FetchPartition(partition_index=i32(0), acknowledgement_batches=()),
                    ),
                ),
            ),
            forgotten_topics_data=(),
        )
    )


def test_share_group_heartbeat_and_fetch_need_kafkas_rights(secure_broker: SecureBrokerProcess) -> None:
    topic, group, member = unique("share-acl"), unique("share-acl-group"), uuid.uuid4().hex[:22]
    create_topic_as_admin(secure_broker, topic)
    assert produce_one(secure_broker.client_config(), topic) is None
    reset = ConfigResource(
        ConfigResource.Type.GROUP,
        group,
        incremental_configs=[
            ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    client = admin(secure_broker)  # kept alive until the future resolves
    client.incremental_alter_configs([reset])[reset].result(10)
    with admin_wire_client(secure_broker) as wire:
        topic_id = _heartbeat(wire, f"{group}-admin", member, topic).assignment.topic_partitions[0].topic_id

    user, password = unique("share-user"), "pw-" + unique("s")
    add_scram_user(secure_broker, user, password)
    with user_wire_client(secure_broker, user, password) as wire:
        assert _heartbeat(wire, group, member, topic).error_code == ErrorCode.group_authorization_failed
        assert _fetch(wire, group, member, topic_id).error_code == ErrorCode.group_authorization_failed
    grant(secure_broker, user, ResourceType.GROUP, group, AclOperation.READ)
    with user_wire_client(secure_broker, user, password) as wire:
        assert _heartbeat(wire, group, member, topic).error_code == ErrorCode.topic_authorization_failed
        (partition,) = _fetch(wire, group, member, topic_id).responses[0].partitions
        assert partition.error_code == ErrorCode.topic_authorization_failed
    grant(secure_broker, user, ResourceType.TOPIC, topic, AclOperation.DESCRIBE)
    with user_wire_client(secure_broker, user, password) as wire:
        joined = _heartbeat(wire, group, member, topic)
        assert joined.error_code == ErrorCode.none
        assert [list(tp.partitions) for tp in joined.assignment.topic_partitions] == [[0]]
        # DESCRIBE is not READ: the records stay out of reach.
        (partition,) = _fetch(wire, group, member, topic_id).responses[0].partitions
        assert partition.error_code == ErrorCode.topic_authorization_failed
    grant(secure_broker, user, ResourceType.TOPIC, topic, AclOperation.READ)
    with user_wire_client(secure_broker, user, password) as wire:
        (partition,) = _fetch(wire, group, member, topic_id).responses[0].partitions
        assert partition.error_code == ErrorCode.none
        assert [(r.first_offset, r.last_offset, r.delivery_count) for r in partition.acquired_records] == [
            (0, 0, 1)
        ]
