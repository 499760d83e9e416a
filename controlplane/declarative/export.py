"""Today's resources of a team as documents: the start of a file set (`streamhub export`)."""

from __future__ import annotations

import re
from typing import Any

from controlplane.accounts.models import ServiceAccount
from controlplane.acls.models import AccessGrant
from controlplane.clusters.models import Cluster
from controlplane.declarative.alerting import export_channels, export_rules
from controlplane.declarative.choices import Kind
from controlplane.declarative.documents import API_VERSION
from controlplane.declarative.schemas import export_subjects
from controlplane.declarative.streaming import export_streams
from controlplane.quotas.models import ClientQuota
from controlplane.tenancy.models import Team
from controlplane.topics.models import Topic


def _document(
    kind: str, name: str, team: Team, cluster: Cluster | None, spec: dict[str, Any]
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "team": team.slug}
    if cluster is not None:
        metadata["cluster"] = cluster.name
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


def grant_name(grant: AccessGrant) -> str:
    """A readable, stable name for a grant made outside a file set (grants have no name of their own)."""
    return re.sub(
        r"[^A-Za-z0-9._-]+", "-", f"{grant.service_account.name}-{grant.template}-{grant.topic_prefix}"
    ).strip("-")


def export_team(*, team: Team, cluster: Cluster) -> list[dict[str, Any]]:
    documents = [
        _document(Kind.SERVICE_ACCOUNT, account.name, team, None, {"description": account.description})
        for account in ServiceAccount.objects.filter(team=team).order_by("name")
    ]
    for topic in Topic.objects.filter(team=team, cluster=cluster, managed=True).order_by("name"):
        spec: dict[str, Any] = {"partitions": topic.partitions, "replicationFactor": topic.replication_factor}
        if topic.configs:
            spec["configs"] = dict(sorted(topic.configs.items()))
        documents.append(_document(Kind.TOPIC, topic.name, team, cluster, spec))
    for grant in AccessGrant.objects.filter(team=team, cluster=cluster).select_related("service_account"):
        spec = {
            "serviceAccount": grant.service_account.name,
            "template": grant.template,
            "topicPrefix": grant.topic_prefix,
        }
        if grant.group_prefix:
            spec["groupPrefix"] = grant.group_prefix
        if grant.transactional_id_prefix:
            spec["transactionalIdPrefix"] = grant.transactional_id_prefix
        documents.append(_document(Kind.ACCESS_GRANT, grant_name(grant), team, cluster, spec))
    for quota in ClientQuota.objects.filter(team=team, cluster=cluster, managed=True).exclude(values={}):
        spec = {"values": dict(sorted(quota.values.items()))}
        if quota.entity.get("user"):
            spec["user"] = quota.entity["user"]
        if quota.entity.get("client-id"):
            spec["clientId"] = quota.entity["client-id"]
        documents.append(_document(Kind.QUOTA, quota.entity_key, team, cluster, spec))
    for subject, spec in export_subjects(team=team, cluster=cluster):
        documents.append(_document(Kind.SCHEMA, subject, team, cluster, spec))
    for name, spec in export_channels(team):
        documents.append(_document(Kind.ALERT_CHANNEL, name, team, None, spec))
    for name, rule_cluster, spec in export_rules(team, cluster):
        documents.append(_document(Kind.ALERT_RULE, name, team, rule_cluster, spec))
    for name, spec in export_streams(team, cluster):
        documents.append(_document(Kind.STREAMING_JOB, name, team, cluster, spec))
    return documents
