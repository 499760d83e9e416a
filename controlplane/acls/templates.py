"""What each grant template means in ACL bindings, and whether a team may ask for a binding. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from controlplane.acls.choices import AclOperation, AclResourceType, GrantTemplate, PatternType, Permission
from controlplane.kafka.acls import Acl
from controlplane.tenancy.choices import PrefixResourceType

ANY_HOST = "*"

# Which prefixes a team's binding on each resource type must stay inside.
PREFIX_KIND = {
    AclResourceType.TOPIC: PrefixResourceType.TOPIC,
    AclResourceType.GROUP: PrefixResourceType.GROUP,
    AclResourceType.TRANSACTIONAL_ID: PrefixResourceType.TRANSACTIONAL_ID,
}


def _allow(resource_type: str, prefix: str, principal: str, *operations: str) -> list[Acl]:
    return [
        Acl(resource_type, prefix, PatternType.PREFIXED, principal, ANY_HOST, operation, Permission.ALLOW)
        for operation in operations
    ]


# The prefixes each template needs besides the topic prefix.
NEEDS_GROUP_PREFIX = {GrantTemplate.CONSUMER, GrantTemplate.STREAM_APP, GrantTemplate.SHARE_CONSUMER}
NEEDS_TRANSACTIONAL_ID_PREFIX = {GrantTemplate.TRANSACTIONAL_PRODUCER}


def template_bindings(
    template: str,
    *,
    principal: str,
    topic_prefix: str,
    group_prefix: str = "",
    transactional_id_prefix: str = "",
) -> list[Acl]:
    """The bindings a template grants, all PREFIXED and ALLOW, in a stable order. A stream application's
    transactional ids follow its group prefix unless a transactional-id prefix is given (Kafka Streams
    names them after its application id, which is also its group id)."""
    topic, group = AclResourceType.TOPIC, AclResourceType.GROUP
    if template == GrantTemplate.PRODUCER:
        return _allow(topic, topic_prefix, principal, AclOperation.WRITE, AclOperation.DESCRIBE)
    if template == GrantTemplate.TRANSACTIONAL_PRODUCER:
        # Exactly-once producers (and consume-transform-produce services that commit their input offsets
        # in the transaction, which also need a consumer grant) write topics under a transactional id.
        return _allow(topic, topic_prefix, principal, AclOperation.WRITE, AclOperation.DESCRIBE) + _allow(
            AclResourceType.TRANSACTIONAL_ID,
            transactional_id_prefix,
            principal,
            AclOperation.WRITE,
            AclOperation.DESCRIBE,
        )
    if template == GrantTemplate.CONSUMER:
        return _allow(topic, topic_prefix, principal, AclOperation.READ, AclOperation.DESCRIBE) + _allow(
            group, group_prefix, principal, AclOperation.READ
        )
    if template == GrantTemplate.SHARE_CONSUMER:
        # What Kafka checks for a share consumer (KIP-932): READ on its share group for heartbeats, fetches
        # and acknowledgements (share groups are GROUP resources, ACLs do not tell group types apart),
        # DESCRIBE on every subscribed topic for the heartbeat, READ on each topic it fetches. It commits
        # no offsets and describes nothing, so no more than that.
        return _allow(topic, topic_prefix, principal, AclOperation.READ, AclOperation.DESCRIBE) + _allow(
            group, group_prefix, principal, AclOperation.READ
        )
    if template == GrantTemplate.STREAM_APP:
        # Kafka Streams reads and writes its topics, creates its internal (changelog/repartition) topics,
        # commits as a group and may run with exactly-once transactions named after its application id.
        return (
            _allow(
                topic,
                topic_prefix,
                principal,
                AclOperation.READ,
                AclOperation.WRITE,
                AclOperation.DESCRIBE,
                AclOperation.CREATE,
                AclOperation.DELETE,
            )
            + _allow(group, group_prefix, principal, AclOperation.READ, AclOperation.DESCRIBE)
            + _allow(
                AclResourceType.TRANSACTIONAL_ID,
                transactional_id_prefix or group_prefix,
                principal,
                AclOperation.WRITE,
                AclOperation.DESCRIBE,
            )
        )
    raise ValueError(f"unknown template {template}")


def within_prefixes(name: str, prefixes: Iterable[str]) -> bool:
    """A LITERAL name, or a PREFIXED binding's prefix, stays inside the team when it starts with one of
    the team's prefixes (then every name the binding matches does too)."""
    return any(name.startswith(prefix) for prefix in prefixes)


def scope_problems(
    acls: Iterable[Acl], *, team_principals: set[str], team_prefixes: Mapping[str, list[str]]
) -> list[str]:
    """Why a team may not create these bindings (empty when it may): its own service accounts only, named
    resources inside its prefixes only, no wildcards, no cluster-wide rights."""
    problems = []
    for acl in acls:
        if acl.principal not in team_principals:
            problems.append(f"{acl.principal} is not one of the team's service accounts.")
        kind = PREFIX_KIND.get(acl.resource_type)
        if kind is None:
            problems.append(f"Only org admins grant rights on {acl.resource_type}.")
            continue
        if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED) or acl.resource_name == "*":
            problems.append("Teams grant LITERAL or PREFIXED bindings on named resources only.")
        elif not within_prefixes(acl.resource_name, team_prefixes.get(kind, [])):
            problems.append(
                f"{acl.resource_type} {acl.resource_name!r} is outside the team's {kind} prefixes."
            )
    return problems
