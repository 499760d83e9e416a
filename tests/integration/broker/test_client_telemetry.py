"""Client telemetry (KIP-714) against a real broker: CLIENT_METRICS subscriptions through the config APIs,
librdkafka pushing its metrics to the Prometheus endpoint, and hostile pushes (garbage, decompression bombs,
floods of client instance ids) that must not hurt the broker or the other clients."""

from __future__ import annotations

import time
from collections.abc import Callable

import cramjam
import pytest
from confluent_kafka import Consumer, Producer
from kio.schema.api_versions.v3.request import ApiVersionsRequest

from tests.fixtures.broker import BrokerProcess
from tests.integration.broker.kafka_wire import WireClient
from tests.integration.broker.telemetry_wire import (
    ZERO,
    ZSTD,
    alter_subscription,
    describe_subscription,
    gauge,
    get_subscriptions,
    listed_subscriptions,
    metrics_payload,
    push,
    scrape,
)

pytestmark = pytest.mark.integration


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
            for line in scrape(fresh_broker.metrics_port).splitlines()
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


def test_a_consumer_matched_by_its_software_name_pushes_and_an_unmatched_producer_does_not(
    fresh_broker: BrokerProcess,
) -> None:
    assert alter_subscription(
        fresh_broker.bootstrap,
        "python-consumers",
        metrics="*",
        interval_ms="500",
        # What ApiVersions said (confluent-kafka-python's name) and the client id.
        match="client_software_name=confluent-kafka-python,client_id=telemetry-consumer",
    ) == (0, None)
    bystander = Producer(
        {"bootstrap.servers": fresh_broker.bootstrap, "client.id": "bystander", "enable.metrics.push": True}
    )
    bystander.produce("consumed", b"value")
    assert bystander.flush(10) == 0
    consumer = Consumer(
        {
            "bootstrap.servers": fresh_broker.bootstrap,
            "client.id": "telemetry-consumer",
            "group.id": "telemetry",
            "auto.offset.reset": "earliest",
            "enable.metrics.push": True,
        }
    )
    try:
        consumer.subscribe(["consumed"])
        deadline = time.monotonic() + 30
        consumer_lines: list[str] = []
        while time.monotonic() < deadline and not consumer_lines:
            consumer.poll(0.5)
            bystander.poll(0)
            consumer_lines = [
                line
                for line in scrape(fresh_broker.metrics_port).splitlines()
                if line.startswith("kafka_client_org_apache_kafka_consumer_")
                and 'client_id="telemetry-consumer"' in line
            ]
    finally:
        consumer.close()
    assert consumer_lines, fresh_broker.log_text()[-3000:]
    assert 'client_id="bystander"' not in scrape(fresh_broker.metrics_port)


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
        assert list(first.requested_metrics) == ["*"]  # every metric
        assert int(first.telemetry_max_bytes) == 4096
        assert set(first.accepted_compression_types) == {1, 2, 3, 4}
        # Asked again within the push interval: throttled.
        assert int(get_subscriptions(client, instance).error_code) == 89

        assert push(client, instance, subscription + 1, b"") == 117  # UNKNOWN_SUBSCRIPTION_ID
        assert push(client, instance, subscription, metrics_payload("a", 1.0)) == 89  # too early
        assert push(client, instance, subscription, metrics_payload("a", 2.0), terminating=True) == 0
        assert push(client, instance, subscription, metrics_payload("a", 3.0), terminating=True) == 42

        fresh = get_subscriptions(client)
        assert push(client, fresh.client_instance_id, int(fresh.subscription_id), b"\xff" * 100) == 87

        fresh = get_subscriptions(client)
        too_big = metrics_payload("big", 1.0, padding="x" * 5000)
        assert push(client, fresh.client_instance_id, int(fresh.subscription_id), too_big) == 118

        # A zstd bomb: 64 MB of zeros in a few KB. Refused without decompressing it all.
        bomb = bytes(cramjam.zstd.compress(bytes(64 * 1024 * 1024)))
        assert len(bomb) <= 4096
        fresh = get_subscriptions(client)
        assert push(client, fresh.client_instance_id, int(fresh.subscription_id), bomb, ZSTD) == 118
        fresh = get_subscriptions(client)
        assert push(client, fresh.client_instance_id, int(fresh.subscription_id), b"\x01\x02", 7) == 76

        # The broker is fine and keeps what a well-behaved client pushes.
        good = get_subscriptions(client)
        payload = bytes(cramjam.zstd.compress(metrics_payload("org.example.good", 42.0)))
        assert push(client, good.client_instance_id, int(good.subscription_id), payload, ZSTD) == 0
    text = scrape(broker.metrics_port)
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
    text = scrape(broker.metrics_port)
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
    assert "GetTelemetrySubscriptions" not in scrape(broker.metrics_port)
