"""ACL bindings and grants: teams grant their own service accounts access inside their own prefixes;
org admins grant anything. Each change reaches the cluster through the gateway and is audited."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from controlplane.accounts.models import ServiceAccount
from controlplane.acls.models import AccessGrant, AclBinding
from controlplane.acls.templates import (
    NEEDS_GROUP_PREFIX,
    NEEDS_TRANSACTIONAL_ID_PREFIX,
    scope_problems,
    template_bindings,
)
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.clusters.outcomes import OutcomeUnknown, confirmed_change, is_ambiguous
from controlplane.clusters.ownership import require_cluster_admin, require_same_organization
from controlplane.core.changes import Change, audited_change, audited_refusals
from controlplane.core.errors import Conflict, Forbidden, ServiceError
from controlplane.kafka.acls import Acl, create_acls, create_acls_each, delete_acls, describe_acls
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.refusals import refusal_for
from controlplane.tenancy.access import Actor, org_roles, require_team_role
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Team
from controlplane.topics.guardrails import check_change_rate


def snapshot_binding(binding: AclBinding) -> dict[str, Any]:
    return {**AclBinding.fields_of(binding.acl), "managed": binding.managed}


def snapshot_grant(grant: AccessGrant) -> dict[str, Any]:
    return {
        "template": grant.template,
        "service_account": grant.service_account.name,
        "topic_prefix": grant.topic_prefix,
        "group_prefix": grant.group_prefix,
        "transactional_id_prefix": grant.transactional_id_prefix,
        "bindings": [snapshot_binding(b) for b in grant.bindings.all()],
    }


def _change(action: str, resource_type: str, cluster: Cluster, team: Team | None, **fields: Any) -> Change:
    return Change(
        action=action,
        resource_type=resource_type,
        organization_id=cluster.organization_id,
        team_id=team.id if team is not None else None,
        team_name=team.name if team is not None else "",
        **fields,
    )


def _is_org_admin(actor: Actor, cluster: Cluster) -> bool:
    return org_roles(actor).get(cluster.organization_id) == TeamRole.TEAM_ADMIN


def _require_team_scope(actor: Actor, cluster: Cluster, team: Team, acls: list[Acl]) -> None:
    """Team developers and admins may grant inside the team's scope; org admins may grant anything."""
    require_same_organization(cluster, team)
    require_team_role(actor, team, TeamRole.DEVELOPER)
    if _is_org_admin(actor, cluster):
        return
    principals = {account.principal for account in team.service_accounts.all()}
    prefixes: dict[str, list[str]] = {}
    for prefix in team.prefixes.all():
        prefixes.setdefault(prefix.resource_type, []).append(prefix.prefix)
    problems = scope_problems(acls, team_principals=principals, team_prefixes=prefixes)
    if problems:
        raise Forbidden(problems[0], code="outside_team_scope", details={"problems": problems})


def _in_use_elsewhere(cluster: Cluster, acl: Acl, excluding: list[int]) -> bool:
    return (
        AclBinding.objects.filter(cluster=cluster, managed=True, **AclBinding.fields_of(acl))
        .exclude(pk__in=excluding)
        .exists()
    )


def _on_cluster(cluster: Cluster, acls: list[Acl]) -> bool:
    return set(acls) <= set(describe_acls(connection_for(cluster)))


def _gone_from_cluster(cluster: Cluster, acls: list[Acl]) -> bool:
    return not set(acls) & set(describe_acls(connection_for(cluster)))


def create_binding(*, actor: Actor, cluster: Cluster, team: Team | None, acl: Acl) -> AclBinding:
    """One binding. Without a team only an org admin may create it (it is then the organization's)."""
    change = _change(
        "acl.create",
        "acl_binding",
        cluster,
        team,
        resource_name=str(acl)[:255],
        after=AclBinding.fields_of(acl),
    )
    with audited_change(actor=actor, change=change):
        if team is None:
            require_cluster_admin(actor, cluster)
        else:
            _require_team_scope(actor, cluster, team, [acl])
            check_change_rate(team)
        if AclBinding.objects.filter(cluster=cluster, managed=True, **AclBinding.fields_of(acl)).exists():
            raise Conflict("This binding already exists.", code="duplicate")
        with confirmed_change(lambda: _on_cluster(cluster, [acl])):
            create_acls(connection_for(cluster), [acl])
        binding = AclBinding.objects.create(
            cluster=cluster, team=team, managed=True, exists_on_cluster=True, **AclBinding.fields_of(acl)
        )
        AclBinding.objects.filter(cluster=cluster, managed=False, **AclBinding.fields_of(acl)).delete()
        change.on(binding)
    return binding


