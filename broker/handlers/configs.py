"""DescribeConfigs (32), AlterConfigs (33) and IncrementalAlterConfigs (44) on topics, brokers (dynamic
broker configs, per broker id and the cluster default ""), broker loggers, groups and client metrics
subscriptions (KIP-714); ListConfigResources (74)."""

from __future__ import annotations

from collections.abc import Callable, Container
from typing import Any

from kio.schema.alter_configs.v2 import response as alter
from kio.schema.describe_configs.v4 import response as described
from kio.schema.errors import ErrorCode
from kio.schema.incremental_alter_configs.v1 import response as incremental
from kio.schema.list_config_resources.v1 import response as listing
from kio.static.primitive import i8

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.config import BROKER_DEFAULTS, TOPIC_CONFIG_BROKER_SYNONYMS
from broker.config_docs import (
    BROKER_CONFIG_DOCUMENTATION,
    GROUP_CONFIG_DOCUMENTATION,
    TOPIC_CONFIG_DOCUMENTATION,
)
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError
from broker.controller.rpc.admin import AlterConfigsRequest
from broker.log.config import TOPIC_CONFIG_DEFAULTS, known_topic_configs
from broker.log.errors import InvalidConfigError
from broker.metadata.topic_registry import TopicRecord
from broker.protocol.responses import NOT_THROTTLED
from broker.runtime.dynamic_config import (
    BROKER_LIST_CONFIGS,
    CLUSTER_DEFAULT,
    DEFAULT_CONFIG,
    DYNAMIC_CONFIGS,
    DYNAMIC_DEFAULT_BROKER_CONFIG,
    EXTRA_DYNAMIC_CONFIGS,
    GROUP_CONFIGS,
    GROUP_STRING_CONFIGS,
    SENSITIVE_CONFIGS,
    DynamicConfigError,
    check_group_configs,
    kind_of,
)
from broker.runtime.kafka_config_defs import ALL_DYNAMIC_DEFS
from broker.runtime.log_levels import broker_log_levels, check_log_levels, set_log_levels
from broker.telemetry import subscriptions
from broker.telemetry.subscriptions import SubscriptionConfigError
from broker.topics import TopicError, TopicManager

# ConfigResource types.
TOPIC = 2
BROKER = 4
BROKER_LOGGER = 8
CLIENT_METRICS = 16
GROUP = 32

# ConfigSource values from Kafka's DescribeConfigsResponse (the broker ones are in dynamic_config).
DYNAMIC_TOPIC_CONFIG = 1
DYNAMIC_BROKER_LOGGER_CONFIG = 6
CLIENT_METRICS_CONFIG = 7
GROUP_CONFIG = 8

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
    "compression.gzip.level": INT,
    "compression.lz4.level": INT,
    "compression.zstd.level": INT,
    "leader.replication.throttled.replicas": LIST,
    "follower.replication.throttled.replicas": LIST,
    "remote.storage.enable": BOOLEAN,
    "remote.log.copy.disable": BOOLEAN,
    "remote.log.delete.on.disable": BOOLEAN,
}
_TOPIC_LIST_CONFIGS = frozenset(name for name, kind in _TOPIC_TYPES.items() if kind == LIST)
SHORT, PASSWORD = 4, 9
_BROKER_TYPES = {bool: BOOLEAN, str: STRING, int: LONG, float: DOUBLE, list: LIST}
# Broker configs whose type in Kafka's ConfigDef is not the one their Python type suggests (ints are LONG unless
# listed here): DescribeConfigs v3+ reports the type, and tools (kafka-configs, the Java admin) parse by it.
_KAFKA_BROKER_TYPES = {
    **dict.fromkeys(
        (
            "add.partitions.to.txn.retry.backoff.max.ms",
            "add.partitions.to.txn.retry.backoff.ms",
            "background.threads",
            "compression.gzip.level",
            "compression.lz4.level",
            "compression.zstd.level",
            "broker.heartbeat.interval.ms",
            "broker.id",
            "broker.session.timeout.ms",
            "connection.failed.authentication.delay.ms",
            "controller.quorum.election.timeout.ms",
            "default.replication.factor",
            "group.consumer.heartbeat.interval.ms",
            "group.consumer.max.size",
            "group.consumer.session.timeout.ms",
            "group.initial.rebalance.delay.ms",
            "group.max.session.timeout.ms",
            "group.min.session.timeout.ms",
            "log.index.interval.bytes",
            "log.index.size.max.bytes",
            "log.retention.hours",
            "log.retention.minutes",
            "log.roll.hours",
            "log.segment.bytes",
            "max.connections",
            "max.connections.per.ip",
            "max.incremental.fetch.session.cache.slots",
            "message.max.bytes",
            "min.insync.replicas",
            "node.id",
            "num.partitions",
            "offsets.commit.timeout.ms",
            "offsets.retention.minutes",
            "offsets.topic.num.partitions",
            "offsets.topic.segment.bytes",
            "producer.id.expiration.ms",
            "quota.window.num",
            "quota.window.size.seconds",
            "replica.fetch.max.bytes",
            "request.timeout.ms",
            "sasl.server.max.receive.size",
            "socket.request.max.bytes",
            "telemetry.max.bytes",
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            "transaction.max.timeout.ms",
            "transaction.remove.expired.transaction.cleanup.interval.ms",
            "transaction.state.log.min.isr",
            "transaction.state.log.num.partitions",
            "transaction.state.log.segment.bytes",
            "transactional.id.expiration.ms",
        ),
        INT,
    ),
    **dict.fromkeys(("offsets.topic.replication.factor", "transaction.state.log.replication.factor"), SHORT),
    **dict.fromkeys(
        (
            "advertised.listeners",
            "controller.listener.names",
            "controller.quorum.bootstrap.servers",
            "controller.quorum.voters",
            "listeners",
            "log.dirs",
            "process.roles",
        ),
        LIST,
    ),
    **dict.fromkeys(("delegation.token.secret.key", "sasl.jaas.config", "ssl.key.password"), PASSWORD),
}


