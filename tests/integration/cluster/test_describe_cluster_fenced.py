"""DescribeCluster v2 lists the brokers the controller fenced when asked (include_fenced_brokers), as Kafka 4.0."""

from __future__ import annotations

import pytest

from broker.wire.schemas import request_class
from tests.fixtures.cluster import LocalCluster
from tests.fixtures.entity_trees import entity_from_tree
from tests.fixtures.servers import wait_until
from tests.integration.broker.kafka_wire import WireClient

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def _described(cluster: LocalCluster, include_fenced: bool) -> dict[int, bool]:
    body = {"include_cluster_authorized_operations": False, "include_fenced_brokers": include_fenced}
    with WireClient(cluster.node(1).bootstrap) as client:
        response = client.request(entity_from_tree(request_class(60, 2), body))
    assert response.error_code == 0
    return {broker.broker_id: broker.is_fenced for broker in response.brokers}


def test_a_stopped_broker_is_listed_as_fenced_only_when_asked(cluster3: LocalCluster) -> None:
    assert _described(cluster3, include_fenced=True) == {1: False, 2: False, 3: False}
    cluster3.node(3).kill9()
    # Fenced once its session times out (broker.session.timeout.ms, 2 s in test clusters).
    wait_until(
        lambda: _described(cluster3, include_fenced=False) == {1: False, 2: False}, 30, "node 3 fenced"
    )
    assert _described(cluster3, include_fenced=True) == {1: False, 2: False, 3: True}
