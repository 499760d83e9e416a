"""Client telemetry (KIP-714) against a real broker: CLIENT_METRICS subscriptions through the config APIs,
librdkafka pushing its metrics to the Prometheus endpoint, and hostile pushes (garbage, decompression bombs,
floods of client instance ids) that must not hurt the broker or the other clients."""

from __future__ import annotations

import time
import urllib.request
import uuid
from collections.abc import Callable

import cramjam
import pytest
from confluent_kafka import Producer
from kio.schema.api_versions.v3.request import ApiVersionsRequest
from kio.schema.describe_configs.v4.request import DescribeConfigsRequest, DescribeConfigsResource
from kio.schema.get_telemetry_subscriptions.v0.request import GetTelemetrySubscriptionsRequest
from kio.schema.get_telemetry_subscriptions.v0.response import GetTelemetrySubscriptionsResponse
from kio.schema.incremental_alter_configs.v1.request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from kio.schema.list_config_resources.v1.request import ListConfigResourcesRequest
from kio.schema.push_telemetry.v0.request import PushTelemetryRequest
from kio.static.primitive import i8, i32
from opentelemetry.proto.metrics.v1.metrics_pb2 import MetricsData

from tests.fixtures.broker import BrokerProcess
from tests.integration.broker.kafka_wire import WireClient

pytestmark = pytest.mark.integration

CLIENT_METRICS = i8(16)
SET, DELETE = i8(0), i8(1)
ZERO = uuid.UUID(int=0)
NONE, ZSTD = 0, 4


def alter_subscription(bootstrap: str, name: str, **configs: str | None) -> tuple[int, str | None]:
    """IncrementalAlterConfigs on a CLIENT_METRICS resource (SET, or DELETE for None): (error, message)."""
    ops = tuple(
        AlterableConfig(
            name=key.replace("_", "."), config_operation=DELETE if value is None else SET, value=value
        )
        for key, value in configs.items()
    )
    request = IncrementalAlterConfigsRequest(
        resources=(AlterConfigsResource(resource_type=CLIENT_METRICS, resource_name=name, configs=ops),),
        validate_only=False,
    )
    with WireClient(bootstrap) as client:
        response = client.request(request).responses[0]
    return int(response.error_code), response.error_message


def describe_subscription(bootstrap: str, name: str) -> dict[str, tuple[str | None, int]]:
    request = DescribeConfigsRequest(
        resources=(
            DescribeConfigsResource(
                resource_type=CLIENT_METRICS, resource_name=name, configuration_keys=None
            ),
        ),
        include_synonyms=False,
        include_documentation=False,
    )
    with WireClient(bootstrap) as client:
        result = client.request(request).results[0]
    assert int(result.error_code) == 0, result.error_message
    return {c.name: (c.value, int(c.config_source)) for c in result.configs}


def listed_subscriptions(bootstrap: str) -> list[str]:
    with WireClient(bootstrap) as client:
        response = client.request(ListConfigResourcesRequest(resource_types=(CLIENT_METRICS,)))
    return [r.resource_name for r in response.config_resources]


def scrape(broker: BrokerProcess) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{broker.metrics_port}/metrics", timeout=10) as response:
        return response.read().decode()


