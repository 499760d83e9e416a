"""DescribeConfigs (32), AlterConfigs (33) and IncrementalAlterConfigs (44)."""

from __future__ import annotations

from typing import Any

from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.config import BROKER_DEFAULTS, SENSITIVE_BROKER_CONFIGS, TOPIC_CONFIG_BROKER_SYNONYMS
from broker.config_docs import BROKER_CONFIG_DOCUMENTATION, TOPIC_CONFIG_DOCUMENTATION
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError, ControllerLink
from broker.log.config import known_topic_configs
from broker.metadata.topic_registry import TopicRecord
from broker.replication.manager import DYNAMIC_BROKER_CONFIGS
from broker.topics import TopicError

TOPIC = 2
BROKER = 4

# ConfigSource values from Kafka's DescribeConfigsResponse.
DYNAMIC_TOPIC_CONFIG = 1
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5

# ConfigType values (DescribeConfigs v3+).
BOOLEAN, STRING, INT, LONG, DOUBLE, LIST = 1, 2, 3, 5, 6, 7
_TOPIC_TYPES = {
    "cleanup.policy": LIST,
    "compression.type": STRING,
    "message.timestamp.type": STRING,
    "min.cleanable.dirty.ratio": DOUBLE,
    "preallocate": BOOLEAN,
    "unclean.leader.election.enable": BOOLEAN,
    "segment.bytes": INT,
    "max.message.bytes": INT,
    "index.interval.bytes": INT,
    "segment.index.bytes": INT,
    "min.insync.replicas": INT,
}
_BROKER_TYPES = {bool: BOOLEAN, str: STRING, int: LONG, float: DOUBLE, list: LIST}

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3


def _entry(
    name: str,
    value: str | None,
    source: int,
    read_only: bool,
    config_type: int,
    synonyms: list[dict],
    documentation: str | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "value": value,
        "read_only": read_only,
        "config_source": source,
        "is_sensitive": name in SENSITIVE_BROKER_CONFIGS,
        "synonyms": synonyms,
        "config_type": config_type,
        "documentation": documentation,
    }


def _broker_synonym(ctx: RequestContext, topic_config: str) -> list[dict[str, Any]]:
    config = ctx.broker.config
    broker_name = TOPIC_CONFIG_BROKER_SYNONYMS[topic_config]
    value = config.broker_value(broker_name)
    source = STATIC_BROKER_CONFIG if broker_name in config.explicit else DEFAULT_CONFIG
    return [{"name": broker_name, "value": value, "source": source}]


def describe_topic_config_entries(
    ctx: RequestContext,
    topic: TopicRecord,
    *,
    include_synonyms: bool,
    keys: Any = None,
    include_documentation: bool = False,
) -> list[dict[str, Any]]:
    defaults = ctx.broker.config.topic_defaults()
    entries = []
    for name in sorted(known_topic_configs()):
        if keys is not None and name not in keys:
            continue
        broker_synonyms = _broker_synonym(ctx, name) if name in TOPIC_CONFIG_BROKER_SYNONYMS else []
        if name in topic.configs:
            value, source = topic.configs[name], DYNAMIC_TOPIC_CONFIG
            synonyms = [{"name": name, "value": value, "source": source}, *broker_synonyms]
        else:
            value = defaults.get(name)
            source = broker_synonyms[0]["source"] if broker_synonyms else DEFAULT_CONFIG
            synonyms = broker_synonyms
        entries.append(
            _entry(
                name,
                value,
                source,
                False,
                _TOPIC_TYPES.get(name, LONG),
                synonyms if include_synonyms else [],
                TOPIC_CONFIG_DOCUMENTATION.get(name) if include_documentation else None,
            )
        )
    return entries


def _describe_broker(
    ctx: RequestContext, resource_name: str, include_synonyms: bool, keys: Any, include_documentation: bool
) -> list[dict[str, Any]]:
    config = ctx.broker.config
    entries = []
    for name, (kind, _default) in sorted(BROKER_DEFAULTS.items()):
        if keys is not None and name not in keys:
            continue
        source = STATIC_BROKER_CONFIG if name in config.explicit else DEFAULT_CONFIG
        value = None if name in SENSITIVE_BROKER_CONFIGS else config.broker_value(name)
        synonyms = [{"name": name, "value": value, "source": source}] if include_synonyms else []
        # Everything but the dynamic replication throttles is read-only at runtime.
        entries.append(_entry(name, value, source, True, _BROKER_TYPES.get(kind, STRING), synonyms))
    if ctx.broker.cluster is not None:
        entries.extend(_describe_dynamic(ctx, resource_name, include_synonyms, keys))
    if include_documentation:
        for entry in entries:
            entry["documentation"] = BROKER_CONFIG_DOCUMENTATION.get(entry["name"])
    return entries


