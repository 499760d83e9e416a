"""Finalized features (KIP-584) on a single node: ApiVersions v3/v4 advertise them, UpdateFeatures v0-2
changes them (upgrade, safe / unsafe downgrade, validate-only) or refuses as Kafka does, the levels survive a
restart, and group.version 0 turns the consumer protocol off.

Neither client library has a features call (confluent-kafka's AdminClient.describe_cluster carries no
features; kafka-python 3.0 has no describe_features), so these are raw requests; a librdkafka consumer shows
what group.version 0 does to a client."""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError
from kio.schema.api_versions.v3.request import ApiVersionsRequest as ApiVersionsV3
from kio.schema.api_versions.v4.request import ApiVersionsRequest as ApiVersionsV4
from kio.schema.consumer_group_describe.v0.request import ConsumerGroupDescribeRequest
from kio.schema.consumer_group_heartbeat.v0.request import ConsumerGroupHeartbeatRequest
from kio.schema.update_features.v0.request import FeatureUpdateKey as UpdateV0
from kio.schema.update_features.v0.request import UpdateFeaturesRequest as UpdateFeaturesV0
from kio.schema.update_features.v1.request import FeatureUpdateKey as UpdateV1
from kio.schema.update_features.v1.request import UpdateFeaturesRequest as UpdateFeaturesV1
from kio.schema.update_features.v2.request import FeatureUpdateKey as UpdateV2
from kio.schema.update_features.v2.request import UpdateFeaturesRequest as UpdateFeaturesV2
from kio.static.primitive import i8, i16, i32Timedelta

from tests.fixtures.broker import BrokerProcess
from tests.integration.broker.kafka_wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

INVALID_UPDATE_VERSION = 95
UNSUPPORTED_VERSION = 35
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
PREFIX = "The update failed for all features since the following feature had an error: "
TIMEOUT = i32Timedelta.parse(datetime.timedelta(seconds=10))


def api_versions(broker: BrokerProcess, version: int = 4) -> Any:
    request = (ApiVersionsV4 if version == 4 else ApiVersionsV3)(
        client_software_name="features-test", client_software_version="1"
    )
    with WireClient(broker.bootstrap) as client:
        response = client.request(request)
    assert response.error_code == 0
    return response


def finalized(broker: BrokerProcess) -> tuple[int, dict[str, int]]:
    response = api_versions(broker)
    levels = {}
    for key in response.finalized_features:
        assert key.min_version_level == key.max_version_level
        levels[key.name] = int(key.max_version_level)
    return int(response.finalized_features_epoch), levels


def update_v2(broker: BrokerProcess, *updates: tuple[str, int, int], validate_only: bool = False) -> Any:
    request = UpdateFeaturesV2(
        timeout=TIMEOUT,
        feature_updates=tuple(
            UpdateV2(feature=name, max_version_level=i16(level), upgrade_type=i8(kind))
            for name, level, kind in updates
        ),
        validate_only=validate_only,
    )
    with WireClient(broker.bootstrap) as client:
        return client.request(request)


def test_a_fresh_broker_advertises_and_finalizes_kafka_42s_defaults(fresh_broker: BrokerProcess) -> None:
    v4 = api_versions(fresh_broker, 4)
    supported = {k.name: (int(k.min_version), int(k.max_version)) for k in v4.supported_features}
    assert supported == {
        "metadata.version": (7, 29),
        "kraft.version": (0, 1),
        "transaction.version": (0, 2),
        "group.version": (0, 1),
        "share.version": (0, 1),
        "streams.version": (0, 1),
    }
    # v3 leaves out what has minimum 0 (older clients read 0 as "unsupported").
    v3 = api_versions(fresh_broker, 3)
    assert [k.name for k in v3.supported_features] == ["metadata.version"]
    epoch, levels = finalized(fresh_broker)
    # 4.2-IV1, the consumer protocol on, share and Streams groups on (as Kafka 4.2 finalizes them), KIP-890
    # part 2 transactions; kraft.version 0 is not listed (a level of 0 is not finalized).
    assert levels == {
        "metadata.version": 29,
        "group.version": 1,
        "share.version": 1,
        "streams.version": 1,
        "transaction.version": 2,
    }
    assert epoch >= 0


