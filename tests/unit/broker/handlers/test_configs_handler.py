"""The config handlers on a real broker state (no sockets): dynamic defaults reach existing partition logs,
the number of groups with configs and of client metrics subscriptions is bounded, list operations apply to
subscriptions, and ListConfigResources answers each version's shape."""

from __future__ import annotations

from pathlib import Path

import pytest
from kio.schema.errors import ErrorCode
from kio.schema.incremental_alter_configs.v1.request import (
    AlterableConfig,
    AlterConfigsResource,
    IncrementalAlterConfigsRequest,
)
from kio.schema.list_config_resources.v0.request import ListConfigResourcesRequest as ListClientMetricsRequest
from kio.schema.list_config_resources.v1.request import ListConfigResourcesRequest
from kio.static.primitive import i8

from broker.context import RequestContext
from broker.handlers import configs
from broker.protocol.frames import encode_response
from broker.protocol.responses import build_response
from broker.telemetry import subscriptions
from tests.unit.broker.running_state import running_state

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
BROKER, CLIENT_METRICS, GROUP = 4, 16, 32


def _alter(loop, state, resource_type: int, name: str, config: str, value: str | None) -> ErrorCode:
    ctx = RequestContext(
        api_key=44,
        api_version=1,
        correlation_id=1,
        client_id="test",
        client_host="127.0.0.1",
        client_port=1,
        listener_name="PLAINTEXT",
        broker=state,
    )
    operation = SET if value is not None else DELETE
    request = IncrementalAlterConfigsRequest(
        resources=(
            AlterConfigsResource(
                resource_type=i8(resource_type),
                resource_name=name,
                configs=(AlterableConfig(name=config, config_operation=i8(operation), value=value),),
            ),
        ),
        validate_only=False,
    )
    response = loop.run_until_complete(configs.handle_incremental_alter_configs(ctx, request))
    return response.responses[0].error_code


def test_a_dynamic_default_reaches_the_logs_of_topics_without_their_own(tmp_path: Path) -> None:
    with running_state(tmp_path, "orders") as (loop, state):
        log = state.logs.get("orders", 0)
        assert log is not None
        assert _alter(loop, state, BROKER, "", "log.segment.bytes", "2097152") == ErrorCode.none
        assert log.config.segment_bytes == 2097152
        assert _alter(loop, state, BROKER, "", "log.segment.bytes", None) == ErrorCode.none
        assert log.config.segment_bytes == 1073741824
        # In the metadata log, as a cluster's: a single node writes no side file.
        assert not (tmp_path / "dynamic-configs.json").exists()


def test_groups_with_configs_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(configs, "MAX_GROUPS_WITH_CONFIGS", 2)
    name = "consumer.heartbeat.interval.ms"
    with running_state(tmp_path, "orders") as (loop, state):
        assert _alter(loop, state, GROUP, "a", name, "6000") == ErrorCode.none
        assert _alter(loop, state, GROUP, "b", name, "6000") == ErrorCode.none
        assert _alter(loop, state, GROUP, "c", name, "6000") == ErrorCode.policy_violation
        assert _alter(loop, state, GROUP, "a", name, "7000") == ErrorCode.none, (
            "a configured group stays alterable"
        )
        assert _alter(loop, state, GROUP, "b", name, None) == ErrorCode.none
        assert _alter(loop, state, GROUP, "c", name, "6000") == ErrorCode.none


def _alter_ops(loop, state, name: str, *ops: tuple[str, int, str | None]) -> ErrorCode:
    """IncrementalAlterConfigs on a CLIENT_METRICS resource with several operations."""
    ctx = RequestContext(
        api_key=44,
        api_version=1,
        correlation_id=1,
        client_id="test",
        client_host="127.0.0.1",
        client_port=1,
        listener_name="PLAINTEXT",
        broker=state,
    )
    request = IncrementalAlterConfigsRequest(
        resources=(
            AlterConfigsResource(
                resource_type=i8(CLIENT_METRICS),
                resource_name=name,
                configs=tuple(
                    AlterableConfig(name=config, config_operation=i8(op), value=value)
                    for config, op, value in ops
                ),
            ),
        ),
        validate_only=False,
    )
    response = loop.run_until_complete(configs.handle_incremental_alter_configs(ctx, request))
    return response.responses[0].error_code