def _broker_config_type(name: str) -> int:
    if name in ALL_DYNAMIC_DEFS:
        return ALL_DYNAMIC_DEFS[name].type_code
    if name in _KAFKA_BROKER_TYPES:
        return _KAFKA_BROKER_TYPES[name]
    return LIST if name in BROKER_LIST_CONFIGS else _BROKER_TYPES.get(kind_of(name), STRING)


SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
SHARE_LOCK_DURATION = "share.record.lock.duration.ms"
# Groups that may have configs set at once: one client cannot grow every broker's memory without bound.
MAX_GROUPS_WITH_CONFIGS = 10_000


def _entry(
    name: str,
    value: str | None,
    source: int,
    read_only: bool,
    config_type: int,
    synonyms: list[described.DescribeConfigsSynonym],
    documentation: str | None = None,
) -> described.DescribeConfigsResourceResult:
    return described.DescribeConfigsResourceResult(
        name=name,
        value=value,
        read_only=read_only,
        config_source=i8(source),
        is_sensitive=name in SENSITIVE_CONFIGS,
        synonyms=tuple(synonyms),
        config_type=i8(config_type),
        documentation=documentation,
    )


def _synonym(name: str, value: str | None, source: int) -> described.DescribeConfigsSynonym:
    return described.DescribeConfigsSynonym(name=name, value=value, source=i8(source))


def _broker_synonyms(ctx: RequestContext, topic_config: str) -> list[described.DescribeConfigsSynonym]:
    """The broker property behind a topic config, in every layer that sets it (Kafka's synonyms; none for
    a default Kafka defines as null, such as log.retention.ms's)."""
    synonyms = ctx.broker.dynamic_config.synonyms(TOPIC_CONFIG_BROKER_SYNONYMS[topic_config])
    return [_synonym(name, value, source) for name, value, source in synonyms]


