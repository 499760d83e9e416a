"""CreateDelegationToken (38), RenewDelegationToken (39), ExpireDelegationToken (40) and
DescribeDelegationToken (41), as Kafka 4.0 answers them (broker/auth/delegation_tokens.py).

Tokens are asked for by a user who logged in with a password over SASL: never over PLAINTEXT,
one-way SSL or a session that itself logged in with a token (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED).
"""

from __future__ import annotations

import dataclasses
import datetime
import time
from typing import Any, TypeVar

from kio.schema.create_delegation_token.v3.response import CreateDelegationTokenResponse
from kio.schema.describe_delegation_token.v3.response import (
    DescribedDelegationToken,
    DescribedDelegationTokenRenewer,
    DescribeDelegationTokenResponse,
)
from kio.schema.errors import ErrorCode
from kio.schema.expire_delegation_token.v2.response import ExpireDelegationTokenResponse
from kio.schema.renew_delegation_token.v2.response import RenewDelegationTokenResponse

from broker.auth.authorizer import Operation, ResourceType
from broker.auth.delegation_tokens import DelegationToken, DelegationTokens
from broker.auth.principal import ANONYMOUS, USER_TYPE
from broker.context import RequestContext
from broker.controller.forwarding import ControllerError, commit_security_records
from broker.metadata.security_records import SecurityRecord
from broker.protocol.responses import NOT_THROTTLED


def _ms(value: datetime.timedelta | int) -> int:
    if isinstance(value, datetime.timedelta):
        return value // datetime.timedelta(milliseconds=1)
    return int(value)


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _timestamp(ms: int) -> datetime.datetime:
    """A datetime_i64 response field; kio cannot write None, and Kafka answers -1 on errors."""
    return _EPOCH + datetime.timedelta(milliseconds=ms)


def _now_ms() -> int:
    return int(time.time() * 1000)


def _split(principal: str) -> tuple[str, str]:
    kind, _sep, name = principal.partition(":")
    return kind, name


def _refusal(ctx: RequestContext) -> tuple[ErrorCode, DelegationTokens | None]:
    """Kafka's allowTokenRequests, then tokenAuthEnabled: (ErrorCode.none, tokens) when allowed."""
    protocol = ctx.broker.config.security_protocol(ctx.listener_name)
    session = ctx.session
    token_session = session is not None and session.auth.token_authenticated
    if token_session or protocol == "PLAINTEXT" or (protocol == "SSL" and ctx.principal == ANONYMOUS):
        return ErrorCode.delegation_token_request_not_allowed, None
    tokens = ctx.broker.scram.tokens
    if not isinstance(tokens, DelegationTokens) or not tokens.enabled:
        return ErrorCode.delegation_token_auth_disabled, None
    return ErrorCode.none, tokens


async def _commit(ctx: RequestContext, records: list[SecurityRecord]) -> ErrorCode:
    try:
        await commit_security_records(ctx.broker.cluster, records)
    except ControllerError as exc:
        return ErrorCode(exc.code)
    return ErrorCode.none


async def handle_create_delegation_token(ctx: RequestContext, request: Any) -> CreateDelegationTokenResponse:
    requester = ctx.principal
    owner_type = getattr(request, "owner_principal_type", None)
    owner_name = getattr(request, "owner_principal_name", None)
    owner = f"{owner_type}:{owner_name}" if owner_name else requester

    def answer(
        error: ErrorCode, token: DelegationToken | None = None, token_hmac: bytes = b""
    ) -> CreateDelegationTokenResponse:
        owner_kind, owner_user = _split(owner)
        requester_kind, requester_user = _split(requester)
        return CreateDelegationTokenResponse(
            error_code=error,
            principal_type=owner_kind,
            principal_name=owner_user,
            token_requester_principal_type=requester_kind,
            token_requester_principal_name=requester_user,
            issue_timestamp=_timestamp(token.issue_ms if token else -1),
            expiry_timestamp=_timestamp(token.expiry_ms if token else -1),
            max_timestamp=_timestamp(token.max_ms if token else -1),
            token_id=token.token_id if token else "",
            hmac=token_hmac,
            throttle_time=NOT_THROTTLED,
        )

    error, tokens = _refusal(ctx)
    if tokens is None:
        return answer(error)
    if owner_name and owner_type != USER_TYPE:
        return answer(ErrorCode.invalid_principal_type)
    renewers = []
    for renewer in request.renewers:
        if renewer.principal_type != USER_TYPE:
            return answer(ErrorCode.invalid_principal_type)
        renewers.append(f"{renewer.principal_type}:{renewer.principal_name}")
    # Asking for a token that another user owns needs CreateTokens on that user (KIP-373).
    if owner != requester and not ctx.allowed(Operation.CREATE_TOKENS, ResourceType.USER, owner):
        return answer(ErrorCode.delegation_token_authorization_failed)
    config = ctx.broker.config
    max_lifetime = config.get_int("delegation.token.max.lifetime.ms")
    asked = _ms(request.max_lifetime)
    lifetime = max_lifetime if asked <= 0 else min(asked, max_lifetime)
    now = _now_ms()
    max_ms = now + lifetime
    token = DelegationToken(
        token_id=tokens.new_token_id(),
        owner=owner,
        requester=requester,
        renewers=tuple(renewers),
        issue_ms=now,
        expiry_ms=min(max_ms, now + config.get_int("delegation.token.expiry.time.ms")),
        max_ms=max_ms,
    )
    error = await _commit(ctx, [tokens.upsert_record(token)])
    if error != ErrorCode.none:
        return answer(error)
    return answer(ErrorCode.none, token, tokens.hmac_of(token.token_id))