def _describe_dynamic(
    ctx: RequestContext, resource_name: str, include_synonyms: bool, keys: Any
) -> list[dict[str, Any]]:
    """The dynamic replication throttles: this broker's value, else the cluster default, else unset."""
    own = _dynamic_broker_configs(ctx, resource_name) if resource_name else {}
    default = _dynamic_broker_configs(ctx, "")
    entries = []
    for name in DYNAMIC_BROKER_CONFIGS:
        if keys is not None and name not in keys:
            continue
        synonyms = []
        if name in own:
            synonyms.append({"name": name, "value": own[name], "source": DYNAMIC_BROKER_CONFIG})
        if name in default:
            synonyms.append({"name": name, "value": default[name], "source": DYNAMIC_DEFAULT_BROKER_CONFIG})
        value, source = (synonyms[0]["value"], synonyms[0]["source"]) if synonyms else (None, DEFAULT_CONFIG)
        entries.append(_entry(name, value, source, False, LONG, synonyms if include_synonyms else []))
    return entries


def _authorization_error(ctx: RequestContext, resource: Any, operation: Operation) -> ErrorCode | None:
    """The error for a principal without `operation` on this topic (or the cluster, for brokers)."""
    if resource.resource_type == TOPIC:
        if not ctx.allowed(operation, ResourceType.TOPIC, resource.resource_name):
            return ErrorCode.topic_authorization_failed
    elif resource.resource_type == BROKER and not ctx.allowed(operation, ResourceType.CLUSTER, CLUSTER_NAME):
        return ErrorCode.cluster_authorization_failed
    return None


async def handle_describe_configs(ctx: RequestContext, request: Any) -> dict[str, Any]:
    include_synonyms = bool(getattr(request, "include_synonyms", False))
    # v3+: Kafka sends each config's documentation only when asked, null otherwise.
    include_documentation = bool(getattr(request, "include_documentation", False))
    results = []
    for resource in request.resources:
        keys = set(resource.configuration_keys) if resource.configuration_keys is not None else None
        result: dict[str, Any] = {
            "error_code": ErrorCode.none,
            "error_message": None,
            "resource_type": resource.resource_type,
            "resource_name": resource.resource_name,
            "configs": [],
        }
        denied = _authorization_error(ctx, resource, Operation.DESCRIBE_CONFIGS)
        if denied is not None:
            result.update(error_code=denied, error_message="Authorization failed.")
        elif resource.resource_type == TOPIC:
            topic = ctx.broker.metadata.get(resource.resource_name)
            if topic is None:
                result.update(error_code=ErrorCode.unknown_topic_or_partition, error_message="Unknown topic")
            else:
                result["configs"] = describe_topic_config_entries(
                    ctx,
                    topic,
                    include_synonyms=include_synonyms,
                    keys=keys,
                    include_documentation=include_documentation,
                )
        elif resource.resource_type == BROKER:
            if resource.resource_name not in ("", str(ctx.broker.node_id)):
                result.update(error_code=ErrorCode.invalid_request, error_message="Unknown broker id")
            else:
                result["configs"] = _describe_broker(
                    ctx, resource.resource_name, include_synonyms, keys, include_documentation
                )
        else:
            result.update(error_code=ErrorCode.invalid_request, error_message="Unsupported resource type")
        results.append(result)
    return {"throttle_time": 0, "results": results}


def _alter_result(resource: Any, error: ErrorCode = ErrorCode.none, message: str | None = None) -> dict:
    return {
        "error_code": error,
        "error_message": message,
        "resource_type": resource.resource_type,
        "resource_name": resource.resource_name,
    }


async def _apply_to_topic(
    ctx: RequestContext, resource: Any, new_configs: dict[str, str], validate_only: bool
) -> dict:
    try:
        await ctx.broker.topics.configure(resource.resource_name, new_configs, validate_only=validate_only)
    except TopicError as exc:
        return _alter_result(resource, exc.error_code, exc.message)
    return _alter_result(resource)


def _refuse_unsupported(ctx: RequestContext, resource: Any) -> dict | None:
    if resource.resource_type == BROKER:
        if ctx.broker.cluster is None:
            return _alter_result(
                resource, ErrorCode.invalid_request, "Dynamic broker configs need a cluster (process.roles)"
            )
        name = resource.resource_name
        if name and (not name.isdigit() or int(name) not in _controller(ctx).image.brokers):
            return _alter_result(resource, ErrorCode.invalid_request, f"Unknown broker id {name}")
        return None
    if resource.resource_type != TOPIC:
        return _alter_result(resource, ErrorCode.invalid_request, "Unsupported resource type")
    return None


def _controller(ctx: RequestContext) -> ControllerLink:
    """The controller link; dynamic broker configs are refused on a single node before this is asked."""
    cluster = ctx.broker.cluster
    assert cluster is not None, "dynamic broker configs exist only in a cluster"
    return cluster


def _dynamic_broker_configs(ctx: RequestContext, resource_name: str) -> dict[str, str]:
    return dict(_controller(ctx).image.broker_configs.get(resource_name, {}))