def describe_topic_config_entries(
    ctx: RequestContext,
    topic: TopicRecord,
    *,
    include_synonyms: bool,
    keys: Any = None,
    include_documentation: bool = False,
) -> list[described.DescribeConfigsResourceResult]:
    defaults = ctx.broker.config.topic_defaults()
    entries = []
    for name in sorted(known_topic_configs()):
        if keys is not None and name not in keys:
            continue
        broker_synonyms = _broker_synonyms(ctx, name) if name in TOPIC_CONFIG_BROKER_SYNONYMS else []
        if name in topic.configs:
            value, source = topic.configs[name], DYNAMIC_TOPIC_CONFIG
            synonyms = [_synonym(name, value, source), *broker_synonyms]
        else:
            value = defaults.get(name, TOPIC_CONFIG_DEFAULTS.get(name))
            source = broker_synonyms[0].source if broker_synonyms else DEFAULT_CONFIG
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
) -> list[described.DescribeConfigsResourceResult]:
    """Every broker config with its value and winning source; for the cluster default (resource "")
    only what is set there, as Kafka answers."""
    config, dynamic = ctx.broker.config, ctx.broker.dynamic_config
    entries = []
    for name in sorted({*BROKER_DEFAULTS, *EXTRA_DYNAMIC_CONFIGS}):
        if keys is not None and name not in keys:
            continue
        synonyms = [
            _synonym(n, None if n in SENSITIVE_CONFIGS else v, source)
            for n, v, source in dynamic.synonyms(name)
        ]
        if resource_name == CLUSTER_DEFAULT:
            synonyms = [s for s in synonyms if s.source == DYNAMIC_DEFAULT_BROKER_CONFIG]
            if not synonyms:
                continue
            value = synonyms[0].value
        elif name in BROKER_DEFAULTS:
            value = None if name in SENSITIVE_CONFIGS else config.broker_value(name)
        else:
            value = synonyms[0].value if synonyms else None
        entries.append(
            _entry(
                name,
                value,
                synonyms[0].source if synonyms else DEFAULT_CONFIG,
                name not in DYNAMIC_CONFIGS,
                _broker_config_type(name),
                synonyms if include_synonyms else [],
                BROKER_CONFIG_DOCUMENTATION.get(name) if include_documentation else None,
            )
        )
    return entries


class _NamedConfigs:
    """A config resource that is a name with a few configs of its own over fixed defaults (groups, client
    metrics subscriptions): how it is described, checked and where it is kept."""

    def __init__(
        self,
        kind: str,
        source: int,
        defaults: dict[str, str],
        types: dict[str, int],
        documentation: dict[str, str],
        check: Callable[[str, dict[str, str]], None],
        stored: Callable[[RequestContext], dict[str, dict[str, str]]],
        limit: Callable[[], int],
    ) -> None:
        self.kind, self.source, self.defaults, self.types = kind, source, defaults, types
        self.documentation, self.check, self.stored, self.limit = documentation, check, stored, limit
        self.lists = frozenset(name for name, kind in types.items() if kind == LIST)

    def describe(
        self, ctx: RequestContext, name: str, include_synonyms: bool, keys: Any, include_documentation: bool
    ) -> list[described.DescribeConfigsResourceResult]:
        """The resource's configs, set or default; one that does not exist yet has its defaults (Kafka's
        answer for groups)."""
        own = self.stored(ctx).get(name, {})
        entries = []
        for config, default in sorted(self.defaults.items()):
            if keys is not None and config not in keys:
                continue
            synonyms = [_synonym(config, own[config], self.source)] if config in own else []
            synonyms.append(_synonym(config, default, DEFAULT_CONFIG))
            entries.append(
                _entry(
                    config,
                    synonyms[0].value,
                    synonyms[0].source,
                    False,
                    self.types[config],
                    synonyms if include_synonyms else [],
                    self.documentation.get(config) if include_documentation else None,
                )
            )
        return entries


def _check_group_configs(_group_id: str, configs: dict[str, str]) -> None:
    try:
        check_group_configs(configs)
    except DynamicConfigError as exc:
        raise _Refused(ErrorCode.invalid_config, exc.message) from None


def _check_subscription(name: str, configs: dict[str, str]) -> None:
    try:
        subscriptions.check_subscription(name, configs)
    except SubscriptionConfigError as exc:
        error = ErrorCode.invalid_request if exc.invalid_request else ErrorCode.invalid_config
        raise _Refused(error, exc.message) from None


_GROUPS = _NamedConfigs(
    kind="group",
    source=GROUP_CONFIG,
    defaults={
        **{name: str(default) for name, (default, _minimum, _maximum) in GROUP_CONFIGS.items()},
        **GROUP_STRING_CONFIGS,
    },
    types={**dict.fromkeys(GROUP_CONFIGS, INT), **dict.fromkeys(GROUP_STRING_CONFIGS, STRING)},
    documentation=GROUP_CONFIG_DOCUMENTATION,
    check=_check_group_configs,
    stored=lambda ctx: ctx.broker.cluster.image.group_configs,
    limit=lambda: MAX_GROUPS_WITH_CONFIGS,
)
_CLIENT_METRICS = _NamedConfigs(
    kind="client_metrics",
    source=CLIENT_METRICS_CONFIG,
    defaults=subscriptions.DEFAULTS,
    types=subscriptions.CONFIG_TYPES,
    documentation=subscriptions.DOCUMENTATION,
    check=_check_subscription,
    stored=lambda ctx: ctx.broker.client_metrics_subscriptions(),
    limit=lambda: subscriptions.MAX_SUBSCRIPTIONS,
)
_NAMED = {GROUP: _GROUPS, CLIENT_METRICS: _CLIENT_METRICS}


