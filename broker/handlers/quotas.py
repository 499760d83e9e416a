"""DescribeClientQuotas (48) and AlterClientQuotas (49)."""

from __future__ import annotations

from typing import Any

from kio.schema.alter_client_quotas.v1 import response as alter
from kio.schema.describe_client_quotas.v1 import response as describe
from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError, commit_security_records, failed_with
from broker.metadata.security_records import AlterQuotaRecord, QuotaEntity
from broker.protocol.responses import NOT_THROTTLED
from broker.quotas.manager import CLIENT_ID, CLIENT_KEYS, IP, IP_KEYS, USER, entity_key

MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY = 0, 1, 2


def _entity_problem(components: dict[str, str | None], count: int) -> str | None:
    if count != len(components):
        return "an entity type appears more than once"
    if not components:
        return "an entity needs at least one entity type"
    unknown = set(components) - {USER, CLIENT_ID, IP}
    if unknown:
        return f"unknown entity type {sorted(unknown)[0]}"
    if IP in components and len(components) > 1:
        return "ip quotas cannot be combined with user or client-id"
    if components.get(IP) is not None:
        import ipaddress

        try:
            ipaddress.ip_address(str(components[IP]))
        except ValueError:
            return "ip entity name is not an IP address"
    return None


def _matches(entity: QuotaEntity, filters: list[tuple[str, int, str | None]], strict: bool) -> bool:
    names = dict(entity)
    for entity_type, match_type, match in filters:
        if entity_type not in names:
            return False
        name = names[entity_type]
        if match_type == MATCH_EXACT and name != match:
            return False
        if match_type == MATCH_DEFAULT and name is not None:
            return False
    return not strict or len(names) == len(filters)


async def handle_describe_client_quotas(
    ctx: RequestContext, request: Any
) -> describe.DescribeClientQuotasResponse:
    def failed(error: ErrorCode, message: str) -> describe.DescribeClientQuotasResponse:
        return describe.DescribeClientQuotasResponse(
            throttle_time=NOT_THROTTLED, error_code=error, error_message=message, entries=None
        )

    if not ctx.allowed(Operation.DESCRIBE_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME):
        return failed(ErrorCode.cluster_authorization_failed, "DESCRIBE_CONFIGS on the cluster is required")
    filters = []
    for component in request.components:
        if component.entity_type not in (USER, CLIENT_ID, IP):
            # Kafka's answer to an entity type it does not know (its UnsupportedVersionException).
            return failed(ErrorCode.unsupported_version, f"Unsupported entity type {component.entity_type}")
        if component.match_type not in (MATCH_EXACT, MATCH_DEFAULT, MATCH_ANY):
            return failed(ErrorCode.invalid_request, "unknown match type")
        if component.match_type == MATCH_EXACT and component.match is None:
            return failed(ErrorCode.invalid_request, "an exact match needs a name")
        filters.append((component.entity_type, int(component.match_type), component.match))
    if len({f[0] for f in filters}) != len(filters):
        return failed(ErrorCode.invalid_request, "an entity type appears more than once")
    entries = tuple(
        describe.EntryData(
            entity=tuple(describe.EntityData(entity_type=t, entity_name=n) for t, n in entity),
            values=tuple(describe.ValueData(key=k, value=v) for k, v in sorted(values.items())),
        )
        for entity, values in sorted(ctx.broker.security.quotas.items(), key=lambda kv: repr(kv[0]))
        if _matches(entity, filters, bool(request.strict))
    )
    # Kafka's success message here is empty, not null.
    return describe.DescribeClientQuotasResponse(
        throttle_time=NOT_THROTTLED, error_code=ErrorCode.none, error_message="", entries=entries
    )


async def handle_alter_client_quotas(ctx: RequestContext, request: Any) -> alter.AlterClientQuotasResponse:
    allowed = ctx.allowed(Operation.ALTER_CONFIGS, ResourceType.CLUSTER, CLUSTER_NAME)
    results = []
    records = []
    for entry in request.entries:
        components = {e.entity_type: e.entity_name for e in entry.entity}
        entity_out = tuple(
            alter.EntityData(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity
        )

        def result(
            error: ErrorCode, message: str | None = None, entity: tuple[alter.EntityData, ...] = entity_out
        ) -> alter.EntryData:
            return alter.EntryData(error_code=error, error_message=message, entity=entity)

        if not allowed:
            results.append(
                result(ErrorCode.cluster_authorization_failed, "ALTER_CONFIGS on the cluster is required")
            )
            continue
        problem = _entity_problem(components, len(entry.entity))
        if problem is None:
            keys = IP_KEYS if IP in components else CLIENT_KEYS
            for op in entry.ops:
                if op.key not in keys:
                    problem = f"{op.key} is not a quota key for this entity"
                elif not op.remove and not op.value > 0:
                    problem = f"{op.key} must be positive"
            if len({op.key for op in entry.ops}) != len(entry.ops):
                problem = "a key appears more than once"
        if problem is not None:
            results.append(result(ErrorCode.invalid_request, problem))
            continue
        records.append(
            AlterQuotaRecord(
                entity_key(components),
                {op.key: float(op.value) for op in entry.ops if not op.remove},
                tuple(op.key for op in entry.ops if op.remove),
            )
        )
        results.append(result(ErrorCode.none))
    if records and not request.validate_only:
        try:
            await commit_security_records(ctx.broker.cluster, records)
        except ControllerError as exc:
            results = [failed_with(r, exc) for r in results]
    return alter.AlterClientQuotasResponse(throttle_time=NOT_THROTTLED, entries=tuple(results))