def delete_binding(*, actor: Actor, binding: AclBinding) -> None:
    change = _change(
        "acl.delete", "acl_binding", binding.cluster, binding.team, before=snapshot_binding(binding)
    )
    change.on(binding)
    with audited_change(actor=actor, change=change):
        if binding.team_id is None:
            require_cluster_admin(actor, binding.cluster)
        else:
            _require_team_scope(actor, binding.cluster, binding.team, [binding.acl])
            check_change_rate(binding.team)
        if binding.grant_id is not None:
            raise Conflict("This binding belongs to a grant; remove the grant instead.", code="part_of_grant")
        if not _in_use_elsewhere(binding.cluster, binding.acl, [binding.pk]):
            with confirmed_change(lambda: _gone_from_cluster(binding.cluster, [binding.acl])):
                delete_acls(connection_for(binding.cluster), [binding.acl])
        binding.delete()


def check_grant(
    *,
    actor: Actor,
    cluster: Cluster,
    service_account: ServiceAccount,
    template: str,
    topic_prefix: str,
    group_prefix: str = "",
    transactional_id_prefix: str = "",
    batched: int = 0,
) -> list[Acl]:
    """What `apply_template` checks before the cluster is asked; returns the bindings the grant creates.
    `batched`: grants checked before this one to be sent in the same request (they count for the rate)."""
    if not topic_prefix:
        raise ServiceError("A grant needs a topic prefix.", code="invalid_prefix")
    if template in NEEDS_GROUP_PREFIX and not group_prefix:
        raise ServiceError("This template needs a group prefix.", code="invalid_prefix")
    if template in NEEDS_TRANSACTIONAL_ID_PREFIX and not transactional_id_prefix:
        raise ServiceError("This template needs a transactional-id prefix.", code="invalid_prefix")
    acls = template_bindings(
        template,
        principal=service_account.principal,
        topic_prefix=topic_prefix,
        group_prefix=group_prefix,
        transactional_id_prefix=transactional_id_prefix,
    )
    _require_team_scope(actor, cluster, service_account.team, acls)
    check_change_rate(service_account.team, batched=batched)
    return acls


def check_revoke_grant(*, actor: Actor, grant: AccessGrant) -> None:
    """What `revoke_grant` checks."""
    _require_team_scope(actor, grant.cluster, grant.team, [b.acl for b in grant.bindings.all()])
    check_change_rate(grant.team)


@dataclass(frozen=True)
class GrantRequest:
    service_account: ServiceAccount
    template: str
    topic_prefix: str
    group_prefix: str = ""
    transactional_id_prefix: str = ""


def apply_template(
    *,
    actor: Actor,
    cluster: Cluster,
    service_account: ServiceAccount,
    template: str,
    topic_prefix: str,
    group_prefix: str = "",
    transactional_id_prefix: str = "",
) -> AccessGrant:
    """Creates every binding of the template for the service account, in one call."""
    request = GrantRequest(service_account, template, topic_prefix, group_prefix, transactional_id_prefix)
    (result,) = apply_templates(actor=actor, cluster=cluster, requests=[request])
    if isinstance(result, ServiceError):
        raise result
    return result


