"""Kafka's ACL model and authorizer (the semantics of Kafka's StandardAuthorizer).

ACLs are indexed per resource type by literal name and by prefix, so a decision looks at
the ACLs of one name, of ``*`` and of the prefixes of the name that exist (one dict lookup
per distinct prefix length) whatever the number of ACLs. Decisions are cached per
(principal, host, operation, resource) and the cache is dropped on every ACL change.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from broker.metadata.security_records import AclTuple
from broker.metadata.security_registry import SecurityStore

CLUSTER_NAME = "kafka-cluster"
WILDCARD = "*"


class ResourceType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class Operation(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14


class Permission(enum.IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


# An ALLOW for any of these operations also allows the key (Kafka's implied operations).
_IMPLIED_BY = {
    Operation.DESCRIBE: frozenset(
        {
            Operation.DESCRIBE,
            Operation.READ,
            Operation.WRITE,
            Operation.DELETE,
            Operation.ALTER,
            Operation.ALL,
        }
    ),
    Operation.DESCRIBE_CONFIGS: frozenset(
        {Operation.DESCRIBE_CONFIGS, Operation.ALTER_CONFIGS, Operation.ALL}
    ),
}

# Operations reported as "authorized operations" per resource type (Metadata, DescribeGroups).
RESOURCE_OPERATIONS = {
    ResourceType.TOPIC: (
        Operation.READ,
        Operation.WRITE,
        Operation.CREATE,
        Operation.DELETE,
        Operation.ALTER,
        Operation.DESCRIBE,
        Operation.DESCRIBE_CONFIGS,
        Operation.ALTER_CONFIGS,
    ),
    # Groups have configs since KIP-848 (consumer.session.timeout.ms, …): Kafka reports these two as well.
    ResourceType.GROUP: (
        Operation.READ,
        Operation.DESCRIBE,
        Operation.DELETE,
        Operation.DESCRIBE_CONFIGS,
        Operation.ALTER_CONFIGS,
    ),
    ResourceType.CLUSTER: (
        Operation.CREATE,
        Operation.CLUSTER_ACTION,
        Operation.DESCRIBE_CONFIGS,
        Operation.ALTER_CONFIGS,
        Operation.IDEMPOTENT_WRITE,
        Operation.ALTER,
        Operation.DESCRIBE,
    ),
    ResourceType.TRANSACTIONAL_ID: (Operation.DESCRIBE, Operation.WRITE),
}


@dataclass(frozen=True, slots=True)
class AclBinding:
    resource_type: int
    resource_name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int

    def as_tuple(self) -> AclTuple:
        return (
            self.resource_type,
            self.resource_name,
            self.pattern_type,
            self.principal,
            self.host,
            self.operation,
            self.permission,
        )

    @classmethod
    def from_tuple(cls, acl: Iterable[object]) -> AclBinding:
        rtype, name, pattern, principal, host, operation, permission = acl
        return cls(
            int(rtype), str(name), int(pattern), str(principal), str(host), int(operation), int(permission)
        )  # type: ignore[call-overload]

    def problem(self) -> str | None:
        """Why Kafka would refuse to create this binding (None if it is valid)."""
        if self.resource_type not in RESOURCE_OPERATIONS and self.resource_type not in (
            ResourceType.DELEGATION_TOKEN,
            ResourceType.USER,
        ):
            return "resource type must be a concrete type"
        if self.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
            return "pattern type must be LITERAL or PREFIXED"
        if (
            self.operation in (Operation.UNKNOWN, Operation.ANY)
            or self.operation not in Operation._value2member_map_
        ):
            return "operation must be a concrete operation"
        if self.permission not in (Permission.ALLOW, Permission.DENY):
            return "permission type must be ALLOW or DENY"
        if not self.resource_name:
            return "resource name must not be empty"
        if self.resource_type == ResourceType.CLUSTER and self.resource_name != CLUSTER_NAME:
            return f"the cluster resource is named {CLUSTER_NAME}"
        kind, sep, name = self.principal.partition(":")
        if not sep or not kind or not name:
            return f"principal {self.principal!r} is not Type:name"
        if not self.host:
            return "host must not be empty"
        return None


@dataclass(frozen=True, slots=True)
class AclFilter:
    """DescribeAcls / DeleteAcls filter: None or ANY fields match everything."""

    resource_type: int = ResourceType.ANY
    resource_name: str | None = None
    pattern_type: int = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: int = Operation.ANY
    permission: int = Permission.ANY

    def matches(self, acl: AclBinding) -> bool:
        if self.resource_type != ResourceType.ANY and acl.resource_type != self.resource_type:
            return False
        if not self._matches_pattern(acl):
            return False
        if self.principal is not None and acl.principal != self.principal:
            return False
        if self.host is not None and acl.host != self.host:
            return False
        if self.operation != Operation.ANY and acl.operation != self.operation:
            return False
        return self.permission == Permission.ANY or acl.permission == self.permission

    def _matches_pattern(self, acl: AclBinding) -> bool:
        name = self.resource_name
        if self.pattern_type == PatternType.MATCH:
            if name is None:
                return True
            if acl.pattern_type == PatternType.LITERAL:
                return acl.resource_name in (name, WILDCARD)
            return acl.pattern_type == PatternType.PREFIXED and name.startswith(acl.resource_name)
        if self.pattern_type != PatternType.ANY and acl.pattern_type != self.pattern_type:
            return False
        return name is None or acl.resource_name == name


class _TypeIndex:
    __slots__ = ("literal", "prefix_lengths", "prefixed")

    def __init__(self) -> None:
        self.literal: dict[str, list[AclBinding]] = {}
        self.prefixed: dict[str, list[AclBinding]] = {}
        self.prefix_lengths: list[int] = []

    def matching(self, name: str) -> list[AclBinding]:
        found = list(self.literal.get(name, ()))
        if name != WILDCARD:
            found.extend(self.literal.get(WILDCARD, ()))
        for length in self.prefix_lengths:
            if length > len(name):
                break
            found.extend(self.prefixed.get(name[:length], ()))
        return found


class Authorizer:
    MAX_CACHED_DECISIONS = 100_000

    def __init__(self, security: SecurityStore, *, super_users: Iterable[str], allow_if_no_acl: bool) -> None:
        self._security = security
        self.super_users = frozenset(super_users)
        self.allow_if_no_acl = allow_if_no_acl
        self._index: dict[int, _TypeIndex] = {}
        self._cache: dict[tuple[str, str, int, int, str], bool] = {}
        self.rebuild()
        security.add_listener(self.rebuild)

    def rebuild(self) -> None:
        index: dict[int, _TypeIndex] = {}
        for raw in self._security.acls:
            acl = AclBinding.from_tuple(raw)
            entry = index.setdefault(acl.resource_type, _TypeIndex())
            table = entry.literal if acl.pattern_type == PatternType.LITERAL else entry.prefixed
            table.setdefault(acl.resource_name, []).append(acl)
        for entry in index.values():
            entry.prefix_lengths = sorted({len(prefix) for prefix in entry.prefixed})
        self._index = index
        self._cache = {}

    def acls(self) -> list[AclBinding]:
        return [AclBinding.from_tuple(raw) for raw in self._security.acls]

    def authorize(self, principal: str, host: str, operation: int, resource_type: int, name: str) -> bool:
        key = (principal, host, operation, resource_type, name)
        decision = self._cache.get(key)
        if decision is None:
            decision = self._decide(principal, host, operation, resource_type, name)
            if len(self._cache) >= self.MAX_CACHED_DECISIONS:
                self._cache.clear()
            self._cache[key] = decision
        return decision

    def _decide(self, principal: str, host: str, operation: int, resource_type: int, name: str) -> bool:
        if principal in self.super_users:
            return True
        entry = self._index.get(resource_type)
        matching = entry.matching(name) if entry is not None else []
        if not matching:
            return self.allow_if_no_acl
        allowing = _IMPLIED_BY.get(Operation(operation), frozenset({operation, Operation.ALL}))
        allowed = False
        for acl in matching:
            if acl.principal not in (principal, "User:*") or acl.host not in (host, WILDCARD):
                continue
            if acl.permission == Permission.DENY:
                # DENY wins, but only for the operation itself (or ALL): Kafka does not
                # let a DENY READ take DESCRIBE away.
                if acl.operation in (operation, Operation.ALL):
                    return False
            elif acl.operation in allowing:
                allowed = True
        return allowed

    def authorized_operations(self, principal: str, host: str, resource_type: int, name: str) -> int:
        bits = 0
        for operation in RESOURCE_OPERATIONS.get(ResourceType(resource_type), ()):
            if self.authorize(principal, host, operation, resource_type, name):
                bits |= 1 << operation
        return bits

    def allowed_on_any(self, principal: str, host: str, operation: int, resource_type: int) -> bool:
        """True if some ALLOW ACL of this type grants the operation (and no DENY matches it).

        Kafka uses this for idempotent producers: WRITE on any topic is enough.
        """
        if principal in self.super_users:
            return True
        entry = self._index.get(resource_type)
        if entry is None:
            return self.allow_if_no_acl
        for table in (entry.literal, entry.prefixed):
            for name, bindings in table.items():
                for acl in bindings:
                    if (
                        acl.permission == Permission.ALLOW
                        and acl.principal in (principal, "User:*")
                        and acl.operation in (operation, Operation.ALL)
                        and self.authorize(principal, host, operation, resource_type, name)
                    ):
                        return True
        return False