def test_upgrade_and_downgrade_take_effect_and_survive_a_restart(fresh_broker: BrokerProcess) -> None:
    epoch_before, _ = finalized(fresh_broker)
    response = update_v2(fresh_broker, ("group.version", 0, SAFE_DOWNGRADE))
    assert (response.error_code, response.error_message) == (0, None)
    epoch, levels = finalized(fresh_broker)
    assert "group.version" not in levels
    assert epoch > epoch_before

    fresh_broker.restart(hard=True)
    assert "group.version" not in finalized(fresh_broker)[1]
    response = update_v2(
        fresh_broker, ("group.version", 1, UPGRADE), ("transaction.version", 0, SAFE_DOWNGRADE)
    )
    assert response.error_code == 0
    levels = finalized(fresh_broker)[1]
    assert levels["group.version"] == 1
    assert "transaction.version" not in levels

    # metadata.version 29 -> 24: nothing in the metadata format changed at 25-29, a safe downgrade.
    assert update_v2(fresh_broker, ("metadata.version", 24, SAFE_DOWNGRADE)).error_code == 0
    assert finalized(fresh_broker)[1]["metadata.version"] == 24


def test_validate_only_and_old_versions(fresh_broker: BrokerProcess) -> None:
    response = update_v2(fresh_broker, ("group.version", 0, SAFE_DOWNGRADE), validate_only=True)
    assert response.error_code == 0
    assert finalized(fresh_broker)[1]["group.version"] == 1

    with WireClient(fresh_broker.bootstrap) as client:
        # v0: allow_downgrade; success answers one NONE row per feature.
        v0 = client.request(
            UpdateFeaturesV0(
                timeout=TIMEOUT,
                feature_updates=(
                    UpdateV0(feature="group.version", max_version_level=i16(0), allow_downgrade=True),
                ),
            )
        )
        assert v0.error_code == 0
        assert [(r.feature, r.error_code, r.error_message) for r in v0.results] == [
            ("group.version", 0, "NONE")
        ]
        v1 = client.request(
            UpdateFeaturesV1(
                timeout=TIMEOUT,
                feature_updates=(
                    UpdateV1(feature="group.version", max_version_level=i16(1), upgrade_type=i8(1)),
                ),
                validate_only=False,
            )
        )
        assert v1.error_code == 0
        assert len(v1.results) == 1
    assert finalized(fresh_broker)[1]["group.version"] == 1


@pytest.mark.parametrize(
    ("updates", "message"),
    [
        (
            [("group.version", 0, UPGRADE)],
            "Invalid update version 0 for feature group.version. Can't downgrade the version of this feature "
            "without setting the upgrade type to either safe or unsafe downgrade.",
        ),
        (
            [("group.version", 2, UPGRADE)],
            "Invalid update version 2 for feature group.version. Local controller 1 only supports versions 0-1",
        ),
        (
            [("transaction.version", 3, UPGRADE)],
            "Invalid update version 3 for feature transaction.version. Local controller 1 only supports "
            "versions 0-2",
        ),
        (
            [("no.such.version", 1, UPGRADE)],
            "Invalid update version 1 for feature no.such.version. Local controller 1 does not support this "
            "feature.",
        ),
        (
            [("group.version", -1, SAFE_DOWNGRADE)],
            "Invalid update version -1 for feature group.version. A feature version cannot be less than 0.",
        ),
        (
            [("group.version", 1, 7)],
            "Invalid update version 1 for feature group.version. The controller does not support the given "
            "upgrade type.",
        ),
        (
            [("metadata.version", 21, SAFE_DOWNGRADE)],
            "Invalid metadata.version 21. Refusing to perform the requested downgrade because it might delete "
            "metadata information. Retry using UNSAFE_DOWNGRADE if you want to force the downgrade to proceed.",
        ),
        (
            [("metadata.version", 21, UNSAFE_DOWNGRADE)],
            "Invalid metadata.version 21. Unsafe metadata downgrade is not supported in this version.",
        ),
        (
            [("kraft.version", 1, UPGRADE)],
            "Invalid update version 1 for feature kraft.version. kraft.version is set when the controllers' "
            "storage is formatted (static or dynamic quorum) and cannot be changed by UpdateFeatures.",
        ),
        (
            [("metadata.version", 6, SAFE_DOWNGRADE)],
            "Invalid update version 6 for feature metadata.version. Local controller 1 only supports versions "
            "7-29",
        ),
    ],
)
def test_refusals_are_kafkas_and_change_nothing(
    broker_factory: Callable[..., BrokerProcess], updates: list[tuple[str, int, int]], message: str
) -> None:
    broker = broker_factory(**{"node.id": 1})
    before = finalized(broker)
    response = update_v2(broker, *updates)
    assert (response.error_code, response.error_message) == (INVALID_UPDATE_VERSION, PREFIX + message)
    assert finalized(broker) == before