def test_client_metrics_lists_take_append_and_subtract(tmp_path: Path) -> None:
    with running_state(tmp_path, "orders") as (loop, state):
        assert _alter_ops(loop, state, "s", ("metrics", SET, "org.a.")) == ErrorCode.none
        assert _alter_ops(loop, state, "s", ("metrics", APPEND, "org.b.,org.c.")) == ErrorCode.none
        assert _alter_ops(loop, state, "s", ("metrics", SUBTRACT, "org.a.")) == ErrorCode.none
        assert _alter_ops(loop, state, "s", ("match", APPEND, "client_id=x")) == ErrorCode.none
        assert state.client_metrics_subscriptions() == {
            "s": {"metrics": "org.b.,org.c.", "match": "client_id=x"}
        }
        assert _alter_ops(loop, state, "s", ("interval.ms", APPEND, "5")) == ErrorCode.invalid_config
        assert _alter_ops(loop, state, "s", ("match", APPEND, "client_colour=x")) == ErrorCode.invalid_config
        assert not (tmp_path / "dynamic-configs.json").exists()
        assert (
            _alter_ops(loop, state, "s", ("metrics", DELETE, None), ("match", DELETE, None)) == ErrorCode.none
        )
        assert state.client_metrics_subscriptions() == {}


def test_client_metrics_subscriptions_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(subscriptions, "MAX_SUBSCRIPTIONS", 2)
    with running_state(tmp_path, "orders") as (loop, state):
        assert _alter_ops(loop, state, "a", ("metrics", SET, "*")) == ErrorCode.none
        assert _alter_ops(loop, state, "b", ("metrics", SET, "*")) == ErrorCode.none
        assert _alter_ops(loop, state, "c", ("metrics", SET, "*")) == ErrorCode.policy_violation
        assert _alter_ops(loop, state, "a", ("interval.ms", SET, "1000")) == ErrorCode.none


def _context(state: object, api_key: int, api_version: int) -> RequestContext:
    return RequestContext(
        api_key=api_key,
        api_version=api_version,
        correlation_id=1,
        client_id="test",
        client_host="127.0.0.1",
        client_port=1,
        listener_name="PLAINTEXT",
        broker=state,  # type: ignore[arg-type]
    )


def test_list_config_resources_answers_each_version_in_its_own_shape(tmp_path: Path) -> None:
    """v1 lists the asked types with each resource's type; v0 (Kafka 4.0's ListClientMetricsResources) lists
    client metrics subscriptions by name only, and both go out as kio encodes them."""
    with running_state(tmp_path, "orders") as (loop, state):
        listed = loop.run_until_complete(
            configs.handle_list_config_resources(
                _context(state, 74, 1), ListConfigResourcesRequest(resource_types=(i8(configs.TOPIC),))
            )
        )
        v1 = build_response(74, 1, listed)
        assert v1.error_code == ErrorCode.none
        # Every topic, the internal ones included, each with its type.
        assert [(r.resource_name, r.resource_type) for r in v1.config_resources] == [
            (name, configs.TOPIC) for name in ("__consumer_offsets", "__transaction_state", "orders")
        ]
        assert encode_response(74, 1, 1, v1)

        refused = loop.run_until_complete(
            configs.handle_list_config_resources(
                _context(state, 74, 1), ListConfigResourcesRequest(resource_types=(i8(1),))
            )
        )
        assert (refused.error_code, refused.config_resources) == (ErrorCode.unsupported_version, ())

        assert _alter(loop, state, CLIENT_METRICS, "every-client", "interval.ms", "60000") == ErrorCode.none
        metrics = loop.run_until_complete(
            configs.handle_list_config_resources(_context(state, 74, 0), ListClientMetricsRequest())
        )
        v0 = build_response(74, 0, metrics)
        assert [r.resource_name for r in v0.config_resources] == ["every-client"]
        assert not hasattr(v0.config_resources[0], "resource_type")
        assert encode_response(74, 0, 1, v0)