def _describe_loggers(keys: Any) -> list[described.DescribeConfigsResourceResult]:
    return [
        _entry(name, level, DYNAMIC_BROKER_LOGGER_CONFIG, False, STRING, [])
        for name, level in broker_log_levels().items()
        if keys is None or name in keys
    ]


def _authorization_error(ctx: RequestContext, resource: Any, operation: Operation) -> ErrorCode | None:
    """The error for a principal without `operation` on this topic or group (the cluster, for brokers)."""
    if resource.resource_type == TOPIC:
        if not ctx.allowed(operation, ResourceType.TOPIC, resource.resource_name):
            return ErrorCode.topic_authorization_failed
    elif resource.resource_type == GROUP:
        if not ctx.allowed(operation, ResourceType.GROUP, resource.resource_name):
            return ErrorCode.group_authorization_failed
    elif resource.resource_type in (BROKER, BROKER_LOGGER, CLIENT_METRICS) and not ctx.allowed(
        operation, ResourceType.CLUSTER, CLUSTER_NAME
    ):
        return ErrorCode.cluster_authorization_failed
    return None


def _describe_resource(
    ctx: RequestContext, resource: Any, include_synonyms: bool, include_documentation: bool
) -> tuple[ErrorCode, str | None, list[described.DescribeConfigsResourceResult]]:
    keys = set(resource.configuration_keys) if resource.configuration_keys is not None else None
    name = resource.resource_name
    if resource.resource_type == TOPIC:
        topic = ctx.broker.metadata.get(name)
        if topic is None:
            # Kafka answers an unknown topic here with an empty message.
            return ErrorCode.unknown_topic_or_partition, "", []
        entries = describe_topic_config_entries(
            ctx,
            topic,
            include_synonyms=include_synonyms,
            keys=keys,
            include_documentation=include_documentation,
        )
        return ErrorCode.none, None, entries
    if resource.resource_type == BROKER:
        if name not in (CLUSTER_DEFAULT, str(ctx.broker.node_id)):
            return ErrorCode.invalid_request, f"Unknown broker id {name}: ask that broker", []
        return (
            ErrorCode.none,
            None,
            _describe_broker(ctx, name, include_synonyms, keys, include_documentation),
        )
    if resource.resource_type == BROKER_LOGGER:
        if name != str(ctx.broker.node_id):
            return ErrorCode.invalid_request, f"Unexpected broker id, expected {ctx.broker.node_id}", []
        return ErrorCode.none, None, _describe_loggers(keys)
    if resource.resource_type in _NAMED:
        if not name:
            return ErrorCode.invalid_request, "Resource name must not be empty", []
        named = _NAMED[resource.resource_type]
        return ErrorCode.none, None, named.describe(ctx, name, include_synonyms, keys, include_documentation)
    return ErrorCode.invalid_request, f"Unsupported resource type {resource.resource_type}", []


async def handle_describe_configs(ctx: RequestContext, request: Any) -> described.DescribeConfigsResponse:
    include_synonyms = bool(getattr(request, "include_synonyms", False))
    # v3+: Kafka sends each config's documentation only when asked, null otherwise.
    include_documentation = bool(getattr(request, "include_documentation", False))
    results = []
    for resource in request.resources:
        denied = _authorization_error(ctx, resource, Operation.DESCRIBE_CONFIGS)
        if denied is not None:
            error, message, configs = denied, "Authorization failed.", []
        else:
            error, message, configs = _describe_resource(
                ctx, resource, include_synonyms, include_documentation
            )
            # Kafka answers a described resource with an empty message, not null.
            message = "" if error == ErrorCode.none and message is None else message
        results.append(
            described.DescribeConfigsResult(
                error_code=error,
                error_message=message,
                resource_type=resource.resource_type,
                resource_name=resource.resource_name,
                configs=tuple(configs),
            )
        )
    return described.DescribeConfigsResponse(throttle_time=NOT_THROTTLED, results=tuple(results))


