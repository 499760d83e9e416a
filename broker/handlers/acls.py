"""DescribeAcls (29), CreateAcls (30) and DeleteAcls (31)."""

from __future__ import annotations

import dataclasses
from typing import Any

from kio.schema.create_acls.v3.response import AclCreationResult, CreateAclsResponse
from kio.schema.delete_acls.v3.response import (
    DeleteAclsFilterResult,
    DeleteAclsMatchingAcl,
    DeleteAclsResponse,
)
from kio.schema.describe_acls.v3.response import AclDescription, DescribeAclsResource, DescribeAclsResponse
from kio.schema.errors import ErrorCode

from broker.auth.authorizer import (
    CLUSTER_NAME,
    AclBinding,
    AclFilter,
    Authorizer,
    Operation,
    PatternType,
    ResourceType,
)
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError, commit_security_records, failed_with
from broker.metadata.security_records import CreateAclRecord, DeleteAclRecord
from broker.protocol.responses import NOT_THROTTLED

_DISABLED = "No Authorizer is configured on the broker"


def _authorizer(ctx: RequestContext) -> Authorizer | None:
    return ctx.broker.authorizer


def _filter(entry: Any) -> AclFilter:
    return AclFilter(
        resource_type=int(entry.resource_type_filter),
        resource_name=entry.resource_name_filter,
        pattern_type=int(getattr(entry, "pattern_type_filter", PatternType.LITERAL)),
        principal=entry.principal_filter,
        host=entry.host_filter,
        operation=int(entry.operation),
        permission=int(entry.permission_type),
    )


def _filter_problem(acl_filter: AclFilter) -> str | None:
    if (
        acl_filter.resource_type == ResourceType.UNKNOWN
        or acl_filter.resource_type not in ResourceType._value2member_map_
    ):
        return "unknown resource type"
    if (
        acl_filter.pattern_type == PatternType.UNKNOWN
        or acl_filter.pattern_type not in PatternType._value2member_map_
    ):
        return "unknown pattern type"
    if acl_filter.operation == Operation.UNKNOWN or acl_filter.operation not in Operation._value2member_map_:
        return "unknown operation"
    if acl_filter.permission not in (1, 2, 3):
        return "unknown permission type"
    return None


async def handle_describe_acls(ctx: RequestContext, request: Any) -> DescribeAclsResponse:
    def failed(error: ErrorCode, message: str) -> DescribeAclsResponse:
        return DescribeAclsResponse(
            throttle_time=NOT_THROTTLED, error_code=error, error_message=message, resources=()
        )

    authorizer = _authorizer(ctx)
    if authorizer is None:
        return failed(ErrorCode.security_disabled, _DISABLED)
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return failed(ErrorCode.cluster_authorization_failed, "DESCRIBE on the cluster is required")
    acl_filter = _filter(request)
    problem = _filter_problem(acl_filter)
    if problem is not None:
        return failed(ErrorCode.invalid_request, problem)
    resources: dict[tuple[int, str, int], list[AclDescription]] = {}
    for acl in sorted(authorizer.acls(), key=lambda a: a.as_tuple()):
        if acl_filter.matches(acl):
            resources.setdefault((acl.resource_type, acl.resource_name, acl.pattern_type), []).append(
                AclDescription(
                    principal=acl.principal,
                    host=acl.host,
                    operation=acl.operation,
                    permission_type=acl.permission,
                )
            )
    return DescribeAclsResponse(
        throttle_time=NOT_THROTTLED,
        error_code=ErrorCode.none,
        # Kafka's success message here is empty, not null.
        error_message="",
        resources=tuple(
            DescribeAclsResource(
                resource_type=rtype, resource_name=name, pattern_type=pattern, acls=tuple(acls)
            )
            for (rtype, name, pattern), acls in resources.items()
        ),
    )


async def handle_create_acls(ctx: RequestContext, request: Any) -> CreateAclsResponse:
    authorizer = _authorizer(ctx)
    results: list[AclCreationResult] = []
    records: list[CreateAclRecord] = []
    allowed = ctx.allowed(Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    for creation in request.creations:
        if authorizer is None:
            results.append(AclCreationResult(error_code=ErrorCode.security_disabled, error_message=_DISABLED))
            continue
        if not allowed:
            results.append(
                AclCreationResult(
                    error_code=ErrorCode.cluster_authorization_failed,
                    error_message="ALTER on the cluster is required",
                )
            )
            continue
        acl = AclBinding(
            resource_type=int(creation.resource_type),
            resource_name=creation.resource_name,
            pattern_type=int(getattr(creation, "resource_pattern_type", PatternType.LITERAL)),
            principal=creation.principal,
            host=creation.host,
            operation=int(creation.operation),
            permission=int(creation.permission_type),
        )
        problem = acl.problem()
        if problem is not None:
            results.append(AclCreationResult(error_code=ErrorCode.invalid_request, error_message=problem))
            continue
        records.append(CreateAclRecord(acl.as_tuple()))
        results.append(AclCreationResult(error_code=ErrorCode.none, error_message=""))
    if records:
        try:
            await commit_security_records(ctx.broker.cluster, records)
        except ControllerError as exc:
            results = [failed_with(r, exc) for r in results]
    return CreateAclsResponse(throttle_time=NOT_THROTTLED, results=tuple(results))


def _filter_failed(error: ErrorCode, message: str) -> DeleteAclsFilterResult:
    return DeleteAclsFilterResult(error_code=error, error_message=message, matching_acls=())


async def handle_delete_acls(ctx: RequestContext, request: Any) -> DeleteAclsResponse:
    authorizer = _authorizer(ctx)
    allowed = ctx.allowed(Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    current = authorizer.acls() if authorizer is not None else []
    results: list[DeleteAclsFilterResult] = []
    doomed: set[AclBinding] = set()
    for entry in request.filters:
        if authorizer is None:
            results.append(_filter_failed(ErrorCode.security_disabled, _DISABLED))
            continue
        if not allowed:
            results.append(
                _filter_failed(ErrorCode.cluster_authorization_failed, "ALTER on the cluster is required")
            )
            continue
        acl_filter = _filter(entry)
        problem = _filter_problem(acl_filter)
        if problem is not None:
            results.append(_filter_failed(ErrorCode.invalid_request, problem))
            continue
        matching = [acl for acl in current if acl_filter.matches(acl)]
        doomed.update(matching)
        results.append(
            DeleteAclsFilterResult(
                error_code=ErrorCode.none,
                error_message=None,
                matching_acls=tuple(
                    DeleteAclsMatchingAcl(
                        error_code=ErrorCode.none,
                        error_message=None,
                        resource_type=acl.resource_type,
                        resource_name=acl.resource_name,
                        pattern_type=acl.pattern_type,
                        principal=acl.principal,
                        host=acl.host,
                        operation=acl.operation,
                        permission_type=acl.permission,
                    )
                    for acl in matching
                ),
            )
        )
    if doomed:
        records = [DeleteAclRecord(acl.as_tuple()) for acl in sorted(doomed, key=lambda a: a.as_tuple())]
        try:
            await commit_security_records(ctx.broker.cluster, records)
        except ControllerError as exc:
            results = [failed_with(dataclasses.replace(r, matching_acls=()), exc) for r in results]
    return DeleteAclsResponse(throttle_time=NOT_THROTTLED, filter_results=tuple(results))