def apply_templates(
    *, actor: Actor, cluster: Cluster, requests: Sequence[GrantRequest]
) -> list[AccessGrant | ServiceError]:
    """apply_template for grants of one team's service accounts, the bindings of all of them sent in one
    CreateAcls request: each grant checked, recorded and audited on its own, its result the grant or the
    refusal it met (one refused leaves the others granted)."""
    results: list[AccessGrant | ServiceError | None] = [None] * len(requests)
    checked: list[tuple[int, Change, list[Acl]]] = []
    for index, request in enumerate(requests):
        account = request.service_account
        change = _change(
            "acl.grant",
            "access_grant",
            cluster,
            account.team,
            resource_name=f"{request.template}:{account.name}",
        )
        try:
            with audited_refusals(actor=actor, change=change):
                acls = check_grant(
                    actor=actor,
                    cluster=cluster,
                    service_account=account,
                    template=request.template,
                    topic_prefix=request.topic_prefix,
                    group_prefix=request.group_prefix,
                    transactional_id_prefix=request.transactional_id_prefix,
                    batched=len(checked),
                )
        except ServiceError as refusal:
            results[index] = refusal
            continue
        checked.append((index, change, acls))
    sent = [acl for _, _, acls in checked for acl in acls]
    try:
        answers = create_acls_each(connection_for(cluster), sent)
    except KafkaGatewayError as error:  # the request as a whole
        answers = dict.fromkeys(sent, error)
    read_back: set[Acl] | None = None
    for index, change, acls in checked:
        errors = [answers[acl] for acl in acls if answers[acl] is not None]
        try:
            with audited_change(actor=actor, change=change):
                refused = next((error for error in errors if not is_ambiguous(error)), None)
                if refused is not None:
                    raise refusal_for(refused) from refused
                if errors:
                    # No answer in time for some: the cluster read back once for the whole batch.
                    if read_back is None:
                        read_back = _acls_on_cluster(cluster)
                    if not set(acls) <= read_back:
                        raise OutcomeUnknown(
                            "The cluster did not answer in time and does not show the change yet; it may "
                            "still apply it. Look again shortly before retrying.",
                            details={"kafka_error": errors[0].error_name},
                        )
                results[index] = _record_grant(cluster, change, requests[index], acls)
        except ServiceError as refusal:
            results[index] = refusal
    return [result for result in results if result is not None]


def _acls_on_cluster(cluster: Cluster) -> set[Acl]:
    try:
        return set(describe_acls(connection_for(cluster)))
    except KafkaGatewayError:
        return set()


def _record_grant(cluster: Cluster, change: Change, request: GrantRequest, acls: list[Acl]) -> AccessGrant:
    team = request.service_account.team
    grant = AccessGrant.objects.create(
        cluster=cluster,
        team=team,
        service_account=request.service_account,
        template=request.template,
        topic_prefix=request.topic_prefix,
        group_prefix=request.group_prefix,
        transactional_id_prefix=request.transactional_id_prefix,
    )
    for acl in acls:
        AclBinding.objects.create(
            cluster=cluster,
            team=team,
            grant=grant,
            managed=True,
            exists_on_cluster=True,
            **AclBinding.fields_of(acl),
        )
        AclBinding.objects.filter(cluster=cluster, managed=False, **AclBinding.fields_of(acl)).delete()
    change.on(grant)
    change.after = snapshot_grant(grant)
    return grant


def revoke_grant(*, actor: Actor, grant: AccessGrant) -> None:
    """Removes the grant's bindings together (those another grant still needs stay on the cluster)."""
    change = _change("acl.revoke", "access_grant", grant.cluster, grant.team, before=snapshot_grant(grant))
    change.on(grant)
    with audited_change(actor=actor, change=change):
        bindings = list(grant.bindings.all())
        check_revoke_grant(actor=actor, grant=grant)
        ids = [b.pk for b in bindings]
        removable = [b.acl for b in bindings if not _in_use_elsewhere(grant.cluster, b.acl, ids)]
        with confirmed_change(lambda: _gone_from_cluster(grant.cluster, removable)):
            delete_acls(connection_for(grant.cluster), removable)
        grant.delete()


def adopt_binding(*, actor: Actor, binding: AclBinding, team: Team | None) -> AclBinding:
    """An org admin takes an unmanaged binding into a team (or into the organization's own bindings)."""
    change = _change("acl.adopt", "acl_binding", binding.cluster, team, before=snapshot_binding(binding))
    change.on(binding)
    with audited_change(actor=actor, change=change):
        require_cluster_admin(actor, binding.cluster)
        if team is not None:
            require_same_organization(binding.cluster, team)
        if binding.managed:
            raise Conflict("The binding is already managed.", code="already_managed")
        binding.team, binding.managed = team, True
        binding.save(update_fields=["team", "managed"])
        change.after = snapshot_binding(binding)
    return binding