# AlterConfigs and IncrementalAlterConfigs answer each resource with entities of the same fields.
_ResourceAnswer = alter.AlterConfigsResourceResponse | incremental.AlterConfigsResourceResponse


def _alter_result(
    answer: type[_ResourceAnswer],
    resource: Any,
    error: ErrorCode = ErrorCode.none,
    message: str | None = None,
) -> _ResourceAnswer:
    return answer(
        error_code=error,
        error_message=message,
        resource_type=resource.resource_type,
        resource_name=resource.resource_name,
    )


class _Refused(Exception):
    def __init__(self, error: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.error = error
        self.message = message


def _diff(current: dict[str, str], wanted: dict[str, str]) -> dict[str, str | None]:
    """The changes (None: removed) that turn `current` into `wanted`."""
    changes: dict[str, str | None] = {k: v for k, v in wanted.items() if current.get(k) != v}
    changes.update({k: None for k in current if k not in wanted})
    return changes


def _current_overrides(ctx: RequestContext, resource: Any) -> dict[str, str]:
    """The configs set on a topic, broker (or cluster default) or group: what AlterConfigs replaces."""
    name = resource.resource_name
    if resource.resource_type == TOPIC:
        topic = ctx.broker.metadata.get(name)
        if topic is None:
            raise _Refused(ErrorCode.unknown_topic_or_partition, "Unknown topic")
        return dict(topic.configs)
    if resource.resource_type == BROKER:
        image = ctx.broker.cluster.image
        if not (name == CLUSTER_DEFAULT or (name.isdigit() and int(name) in image.brokers)):
            raise _Refused(ErrorCode.invalid_request, f"Unknown broker id {name}")
        return dict(image.broker_configs.get(name, {}))
    if resource.resource_type in _NAMED:
        if not name:
            raise _Refused(ErrorCode.invalid_request, "Resource name must not be empty")
        return dict(_NAMED[resource.resource_type].stored(ctx).get(name, {}))
    raise _Refused(ErrorCode.invalid_request, f"Unsupported resource type {resource.resource_type}")


async def _forward_configs(ctx: RequestContext, kind: str, name: str, changes: dict[str, str | None]) -> None:
    try:
        await ctx.broker.cluster.call(AlterConfigsRequest(kind, name, changes))
    except ControllerError as exc:
        raise _Refused(ErrorCode(exc.code), exc.message) from None


async def _replace_broker_configs(
    ctx: RequestContext, name: str, changes: dict[str, str | None], validate_only: bool
) -> None:
    """Dynamic broker configs of broker `name` (or "" for the cluster default): checked as Kafka checks
    them, then kept in the metadata log."""
    dynamic = ctx.broker.dynamic_config
    try:
        candidate = dynamic.check(changes, name)
        # The topic log defaults they imply must be valid too (e.g. log.segment.bytes's minimum).
        TopicManager.default_log_config_for(candidate)
    except DynamicConfigError as exc:
        raise _Refused(
            ErrorCode.invalid_request if exc.invalid_request else ErrorCode.invalid_config, exc.message
        ) from None
    except InvalidConfigError as exc:
        # Kafka 4.2 answers INVALID_REQUEST to every broker config value it refuses.
        raise _Refused(ErrorCode.invalid_request, str(exc)) from None
    if validate_only or not changes:
        return
    await _forward_configs(ctx, "broker", name, changes)


def _check_share_lock_duration(ctx: RequestContext, configs: dict[str, str]) -> None:
    """A share group's lock duration lies within the broker's bounds, with Kafka 4.2's messages."""
    raw = configs.get(SHARE_LOCK_DURATION)
    if raw is None:
        return
    value = int(raw.strip())
    for bound, below in (
        ("group.share.min.record.lock.duration.ms", True),
        ("group.share.max.record.lock.duration.ms", False),
    ):
        limit = ctx.broker.config.get_int(bound)
        if (value < limit) if below else (value > limit):
            relation = "greater" if below else "less"
            raise _Refused(
                ErrorCode.invalid_config, f"{SHARE_LOCK_DURATION} must be {relation} than or equal to {bound}"
            )


async def _replace_named_configs(
    ctx: RequestContext, named: _NamedConfigs, name: str, wanted: dict[str, str], validate_only: bool
) -> None:
    named.check(name, wanted)
    if named is _GROUPS:
        _check_share_lock_duration(ctx, wanted)
    configured = named.stored(ctx)
    limit = named.limit()
    if wanted and name not in configured and len(configured) >= limit:
        # Every broker keeps them all in memory.
        raise _Refused(
            ErrorCode.policy_violation,
            f"{limit} {named.kind} resources have configs already; delete some first",
        )
    changes = _diff(configured.get(name, {}), wanted)
    if validate_only or not changes:
        return
    await _forward_configs(ctx, named.kind, name, changes)


async def _replace(ctx: RequestContext, resource: Any, wanted: dict[str, str], validate_only: bool) -> None:
    """Make `wanted` the whole set of configs of a topic, broker or group."""
    name = resource.resource_name
    if resource.resource_type == TOPIC:
        try:
            await ctx.broker.topics.configure(name, wanted, validate_only=validate_only)
        except TopicError as exc:
            raise _Refused(exc.error_code, exc.message) from None
    elif resource.resource_type == BROKER:
        await _replace_broker_configs(
            ctx, name, _diff(_current_overrides(ctx, resource), wanted), validate_only
        )
    else:
        await _replace_named_configs(ctx, _NAMED[resource.resource_type], name, wanted, validate_only)


async def handle_alter_configs(ctx: RequestContext, request: Any) -> alter.AlterConfigsResponse:
    responses: list[Any] = []
    for resource in request.resources:
        denied = _authorization_error(ctx, resource, Operation.ALTER_CONFIGS)
        if denied is not None:
            responses.append(_alter_result(alter.AlterConfigsResourceResponse, resource, denied))
            continue
        try:
            if resource.resource_type == BROKER_LOGGER:
                raise _Refused(
                    ErrorCode.invalid_request,
                    "BROKER_LOGGER configs are altered with IncrementalAlterConfigs",
                )
            _current_overrides(ctx, resource)  # the resource exists and may be altered
            # AlterConfigs replaces the whole set of overrides.
            wanted = {c.name: c.value for c in resource.configs if c.value is not None}
            await _replace(ctx, resource, wanted, request.validate_only)
        except _Refused as refused:
            responses.append(
                _alter_result(alter.AlterConfigsResourceResponse, resource, refused.error, refused.message)
            )
            continue
        responses.append(_alter_result(alter.AlterConfigsResourceResponse, resource))
    return alter.AlterConfigsResponse(throttle_time=NOT_THROTTLED, responses=tuple(responses))


def _incremental(
    current: dict[str, str], ops: Any, base: Callable[[str], str | None], lists: Container[str]
) -> dict[str, str]:
    """Apply SET / DELETE / APPEND / SUBTRACT to `current`; APPEND and SUBTRACT start from `base(name)`
    (the value in effect) when `current` does not set the list."""
    updated = dict(current)
    for op in ops:
        if op.config_operation == SET:
            if op.value is None:
                raise _Refused(ErrorCode.invalid_config, f"Null value for {op.name}")
            updated[op.name] = op.value
        elif op.config_operation == DELETE:
            updated.pop(op.name, None)
        elif op.config_operation in (APPEND, SUBTRACT):
            if op.name not in lists:
                raise _Refused(ErrorCode.invalid_config, f"{op.name} is not a list config")
            start = updated.get(op.name, base(op.name) or "")
            items = [v.strip() for v in start.split(",") if v.strip()]
            changes = [v.strip() for v in (op.value or "").split(",") if v.strip()]
            if op.config_operation == APPEND:
                items += [v for v in changes if v not in items]
            else:
                items = [v for v in items if v not in changes]
            updated[op.name] = ",".join(items)
        else:
            raise _Refused(ErrorCode.invalid_request, f"Unknown config operation {op.config_operation}")
    return updated


def _alter_loggers(ctx: RequestContext, resource: Any, validate_only: bool) -> None:
    """BROKER_LOGGER: this broker's Python logger levels, not kept across restarts (as in Kafka)."""
    if resource.resource_name != str(ctx.broker.node_id):
        raise _Refused(ErrorCode.invalid_request, f"Unexpected broker id, expected {ctx.broker.node_id}")
    levels: dict[str, str | None] = {}
    for op in resource.configs:
        if op.config_operation not in (SET, DELETE):
            operation = "APPEND" if op.config_operation == APPEND else "SUBTRACT"
            raise _Refused(
                ErrorCode.invalid_request,
                f"{operation} operation is not allowed for the BROKER_LOGGER resource",
            )
        levels[op.name] = op.value if op.config_operation == SET else None
    try:
        check_log_levels(levels)
    except ValueError as exc:
        raise _Refused(ErrorCode.invalid_config, str(exc)) from None
    if not validate_only:
        set_log_levels(levels)


async def _alter_incrementally(ctx: RequestContext, resource: Any, validate_only: bool) -> None:
    if resource.resource_type == BROKER_LOGGER:
        _alter_loggers(ctx, resource, validate_only)
        return
    current = _current_overrides(ctx, resource)
    if resource.resource_type == TOPIC:
        defaults = ctx.broker.config.topic_defaults()
        wanted = _incremental(current, resource.configs, defaults.get, _TOPIC_LIST_CONFIGS)
    elif resource.resource_type == BROKER:
        wanted = _incremental(current, resource.configs, ctx.broker.config.broker_value, BROKER_LIST_CONFIGS)
    else:
        named = _NAMED[resource.resource_type]
        wanted = _incremental(current, resource.configs, lambda _name: None, named.lists)
    await _replace(ctx, resource, wanted, validate_only)


async def handle_incremental_alter_configs(
    ctx: RequestContext, request: Any
) -> incremental.IncrementalAlterConfigsResponse:
    responses: list[Any] = []
    for resource in request.resources:
        denied = _authorization_error(ctx, resource, Operation.ALTER_CONFIGS)
        if denied is not None:
            responses.append(_alter_result(incremental.AlterConfigsResourceResponse, resource, denied))
            continue
        names = [op.name for op in resource.configs]
        if len(names) != len(set(names)):
            responses.append(
                _alter_result(
                    incremental.AlterConfigsResourceResponse,
                    resource,
                    ErrorCode.invalid_request,
                    "Duplicate config keys",
                )
            )
            continue
        try:
            await _alter_incrementally(ctx, resource, request.validate_only)
        except _Refused as refused:
            responses.append(
                _alter_result(
                    incremental.AlterConfigsResourceResponse, resource, refused.error, refused.message
                )
            )
            continue
        responses.append(_alter_result(incremental.AlterConfigsResourceResponse, resource))
    return incremental.IncrementalAlterConfigsResponse(
        throttle_time=NOT_THROTTLED, responses=tuple(responses)
    )


LISTABLE_TYPES = (TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS, GROUP)


def _config_resource_names(ctx: RequestContext, resource_type: int) -> list[str]:
    if resource_type == TOPIC:
        return sorted(topic.name for topic in ctx.broker.metadata.topics())
    if resource_type in (BROKER, BROKER_LOGGER):
        return [str(broker_id) for broker_id in sorted(ctx.broker.cluster.image.brokers)]
    if resource_type == GROUP:
        # Groups with configs set, and the groups this broker coordinates.
        names = set(ctx.broker.cluster.image.group_configs)
        if ctx.broker.groups is not None:
            _error, listed = ctx.broker.groups.list_groups(states_filter=(), types_filter=())
            names |= {group.group_id for group in listed}
        return sorted(names)
    return sorted(ctx.broker.client_metrics_subscriptions())  # CLIENT_METRICS


async def handle_list_config_resources(
    ctx: RequestContext, request: Any
) -> listing.ListConfigResourcesResponse:
    """ListConfigResources (74): v0 is Kafka 4.0's ListClientMetricsResources (client metrics only);
    v1 lists the resources of the asked types, every type when none is asked."""
    if not ctx.allowed(Operation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME):
        return listing.ListConfigResourcesResponse(
            throttle_time=NOT_THROTTLED,
            error_code=ErrorCode.cluster_authorization_failed,
            config_resources=(),
        )
    asked = tuple(getattr(request, "resource_types", ())) or (
        LISTABLE_TYPES if ctx.api_version >= 1 else (CLIENT_METRICS,)
    )
    if any(kind not in LISTABLE_TYPES for kind in asked):
        return listing.ListConfigResourcesResponse(
            throttle_time=NOT_THROTTLED, error_code=ErrorCode.unsupported_version, config_resources=()
        )
    # v0's answer has no resource type (client metrics only): `build_response` drops it.
    resources = tuple(
        listing.ConfigResource(resource_name=name, resource_type=i8(kind))
        for kind in asked
        for name in _config_resource_names(ctx, kind)
    )
    return listing.ListConfigResourcesResponse(
        throttle_time=NOT_THROTTLED, error_code=ErrorCode.none, config_resources=resources
    )
