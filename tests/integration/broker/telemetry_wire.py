"""Client telemetry (KIP-714) over the wire, for tests and benches: CLIENT_METRICS subscriptions through the
config APIs, GetTelemetrySubscriptions / PushTelemetry, OTLP payloads, and the broker's metrics endpoint."""

from __future__ import annotations

import urllib.request
import uuid

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

from tests.integration.broker.kafka_wire import WireClient

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


def scrape(metrics_port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as response:
        return response.read().decode()


def gauge(text: str, name: str) -> float:
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    raise AssertionError(f"{name} not exported")


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
