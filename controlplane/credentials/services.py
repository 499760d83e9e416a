"""Issuing, rotating and revoking a service account's SCRAM credential on a cluster
(AlterUserScramCredentials). The password is generated here, returned once and never stored."""

from __future__ import annotations

import os
import secrets

from django.utils import timezone

from controlplane.accounts.models import ServiceAccount
from controlplane.clusters.connections import connection_for
from controlplane.clusters.models import Cluster
from controlplane.clusters.outcomes import confirmed_change
from controlplane.clusters.ownership import require_same_organization
from controlplane.core.changes import Change, audited_change
from controlplane.core.errors import Conflict
from controlplane.credentials.models import ScramCredential
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.kafka.scram import delete_scram_credential, upsert_scram_credential
from controlplane.tenancy.access import Actor, require_team_role
from controlplane.tenancy.choices import TeamRole
from controlplane.topics.guardrails import check_change_rate

SCRAM_ITERATIONS = 8192


def _change(action: str, account: ServiceAccount, cluster: Cluster, mechanism: str) -> Change:
    return Change(
        action=action,
        resource_type="scram_credential",
        organization_id=account.organization_id,
        team_id=account.team_id,
        team_name=account.team.name,
        resource_name=f"{account.name}@{cluster.name}",
        extra={"mechanism": mechanism, "principal": account.principal},
    )


def _write_password(credential: ScramCredential) -> str:
    password, salt = secrets.token_urlsafe(32), os.urandom(16)

    def upsert() -> bool:
        upsert_scram_credential(
            connection_for(credential.cluster),
            user=credential.service_account.name,
            mechanism=credential.mechanism,
            password=password,
            salt=salt,
            iterations=SCRAM_ITERATIONS,
        )
        return True

    # The cluster offers no read of a credential's secret; the same upsert sent again is idempotent and
    # its answer confirms the outcome when the first went unanswered.
    with confirmed_change(upsert):
        upsert()
    return password


def issue_scram_credential(
    *, actor: Actor, service_account: ServiceAccount, cluster: Cluster, mechanism: str
) -> tuple[ScramCredential, str]:
    change = _change("scram_credential.issue", service_account, cluster, mechanism)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, service_account.team, TeamRole.DEVELOPER)
        require_same_organization(cluster, service_account.team)
        if ScramCredential.objects.filter(
            service_account=service_account, cluster=cluster, mechanism=mechanism
        ).exists():
            raise Conflict("The credential exists; rotate it for a new password.", code="duplicate")
        credential = ScramCredential(service_account=service_account, cluster=cluster, mechanism=mechanism)
        password = _write_password(credential)
        credential.save()
        change.on(credential)
    return credential, password


def rotate_scram_credential(*, actor: Actor, credential: ScramCredential) -> tuple[ScramCredential, str]:
    """A new password; the old one stops working at once (clients reconnect with the new one)."""
    account = credential.service_account
    change = _change("scram_credential.rotate", account, credential.cluster, credential.mechanism)
    change.on(credential)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, account.team, TeamRole.DEVELOPER)
        check_change_rate(account.team)
        password = _write_password(credential)
        credential.rotated_at = timezone.now()
        credential.save(update_fields=["rotated_at"])
    return credential, password


def revoke_scram_credential(*, actor: Actor, credential: ScramCredential) -> None:
    account = credential.service_account
    change = _change("scram_credential.revoke", account, credential.cluster, credential.mechanism)
    change.on(credential)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, account.team, TeamRole.DEVELOPER)
        check_change_rate(account.team)

        def delete() -> bool:
            try:
                delete_scram_credential(
                    connection_for(credential.cluster), user=account.name, mechanism=credential.mechanism
                )
            except KafkaGatewayError as error:
                if error.error_name != "RESOURCE_NOT_FOUND":  # already gone on the cluster
                    raise
            return True

        with confirmed_change(delete):  # sent again when unanswered: "already gone" confirms it
            delete()
        credential.delete()
