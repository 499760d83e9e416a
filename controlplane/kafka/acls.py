"""ACL bindings: described, created and deleted."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    ResourcePatternType,
    ResourceType,
)

from controlplane.kafka.connection import DEFAULT_TIMEOUT_SECONDS, Connection, admin_client, await_result
from controlplane.kafka.errors import KafkaGatewayError


@dataclass(frozen=True, order=True)
class Acl:
    """One binding in Kafka's model; enum fields hold Kafka's names (TOPIC, PREFIXED, READ, ALLOW)."""

    resource_type: str
    resource_name: str
    pattern_type: str
    principal: str
    host: str
    operation: str
    permission: str

    def binding(self) -> AclBinding:
        return AclBinding(
            ResourceType[self.resource_type],
            self.resource_name,
            ResourcePatternType[self.pattern_type],
            self.principal,
            self.host,
            AclOperation[self.operation],
            AclPermissionType[self.permission],
        )

    @classmethod
    def of(cls, binding: AclBinding) -> Acl:
        return cls(
            resource_type=binding.restype.name,
            resource_name=binding.name,
            pattern_type=binding.resource_pattern_type.name,
            principal=binding.principal,
            host=binding.host,
            operation=binding.operation.name,
            permission=binding.permission_type.name,
        )


def describe_acls(connection: Connection, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS) -> list[Acl]:
    """Every ACL binding on the cluster."""
    admin = admin_client(connection, timeout_seconds)
    match_all = AclBindingFilter(
        ResourceType.ANY, None, ResourcePatternType.ANY, None, None, AclOperation.ANY, AclPermissionType.ANY
    )
    future = admin.describe_acls(match_all, request_timeout=timeout_seconds)
    return sorted(Acl.of(binding) for binding in await_result(future, "DescribeAcls", timeout_seconds))


def create_acls(
    connection: Connection, acls: Iterable[Acl], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    bindings = [acl.binding() for acl in acls]
    if not bindings:
        return
    admin = admin_client(connection, timeout_seconds)
    for future in admin.create_acls(bindings, request_timeout=timeout_seconds).values():
        await_result(future, "CreateAcls", timeout_seconds)


# Added to a batched request's deadline per binding: the authorizer writes them one after the other.
SECONDS_PER_BATCHED_ACL = 0.02


def create_acls_each(
    connection: Connection, acls: Sequence[Acl], *, timeout_seconds: float | None = None
) -> dict[Acl, KafkaGatewayError | None]:
    """One CreateAcls request for all of them: each binding's own answer (None when created). Bindings that
    several grants share (a cluster's IdempotentWrite, a topic's Describe) are sent once."""
    unique = list(dict.fromkeys(acls))
    if not unique:
        return {}
    if timeout_seconds is None:
        timeout_seconds = DEFAULT_TIMEOUT_SECONDS + SECONDS_PER_BATCHED_ACL * len(unique)
    admin = admin_client(connection, timeout_seconds)
    futures = admin.create_acls([acl.binding() for acl in unique], request_timeout=timeout_seconds)
    answers: dict[Acl, KafkaGatewayError | None] = {}
    for acl in unique:
        try:
            await_result(futures[acl.binding()], "CreateAcls", timeout_seconds)
            answers[acl] = None
        except KafkaGatewayError as error:
            answers[acl] = error
    return answers


def delete_acls(
    connection: Connection, acls: Iterable[Acl], *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
) -> None:
    """Deletes exactly these bindings (each filter matches one binding)."""
    filters = [
        AclBindingFilter(
            b.restype, b.name, b.resource_pattern_type, b.principal, b.host, b.operation, b.permission_type
        )
        for b in (acl.binding() for acl in acls)
    ]
    if not filters:
        return
    admin = admin_client(connection, timeout_seconds)
    for future in admin.delete_acls(filters, request_timeout=timeout_seconds).values():
        await_result(future, "DeleteAcls", timeout_seconds)