# Renew and Expire answer the same fields.
ExpiryAnswer = TypeVar("ExpiryAnswer", RenewDelegationTokenResponse, ExpireDelegationTokenResponse)


async def _change_expiry(
    ctx: RequestContext, token_hmac: bytes, period_ms: int, response: type[ExpiryAnswer]
) -> ExpiryAnswer:
    """Renew (a negative period: the default renew period) or expire (a negative period: now)."""
    renew = response is RenewDelegationTokenResponse

    def answer(error: ErrorCode, expiry_ms: int = -1) -> ExpiryAnswer:
        return response(error_code=error, expiry_timestamp=_timestamp(expiry_ms), throttle_time=NOT_THROTTLED)

    error, tokens = _refusal(ctx)
    if tokens is None:
        return answer(error)
    token = tokens.find_by_hmac(token_hmac)
    if token is None:
        return answer(ErrorCode.delegation_token_not_found)
    if not token.owner_or_renewer(ctx.principal):
        return answer(ErrorCode.delegation_token_owner_mismatch)
    now = _now_ms()
    if token.expiry_ms < now or token.max_ms < now:
        return answer(ErrorCode.delegation_token_expired)
    if renew:
        if period_ms < 0:
            period_ms = ctx.broker.config.get_int("delegation.token.expiry.time.ms")
        expiry = min(token.max_ms, now + period_ms)
        record = tokens.upsert_record(_with_expiry(token, expiry))
    elif period_ms < 0:
        expiry = now
        record = tokens.delete_record(token.token_id)
    else:
        expiry = min(token.max_ms, now + period_ms)
        record = tokens.upsert_record(_with_expiry(token, expiry))
    error = await _commit(ctx, [record])
    return answer(error, expiry if error == ErrorCode.none else -1)


def _with_expiry(token: DelegationToken, expiry_ms: int) -> DelegationToken:
    return dataclasses.replace(token, expiry_ms=expiry_ms)


async def handle_renew_delegation_token(ctx: RequestContext, request: Any) -> RenewDelegationTokenResponse:
    return await _change_expiry(
        ctx, bytes(request.hmac), _ms(request.renew_period), RenewDelegationTokenResponse
    )


async def handle_expire_delegation_token(ctx: RequestContext, request: Any) -> ExpireDelegationTokenResponse:
    return await _change_expiry(
        ctx, bytes(request.hmac), _ms(request.expiry_time_period), ExpireDelegationTokenResponse
    )


async def handle_describe_delegation_token(
    ctx: RequestContext, request: Any
) -> DescribeDelegationTokenResponse:
    error, tokens = _refusal(ctx)
    if tokens is None:
        return DescribeDelegationTokenResponse(error_code=error, tokens=(), throttle_time=NOT_THROTTLED)
    owners = (
        None
        if request.owners is None
        else [f"{owner.principal_type}:{owner.principal_name}" for owner in request.owners]
    )
    now = _now_ms()
    described = []
    for token in tokens.all() if owners != [] else []:
        if token.expiry_ms < now:
            continue
        if owners is not None and not any(token.owner_or_renewer(owner) for owner in owners):
            continue
        # Kafka's filterToken: the caller's own tokens, or Describe on the token, or DescribeTokens on
        # the owner (KIP-373).
        if not (
            token.owner_or_renewer(ctx.principal)
            or ctx.allowed(Operation.DESCRIBE, ResourceType.DELEGATION_TOKEN, token.token_id)
            or ctx.allowed(Operation.DESCRIBE_TOKENS, ResourceType.USER, token.owner)
        ):
            continue
        owner_kind, owner_user = _split(token.owner)
        requester_kind, requester_user = _split(token.requester)
        described.append(
            DescribedDelegationToken(
                principal_type=owner_kind,
                principal_name=owner_user,
                token_requester_principal_type=requester_kind,
                token_requester_principal_name=requester_user,
                issue_timestamp=token.issue_ms,
                expiry_timestamp=token.expiry_ms,
                max_timestamp=token.max_ms,
                token_id=token.token_id,
                hmac=tokens.hmac_of(token.token_id),
                renewers=tuple(
                    DescribedDelegationTokenRenewer(principal_type=kind, principal_name=name)
                    for kind, name in (_split(renewer) for renewer in token.renewers)
                ),
            )
        )
    return DescribeDelegationTokenResponse(
        error_code=ErrorCode.none, tokens=tuple(described), throttle_time=NOT_THROTTLED
    )