def gauge(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not exported")


def test_librdkafka_pushes_its_metrics_to_the_prometheus_endpoint(fresh_broker: BrokerProcess) -> None:
    assert alter_subscription(
        fresh_broker.bootstrap,
        "producers",
        metrics="org.apache.kafka.producer.",
        interval_ms="1000",
        match="client_id=telemetry-.*",
    ) == (0, None)
    assert listed_subscriptions(fresh_broker.bootstrap) == ["producers"]
    described = describe_subscription(fresh_broker.bootstrap, "producers")
    assert described["interval.ms"] == ("1000", 7)  # CLIENT_METRICS_CONFIG
    assert described["metrics"] == ("org.apache.kafka.producer.", 7)

    producer = Producer(
        {
            "bootstrap.servers": fresh_broker.bootstrap,
            "client.id": "telemetry-producer",
            "enable.metrics.push": True,
        }
    )
    deadline = time.monotonic() + 30
    exported: list[str] = []
    while time.monotonic() < deadline and not any("node_request_latency_avg" in line for line in exported):
        producer.produce("telemetry-topic", b"value")
        producer.flush(10)
        exported = [
            line
            for line in scrape(fresh_broker).splitlines()
            if line.startswith("kafka_client_org_apache_kafka_producer_")
            and 'client_id="telemetry-producer"' in line
        ]
        time.sleep(0.5)
    producer.flush(10)
    assert exported, fresh_broker.log_text()[-3000:]
    assert all("client_instance_id=" in line for line in exported)
    # A value librdkafka measured, with the data point's own attribute as a label.
    latency = [
        line
        for line in exported
        if line.startswith("kafka_client_org_apache_kafka_producer_node_request_latency_avg{")
    ]
    assert latency
    assert 'node_id="1"' in latency[0]
    assert float(latency[0].rsplit(" ", 1)[1]) > 0


def metrics_payload(name: str, value: float, **attributes: str) -> bytes:
    """An OTLP MetricsData with one gauge data point, as clients push it."""
    data = MetricsData()
    metric = data.resource_metrics.add().scope_metrics.add().metrics.add()
    metric.name = name
    point = metric.gauge.data_points.add()
    point.as_double = value
    for key, text in attributes.items():
        attribute = point.attributes.add()
        attribute.key = key
        attribute.value.string_value = text
    return data.SerializeToString()


def get_subscriptions(client: WireClient, instance_id: uuid.UUID = ZERO) -> GetTelemetrySubscriptionsResponse:
    return client.request(GetTelemetrySubscriptionsRequest(client_instance_id=instance_id))


def push(
    client: WireClient,
    instance_id: uuid.UUID,
    subscription_id: int,
    metrics: bytes,
    compression: int = NONE,
    terminating: bool = False,
) -> int:
    request = PushTelemetryRequest(
        client_instance_id=instance_id,
        subscription_id=i32(subscription_id),
        terminating=terminating,
        compression_type=i8(compression),
        metrics=metrics,
    )
    return int(client.request(request).error_code)


def test_subscriptions_are_validated_as_kafka_does_and_survive_a_restart(fresh_broker: BrokerProcess) -> None:
    bootstrap = fresh_broker.bootstrap
    invalid_request, invalid_config = 42, 40
    assert alter_subscription(bootstrap, "s", colour="blue")[0] == invalid_request
    assert alter_subscription(bootstrap, "s", interval_ms="50")[0] == invalid_request
    assert alter_subscription(bootstrap, "s", interval_ms="soon")[0] == invalid_config
    assert alter_subscription(bootstrap, "s", match="client_colour=blue")[0] == invalid_config
    assert alter_subscription(bootstrap, "s", match="client_id=(")[0] == invalid_config
    assert alter_subscription(bootstrap, "", metrics="*")[0] == invalid_request
    assert listed_subscriptions(bootstrap) == []

    assert alter_subscription(bootstrap, "kept", metrics="*", match="client_software_name=x") == (0, None)
    assert alter_subscription(bootstrap, "dropped", metrics="org.") == (0, None)
    assert alter_subscription(bootstrap, "dropped", metrics=None) == (0, None)
    fresh_broker.restart()
    assert listed_subscriptions(fresh_broker.bootstrap) == ["kept"]
    described = describe_subscription(fresh_broker.bootstrap, "kept")
    assert described["match"] == ("client_software_name=x", 7)
    assert described["interval.ms"] == ("300000", 5)  # DEFAULT_CONFIG


def test_push_errors_follow_kafka(broker_factory) -> None:
    broker = broker_factory(**{"telemetry.max.bytes": 4096})
    assert alter_subscription(broker.bootstrap, "all", metrics="*", interval_ms="60000") == (0, None)
    with WireClient(broker.bootstrap) as client:
        first = get_subscriptions(client)
        assert int(first.error_code) == 0
        instance, subscription = first.client_instance_id, int(first.subscription_id)
        assert instance != ZERO
        assert list(first.requested_metrics) == [""]  # "*": every metric
        assert int(first.telemetry_max_bytes) == 4096
        assert set(first.accepted_compression_types) == {1, 2, 3, 4}
        # Asked again within the push interval: throttled.
        assert int(get_subscriptions(client, instance).error_code) == 89

        assert push(client, instance, subscription + 1, b"") == 117  # UNKNOWN_SUBSCRIPTION_ID
        assert push(client, instance, subscription, b"\xff" * 100) == 87  # INVALID_RECORD
        assert push(client, instance, subscription, metrics_payload("a", 1.0)) == 89  # too early
        assert push(client, instance, subscription, metrics_payload("a", 2.0), terminating=True) == 0
        assert push(client, instance, subscription, metrics_payload("a", 3.0), terminating=True) == 42

        fresh = get_subscriptions(client)
        too_big = metrics_payload("big", 1.0, padding="x" * 5000)
        assert push(client, fresh.client_instance_id, int(fresh.subscription_id), too_big) == 118

        # A zstd bomb: 64 MB of zeros in a few KB. Refused without decompressing it all.
        bomb = bytes(cramjam.zstd.compress(bytes(64 * 1024 * 1024)))
        assert len(bomb) <= 4096
        fresh = get_subscriptions(client)
        assert push(client, fresh.client_instance_id, int(fresh.subscription_id), bomb, ZSTD) == 87
        fresh = get_subscriptions(client)
        assert push(client, fresh.client_instance_id, int(fresh.subscription_id), b"\x01\x02", 7) == 76

        # The broker is fine and keeps what a well-behaved client pushes.
        good = get_subscriptions(client)
        payload = bytes(cramjam.zstd.compress(metrics_payload("org.example.good", 42.0)))
        assert push(client, good.client_instance_id, int(good.subscription_id), payload, ZSTD) == 0
    text = scrape(broker)
    assert (
        f'kafka_client_org_example_good{{client_instance_id="{good.client_instance_id}",client_id="wire-test"}} 42.0'
        in text
    )
    assert f'kafka_client_a{{client_instance_id="{instance}",client_id="wire-test"}} 2.0' in text


def _rss_kb(broker: BrokerProcess) -> int:
    assert broker.process is not None
    with open(f"/proc/{broker.process.pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


def test_a_flood_of_client_instances_stays_bounded(broker_factory) -> None:
    broker = broker_factory(**{"client.telemetry.max.clients": 50})
    assert alter_subscription(broker.bootstrap, "all", metrics="*", interval_ms="100") == (0, None)
    flood = 2_000
    with WireClient(broker.bootstrap) as client, WireClient(broker.bootstrap) as other:
        for number in range(flood):
            answer = get_subscriptions(client)
            payload = metrics_payload("org.flood", float(number), series="x" * 100 + str(number))
            assert push(client, answer.client_instance_id, int(answer.subscription_id), payload) == 0
            if number == flood // 2:
                started = time.monotonic()
                assert int(get_subscriptions(other).error_code) == 0
                assert time.monotonic() - started < 2
    text = scrape(broker)
    assert gauge(text, "kafka_broker_telemetry_clients") == 50
    assert gauge(text, "kafka_broker_telemetry_series") == 50
    assert text.count("kafka_client_org_flood{") == 50
    assert 'series="' + "x" * 100 + str(flood - 1) + '"' in text  # the latest pushers are kept


def test_with_the_receiver_off_the_telemetry_apis_are_not_advertised(
    broker_factory: Callable[..., BrokerProcess],
) -> None:
    broker = broker_factory(**{"client.telemetry.enable": "false"})
    with WireClient(broker.bootstrap) as client:
        advertised = client.request(
            ApiVersionsRequest(client_software_name="telemetry-test", client_software_version="1")
        ).api_keys
        assert {int(key.api_key) for key in advertised}.isdisjoint({71, 72})
        assert int(get_subscriptions(client).error_code) == 35  # UNSUPPORTED_VERSION
    # librdkafka, asked to push, does not try: it works as against a broker without KIP-714.
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.metrics.push": True})
    producer.produce("no-telemetry", b"value")
    assert producer.flush(10) == 0
    assert "GetTelemetrySubscriptions" not in scrape(broker)
