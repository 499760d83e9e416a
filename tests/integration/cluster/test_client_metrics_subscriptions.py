"""CLIENT_METRICS subscriptions in a cluster: kept in the metadata log, so every broker matches its clients
against the same subscriptions, and a restarted broker has them back."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from kio.schema.get_telemetry_subscriptions.v0.request import GetTelemetrySubscriptionsRequest

from tests.fixtures.cluster import LocalCluster
from tests.fixtures.servers import wait_until
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker.telemetry_wire import ZERO, alter_subscription, listed_subscriptions

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def requested_metrics(bootstrap: str) -> list[str]:
    with WireClient(bootstrap) as client:
        answer = client.request(GetTelemetrySubscriptionsRequest(client_instance_id=ZERO))
    assert int(answer.error_code) == 0
    return list(answer.requested_metrics)


def test_every_broker_serves_the_subscriptions_of_the_metadata_log(
    cluster_factory: Callable[..., LocalCluster],
) -> None:
    cluster = cluster_factory(2)
    first, second = (node.bootstrap for node in cluster.nodes.values())
    assert alter_subscription(first, "producers", metrics="org.apache.kafka.producer.") == (0, None)
    wait_until(lambda: listed_subscriptions(second) == ["producers"], 10, "the subscription on broker 2")
    assert requested_metrics(second) == ["org.apache.kafka.producer."]

    # Broker 2 restarted reads them back from the metadata log.
    cluster.nodes[2].restart()
    cluster.wait_ready()
    assert listed_subscriptions(second) == ["producers"]
    assert alter_subscription(second, "producers", metrics=None) == (0, None)
    wait_until(lambda: requested_metrics(first) == [], 10, "the deletion on broker 1")