async def _apply_to_broker(
    ctx: RequestContext, resource: Any, changes: dict[str, str | None], validate_only: bool
) -> dict:
    """Dynamic broker configs (a broker id, or "" for the cluster default) go to the controller."""
    for name, value in changes.items():
        if name not in DYNAMIC_BROKER_CONFIGS:
            return _alter_result(
                resource,
                ErrorCode.invalid_config,
                f"Cannot update {name} dynamically; only {', '.join(DYNAMIC_BROKER_CONFIGS)}",
            )
        if value is not None and (not value.isdigit() or int(value) <= 0):
            return _alter_result(
                resource, ErrorCode.invalid_config, f"{name} must be a positive number of bytes/s"
            )
    if validate_only or not changes:
        return _alter_result(resource)
    try:
        await _controller(ctx).call(
            "alter_configs",
            {"resource_type": "broker", "resource_name": resource.resource_name, "changes": changes},
        )
    except ControllerError as exc:
        return _alter_result(resource, ErrorCode(exc.code), exc.message)
    return _alter_result(resource)


async def handle_alter_configs(ctx: RequestContext, request: Any) -> dict[str, Any]:
    responses = []
    for resource in request.resources:
        denied = _authorization_error(ctx, resource, Operation.ALTER_CONFIGS)
        refused = _refuse_unsupported(ctx, resource) if denied is None else _alter_result(resource, denied)
        if refused is not None:
            responses.append(refused)
            continue
        # AlterConfigs replaces the whole set of overrides.
        configs = {c.name: c.value for c in resource.configs if c.value is not None}
        if resource.resource_type == BROKER:
            current = _dynamic_broker_configs(ctx, resource.resource_name)
            changes: dict[str, str | None] = {k: v for k, v in configs.items() if current.get(k) != v}
            changes.update({k: None for k in current if k not in configs})
            responses.append(await _apply_to_broker(ctx, resource, changes, request.validate_only))
            continue
        responses.append(await _apply_to_topic(ctx, resource, configs, request.validate_only))
    return {"throttle_time": 0, "responses": responses}


def _incremental(current: dict[str, str], ops: Any, defaults: dict[str, str]) -> dict[str, str]:
    updated = dict(current)
    for op in ops:
        if op.config_operation == SET:
            if op.value is None:
                raise TopicError(ErrorCode.invalid_config, f"Null value for {op.name}")
            updated[op.name] = op.value
        elif op.config_operation == DELETE:
            updated.pop(op.name, None)
        elif op.config_operation in (APPEND, SUBTRACT):
            if _TOPIC_TYPES.get(op.name) != LIST:
                raise TopicError(ErrorCode.invalid_config, f"{op.name} is not a list config")
            base = updated.get(op.name, defaults.get(op.name, ""))
            items = [v for v in base.split(",") if v]
            changes = [v.strip() for v in (op.value or "").split(",") if v.strip()]
            if op.config_operation == APPEND:
                items += [v for v in changes if v not in items]
            else:
                items = [v for v in items if v not in changes]
            updated[op.name] = ",".join(items)
        else:
            raise TopicError(ErrorCode.invalid_request, f"Unknown config operation {op.config_operation}")
    return updated


async def handle_incremental_alter_configs(ctx: RequestContext, request: Any) -> dict[str, Any]:
    responses = []
    for resource in request.resources:
        denied = _authorization_error(ctx, resource, Operation.ALTER_CONFIGS)
        refused = _refuse_unsupported(ctx, resource) if denied is None else _alter_result(resource, denied)
        if refused is not None:
            responses.append(refused)
            continue
        names = [op.name for op in resource.configs]
        if len(names) != len(set(names)):
            responses.append(_alter_result(resource, ErrorCode.invalid_request, "Duplicate config keys"))
            continue
        if resource.resource_type == BROKER:
            responses.append(await _alter_broker_incrementally(ctx, resource, request.validate_only))
            continue
        topic = ctx.broker.metadata.get(resource.resource_name)
        if topic is None:
            responses.append(_alter_result(resource, ErrorCode.unknown_topic_or_partition, "Unknown topic"))
            continue
        try:
            configs = _incremental(topic.configs, resource.configs, ctx.broker.config.topic_defaults())
        except TopicError as exc:
            responses.append(_alter_result(resource, exc.error_code, exc.message))
            continue
        responses.append(await _apply_to_topic(ctx, resource, configs, request.validate_only))
    return {"throttle_time": 0, "responses": responses}


async def _alter_broker_incrementally(ctx: RequestContext, resource: Any, validate_only: bool) -> dict:
    changes: dict[str, str | None] = {}
    for op in resource.configs:
        if op.config_operation == SET and op.value is not None:
            changes[op.name] = op.value
        elif op.config_operation == DELETE:
            changes[op.name] = None
        else:
            return _alter_result(resource, ErrorCode.invalid_config, f"{op.name}: only SET and DELETE apply")
    return await _apply_to_broker(ctx, resource, changes, validate_only)


APIS = {
    32: (1, 4, handle_describe_configs),
    33: (0, 2, handle_alter_configs),
    44: (0, 1, handle_incremental_alter_configs),
}
