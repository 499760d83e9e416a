"""Finalized features in a three-node cluster: UpdateFeatures sent to any broker is forwarded to the active
controller and recorded in the metadata log; every broker advertises the levels, and they survive a kill -9
of the active controller (the new one refuses and accepts from the same levels) and a restart."""

from __future__ import annotations

import datetime
import time
from typing import Any

import pytest
from kio.schema.api_versions.v4.request import ApiVersionsRequest
from kio.schema.update_features.v2.request import FeatureUpdateKey, UpdateFeaturesRequest
from kio.static.primitive import i8, i16, i32Timedelta

from tests.fixtures.cluster import ClusterNode, LocalCluster
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.cluster.controller_failover import active_controller

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

UPGRADE, SAFE_DOWNGRADE = 1, 2
PREFIX = "The update failed for all features since the following feature had an error: "


def levels(node: ClusterNode) -> dict[str, int]:
    with WireClient(node.bootstrap) as client:
        response = client.request(ApiVersionsRequest(client_software_name="t", client_software_version="1"))
    assert response.finalized_features_epoch > 0
    return {k.name: int(k.max_version_level) for k in response.finalized_features}


def update(node: ClusterNode, feature: str, level: int, kind: int) -> Any:
    request = UpdateFeaturesRequest(
        timeout=i32Timedelta.parse(datetime.timedelta(seconds=15)),
        feature_updates=(
            FeatureUpdateKey(feature=feature, max_version_level=i16(level), upgrade_type=i8(kind)),
        ),
        validate_only=False,
    )
    with WireClient(node.bootstrap, timeout=20) as client:
        return client.request(request)


def wait_for_levels(nodes: list[ClusterNode], wanted: dict[str, int], timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        seen = {node.node_id: levels(node) for node in nodes}
        if all(found == wanted for found in seen.values()):
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"wanted {wanted} on every broker, saw {seen}")
        time.sleep(0.2)


def test_levels_are_replicated_and_survive_a_controller_failover(cluster3: LocalCluster) -> None:
    defaults = {
        "metadata.version": 29,
        "share.version": 1,
        "streams.version": 1,
        "group.version": 1,
        "transaction.version": 2,
    }
    wait_for_levels(cluster3.brokers, defaults)

    controller = active_controller(cluster3)
    other = next(n for n in cluster3.brokers if n.node_id != controller)
    response = update(other, "group.version", 0, SAFE_DOWNGRADE)
    assert (response.error_code, response.error_message) == (0, None)
    lowered = {"metadata.version": 29, "share.version": 1, "streams.version": 1, "transaction.version": 2}
    # Forwarded writes return once the receiving broker's image has them; the others follow.
    assert levels(other) == lowered
    wait_for_levels(cluster3.brokers, lowered)

    cluster3.node(controller).kill9()
    survivors = [n for n in cluster3.brokers if n.node_id != controller]
    deadline = time.monotonic() + 30
    while (new_controller := active_controller(cluster3)) == controller:
        assert time.monotonic() < deadline, "no new active controller after the kill"
        time.sleep(0.1)
    wait_for_levels(survivors, lowered)

    # The new controller checks against the recorded level (0): a plain upgrade type may raise it...
    refused = update(survivors[0], "group.version", 5, UPGRADE)
    assert (refused.error_code, refused.error_message) == (
        95,
        PREFIX + f"Invalid update version 5 for feature group.version. Local controller {new_controller} "
        "only supports versions 0-1",
    )
    assert update(survivors[1], "transaction.version", 0, SAFE_DOWNGRADE).error_code == 0
    wait_for_levels(survivors, {"metadata.version": 29, "share.version": 1, "streams.version": 1})

    # ...and the killed node, restarted, catches up with what was decided while it was away.
    cluster3.node(controller).restart(hard=True)
    cluster3.wait_ready()
    wait_for_levels(cluster3.brokers, {"metadata.version": 29, "share.version": 1, "streams.version": 1})
    assert update(cluster3.node(controller), "group.version", 1, UPGRADE).error_code == 0
    wait_for_levels(
        cluster3.brokers,
        {"metadata.version": 29, "share.version": 1, "streams.version": 1, "group.version": 1},
    )
