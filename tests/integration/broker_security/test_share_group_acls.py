"""Share groups under ACLs, as Kafka checks them: a heartbeat needs READ on the group and DESCRIBE on the
topics it subscribes to; ShareFetch needs READ on the group and READ on each topic (refused per partition)."""

from __future__ import annotations

import datetime
import time
import uuid

import pytest
from confluent_kafka.admin import AclOperation, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
from kio.schema.errors import ErrorCode
from kio.schema.initialize_share_group_state.v0 import request as initialize_state
from kio.schema.metadata.v12 import request as metadata_v12
from kio.schema.read_share_group_state.v0 import request as read_state
from kio.schema.share_fetch.v2 import request as share_fetch
from kio.schema.share_group_heartbeat.v1.request import ShareGroupHeartbeatRequest
from kio.static.primitive import i32, i64

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


def _topic_id(wire: WireClient, topic: str) -> uuid.UUID:
    response = wire.request(
        metadata_v12.MetadataRequest(
            topics=(metadata_v12.MetadataRequestTopic(topic_id=None, name=topic),),
            allow_auto_topic_creation=False,
            include_topic_authorized_operations=False,
        )
    )
    return response.topics[0].topic_id


def _assigned(wire: WireClient, group: str, member: str, joined: object) -> list[list[int]]:
    """The partitions the member hears of once the group initialized them (a heartbeat or more after it
    joined, as from Kafka)."""
    epoch, deadline = joined.member_epoch, time.monotonic() + 20
    while time.monotonic() < deadline:
        time.sleep(0.2)
        answer = wire.request(
            ShareGroupHeartbeatRequest(group_id=group, member_id=member, member_epoch=epoch)
        )
        assert answer.error_code == ErrorCode.none
        epoch = answer.member_epoch
        if answer.assignment is not None and answer.assignment.topic_partitions:
            return [list(tp.partitions) for tp in answer.assignment.topic_partitions]
    raise AssertionError("no partition assigned within 20 s")


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
        topic_id = _topic_id(wire, topic)

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
        assert _assigned(wire, group, member, joined) == [[0]]
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


def test_the_share_coordinator_rpcs_need_cluster_action(secure_broker: SecureBrokerProcess) -> None:
    """Initialize/Read/Write ShareGroupState are for brokers: a user, even with every right on the group and the
    topic, gets CLUSTER_AUTHORIZATION_FAILED per partition and changes nothing; CLUSTER_ACTION opens them."""
    topic, group = unique("share-state-acl"), unique("share-state-acl-group")
    create_topic_as_admin(secure_broker, topic)
    with admin_wire_client(secure_broker) as wire:
        topic_id = _topic_id(wire, topic)
    user, password = unique("share-state-user"), "pw-" + unique("s")
    add_scram_user(secure_broker, user, password)
    grant(secure_broker, user, ResourceType.GROUP, group, AclOperation.ALL)
    grant(secure_broker, user, ResourceType.TOPIC, topic, AclOperation.ALL)

    def initialize(wire: WireClient) -> ErrorCode:
        answer = wire.request(
            initialize_state.InitializeShareGroupStateRequest(
                group_id=group,
                topics=(
                    initialize_state.InitializeStateData(
                        topic_id=topic_id,
                        partitions=(
                            initialize_state.PartitionData(
                                partition=i32(0), state_epoch=i32(0), start_offset=i64(0)
                            ),
                        ),
                    ),
                ),
            )
        )
        return answer.results[0].partitions[0].error_code

    def read(wire: WireClient) -> object:
        answer = wire.request(
            read_state.ReadShareGroupStateRequest(
                group_id=group,
                topics=(
                    read_state.ReadStateData(
                        topic_id=topic_id,
                        partitions=(read_state.PartitionData(partition=i32(0), leader_epoch=i32(0)),),
                    ),
                ),
            )
        )
        return answer.results[0].partitions[0]

    with user_wire_client(secure_broker, user, password) as wire:
        assert initialize(wire) == ErrorCode.cluster_authorization_failed
        assert read(wire).error_code == ErrorCode.cluster_authorization_failed
    with admin_wire_client(secure_broker) as wire:
        # The refused initialize changed nothing.
        assert read(wire).error_code == ErrorCode.invalid_request
    grant(secure_broker, user, ResourceType.BROKER, "kafka-cluster", AclOperation.CLUSTER_ACTION)
    with user_wire_client(secure_broker, user, password) as wire:
        assert initialize(wire) == ErrorCode.none
        found = read(wire)
        assert (found.error_code, found.start_offset) == (ErrorCode.none, 0)
