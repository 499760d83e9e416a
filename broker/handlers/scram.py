"""DescribeUserScramCredentials (50) and AlterUserScramCredentials (51).

Upsertions carry what the client derived (salt, iterations, salted password); the broker
keeps only StoredKey and ServerKey. Changes take effect for the next authentication.
"""

from __future__ import annotations

from typing import Any

from kio.schema.alter_user_scram_credentials.v0 import response as alter
from kio.schema.describe_user_scram_credentials.v0 import response as describe
from kio.schema.errors import ErrorCode

from broker.auth.authorizer import CLUSTER_NAME, Operation, ResourceType
from broker.auth.scram_store import (
    MAX_ITERATIONS,
    MECHANISM_CODES,
    MECHANISM_NAMES,
    MIN_ITERATIONS,
    ScramStore,
    credential_from_salted_password,
)
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError, commit_security_records
from broker.metadata.security_records import SecurityRecord
from broker.protocol.responses import NOT_THROTTLED


def _store(ctx: RequestContext) -> ScramStore:
    return ctx.broker.scram


async def handle_describe_user_scram_credentials(
    ctx: RequestContext, request: Any
) -> describe.DescribeUserScramCredentialsResponse:
    if not ctx.allowed(Operation.DESCRIBE, ResourceType.CLUSTER, CLUSTER_NAME):
        return describe.DescribeUserScramCredentialsResponse(
            throttle_time=NOT_THROTTLED,
            error_code=ErrorCode.cluster_authorization_failed,
            error_message="DESCRIBE on the cluster is required",
            results=(),
        )
    store = _store(ctx)
    requested = [user.name for user in request.users] if request.users else None
    results: list[describe.DescribeUserScramCredentialsResult] = []
    for user in requested if requested is not None else store.users():
        # Kafka's success messages here are empty, not null.
        error, message = ErrorCode.none, ""
        infos: tuple[describe.CredentialInfo, ...] = ()
        if requested is not None and requested.count(user) > 1:
            error, message = ErrorCode.duplicate_resource, f"User {user} listed more than once"
        else:
            mechanisms = store.mechanisms_of(user)
            if not mechanisms:
                error, message = ErrorCode.resource_not_found, f"User {user} has no credentials"
            infos = tuple(
                describe.CredentialInfo(mechanism=MECHANISM_CODES[name], iterations=iterations)
                for name, iterations in sorted(mechanisms.items())
            )
        result = describe.DescribeUserScramCredentialsResult(
            user=user, error_code=error, error_message=message, credential_infos=infos
        )
        if result not in results:
            results.append(result)
    return describe.DescribeUserScramCredentialsResponse(
        throttle_time=NOT_THROTTLED, error_code=ErrorCode.none, error_message="", results=tuple(results)
    )


def _upsertion_problem(upsertion: Any) -> tuple[ErrorCode, str] | None:
    if int(upsertion.mechanism) not in MECHANISM_NAMES:
        return ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism"
    if not MIN_ITERATIONS <= upsertion.iterations <= MAX_ITERATIONS:
        return (
            ErrorCode.unacceptable_credential,
            f"Iterations must be between {MIN_ITERATIONS} and {MAX_ITERATIONS}",
        )
    if not upsertion.salt or not upsertion.salted_password:
        return ErrorCode.unacceptable_credential, "Salt and salted password must not be empty"
    return None


async def handle_alter_user_scram_credentials(
    ctx: RequestContext, request: Any
) -> alter.AlterUserScramCredentialsResponse:
    store = _store(ctx)
    allowed = ctx.allowed(Operation.ALTER, ResourceType.CLUSTER, CLUSTER_NAME)
    errors: dict[str, tuple[ErrorCode, str | None]] = {}
    order: list[str] = []
    seen: set[tuple[str, int]] = set()
    records: dict[str, list[SecurityRecord]] = {}

    def fail(user: str, error: ErrorCode, message: str) -> None:
        errors.setdefault(user, (error, message))

    changes = [("delete", d) for d in request.deletions] + [("upsert", u) for u in request.upsertions]
    for kind, change in changes:
        user = change.name
        if user not in order:
            order.append(user)
        if not allowed:
            fail(user, ErrorCode.cluster_authorization_failed, "ALTER on the cluster is required")
            continue
        if not user:
            fail(user, ErrorCode.unacceptable_credential, "Username must not be empty")
            continue
        key = (user, int(change.mechanism))
        if key in seen:
            fail(user, ErrorCode.duplicate_resource, "A user's mechanism may only change once per request")
            continue
        seen.add(key)
        if kind == "delete":
            mechanism = MECHANISM_NAMES.get(int(change.mechanism))
            if mechanism is None:
                fail(user, ErrorCode.unsupported_sasl_mechanism, "Unknown SCRAM mechanism")
            elif store.get(user, mechanism) is None:
                fail(user, ErrorCode.resource_not_found, f"User {user} has no {mechanism} credential")
            else:
                records.setdefault(user, []).append(store.delete_record(user, mechanism))
            continue
        problem = _upsertion_problem(change)
        if problem is not None:
            fail(user, *problem)
            continue
        mechanism = MECHANISM_NAMES[int(change.mechanism)]
        credential = credential_from_salted_password(
            mechanism, bytes(change.salted_password), bytes(change.salt), int(change.iterations)
        )
        records.setdefault(user, []).append(store.upsert_record(user, credential))
    # A user's changes apply all together or not at all, as in Kafka.
    accepted = [
        record for user, user_records in records.items() if user not in errors for record in user_records
    ]
    if accepted:
        try:
            await commit_security_records(ctx.broker.cluster, accepted)
        except ControllerError as exc:
            for user in records:
                errors.setdefault(user, (ErrorCode(exc.code), exc.message))
    results = []
    for user in order:
        error, message = errors.get(user, (ErrorCode.none, None))
        results.append(
            alter.AlterUserScramCredentialsResult(user=user, error_code=error, error_message=message)
        )
    return alter.AlterUserScramCredentialsResponse(throttle_time=NOT_THROTTLED, results=tuple(results))