def test_one_refused_update_refuses_the_whole_request(fresh_broker: BrokerProcess) -> None:
    response = update_v2(
        fresh_broker, ("transaction.version", 9, UPGRADE), ("group.version", 0, SAFE_DOWNGRADE)
    )
    assert response.error_code == INVALID_UPDATE_VERSION
    response = update_v2(
        fresh_broker, ("group.version", 0, SAFE_DOWNGRADE), ("transaction.version", 9, UPGRADE)
    )
    assert response.error_code == INVALID_UPDATE_VERSION
    assert "transaction.version" in response.error_message
    assert finalized(fresh_broker)[1]["group.version"] == 1


def test_group_version_0_turns_the_consumer_protocol_off(fresh_broker: BrokerProcess) -> None:
    heartbeat = ConsumerGroupHeartbeatRequest(
        group_id="features-group",
        member_id="",
        member_epoch=0,
        instance_id=None,
        rack_id=None,
        rebalance_timeout=i32Timedelta.parse(datetime.timedelta(seconds=30)),
        subscribed_topic_names=("features-topic",),
        server_assignor=None,
        topic_partitions=(),
    )
    with WireClient(fresh_broker.bootstrap) as client:
        assert client.request(heartbeat).error_code == 0
    assert update_v2(fresh_broker, ("group.version", 0, SAFE_DOWNGRADE)).error_code == 0
    with WireClient(fresh_broker.bootstrap) as client:
        refused = client.request(heartbeat)
        assert (refused.error_code, refused.error_message) == (
            UNSUPPORTED_VERSION,
            "The version of API is not supported.",
        )
        described = client.request(
            ConsumerGroupDescribeRequest(group_ids=("features-group",), include_authorized_operations=False)
        )
        assert [g.error_code for g in described.groups] == [UNSUPPORTED_VERSION]
    assert update_v2(fresh_broker, ("group.version", 1, UPGRADE)).error_code == 0
    with WireClient(fresh_broker.bootstrap) as client:
        assert client.request(heartbeat).error_code == 0


def test_a_librdkafka_consumer_protocol_member_fails_as_against_kafka_with_group_version_0(
    fresh_broker: BrokerProcess,
) -> None:
    assert update_v2(fresh_broker, ("group.version", 0, SAFE_DOWNGRADE)).error_code == 0
    errors: list[KafkaError] = []
    consumer = Consumer(
        {
            "bootstrap.servers": fresh_broker.bootstrap,
            "group.id": "features-gv0",
            "group.protocol": "consumer",
            "error_cb": errors.append,
        }
    )
    try:
        consumer.subscribe(["features-gv0-topic"])
        deadline = time.monotonic() + 15
        while not errors and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is not None:
                errors.append(message.error())
    finally:
        consumer.close()
    assert errors, "the consumer protocol member was not refused"
    assert errors[0].code() == KafkaError._FATAL
    assert "ConsumerGroupHeartbeat" in errors[0].str()
    assert "API version not supported" in errors[0].str()
