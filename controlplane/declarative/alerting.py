"""The AlertChannel and AlertRule kinds: a team's notification channels and alert rules, named within the
team. Plan checks with the alert services' own checks (alerts/services.py check_*), apply calls the same
services the API calls (which audit).

A channel's URL is a credential (a Slack-style incoming-webhook URL is enough to post): the file set names
it as `${ENV_VAR}` or `${file:path}`, which the CLI resolves at plan time, and a plan shows only that it
changed, never its value (nor is the value kept in the change set's report or the file set's claim)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from django.db.models import Q

from controlplane.alerts import services as alerts
from controlplane.alerts.choices import ChannelKind
from controlplane.alerts.models import AlertRule, NotificationChannel
from controlplane.clusters.models import Cluster
from controlplane.core.errors import ServiceError
from controlplane.declarative.choices import Action
from controlplane.tenancy.access import Actor, require_team_role
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Team

SECRET = "(secret)"
SECRET_CHANGED = "(secret changed)"

# Spec field → AlertRule field, with the model's default when the document leaves it out.
RULE_SPEC = {
    "description": ("description", ""),
    "groupPattern": ("group_pattern", "*"),
    "topicPattern": ("topic_pattern", "*"),
    "allTeams": ("all_teams", False),
    "granularity": ("granularity", "group"),
    "metric": ("metric", None),
    "comparison": ("comparison", "gt"),
    "threshold": ("threshold", None),
    "resolveThreshold": ("resolve_threshold", None),
    "statuses": ("statuses", []),
    "forSeconds": ("for_seconds", 0),
    "severity": ("severity", "warning"),
    "renotifyIntervalSeconds": ("renotify_interval_seconds", None),
    "sendResolved": ("send_resolved", True),
    "enabled": ("enabled", True),
}
NUMBERS = ("threshold", "resolveThreshold")


def url_digest(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()


def _rule_values(spec: Mapping[str, Any]) -> dict[str, Any]:
    """The spec as the rule's fields, numbers as the model stores them."""
    values = {}
    for key, (field, default) in RULE_SPEC.items():
        value = spec.get(key, default)
        values[field] = float(value) if key in NUMBERS and value is not None else value
    return values


def _shown_rule(rule: AlertRule) -> dict[str, Any]:
    shown = {key: getattr(rule, field) for key, (field, _default) in RULE_SPEC.items()}
    shown["cluster"] = rule.cluster.name if rule.cluster_id else None
    shown["channels"] = sorted(channel.name for channel in rule.channels.all())
    return shown


def team_channels(team: Team, names: list[str]) -> list[NotificationChannel]:
    found = {c.name: c for c in NotificationChannel.objects.filter(team=team, name__in=names)}
    missing = sorted(set(names) - set(found))
    if missing:
        raise ServiceError(
            f"No alert channel named {', '.join(map(repr, missing))} in the team; declare it in the file set "
            "or create it first.",
            code="unknown_channel",
        )
    return [found[name] for name in sorted(set(names))]


def plan_channel(
    *, actor: Actor, team: Team, name: str, spec: Mapping[str, Any]
) -> tuple[str, dict[str, dict[str, Any]], int | None]:
    """(action, diff, the channel's id). A channel the plan creates is written inside the plan's rolled-back
    transaction, so the file set's rules find it."""
    kind, url = spec["type"], spec.get("url", "")
    recipients = list(spec.get("emailRecipients") or [])
    enabled = spec.get("enabled", True)
    channel = NotificationChannel.objects.filter(team=team, name=name).first()
    if channel is None:
        alerts.check_channel_create(
            actor=actor, team=team, name=name, kind=kind, url=url, email_recipients=recipients
        )
        diff = {"type": {"from": None, "to": kind}, "enabled": {"from": None, "to": enabled}}
        if url:
            diff["url"] = {"from": None, "to": SECRET}
        if recipients:
            diff["emailRecipients"] = {"from": None, "to": recipients}
        NotificationChannel.objects.create(
            team=team, name=name, kind=kind, url=url, email_recipients=recipients, enabled=enabled
        )
        return Action.CREATE, diff, None
    if channel.kind != kind:
        raise ServiceError(
            f"Channel {name!r} is a {channel.kind} channel; its type does not change. Rename the document to "
            "make a new channel (and prune the old one).",
            code="channel_type_change",
            details={"current": channel.kind, "requested": kind},
        )
    changes: dict[str, Any] = {}
    diff: dict[str, dict[str, Any]] = {}
    # Compared by digest and shown without either value: a plan is reviewed, logged and kept.
    if kind != ChannelKind.EMAIL and url_digest(channel.url) != url_digest(url):
        changes["url"] = url
        diff["url"] = {"from": SECRET, "to": SECRET_CHANGED}
    if kind == ChannelKind.EMAIL and channel.email_recipients != recipients:
        changes["email_recipients"] = recipients
        diff["emailRecipients"] = {"from": channel.email_recipients, "to": recipients}
    if channel.enabled != enabled:
        changes["enabled"] = enabled
        diff["enabled"] = {"from": channel.enabled, "to": enabled}
    if changes:
        alerts.check_channel_update(actor=actor, channel=channel, **changes)
    return (Action.UPDATE if diff else Action.UNCHANGED), diff, channel.pk


def plan_rule(
    *, actor: Actor, team: Team, cluster: Cluster | None, name: str, spec: Mapping[str, Any]
) -> tuple[str, dict[str, dict[str, Any]], int | None]:
    values = _rule_values(spec) | {"name": name, "cluster": cluster}
    channels = team_channels(team, list(spec.get("channels") or []))
    wanted = {key: values[field] for key, (field, _default) in RULE_SPEC.items()}
    wanted["cluster"] = cluster.name if cluster is not None else None
    wanted["channels"] = [channel.name for channel in channels]
    rule = AlertRule.objects.filter(team=team, name=name).select_related("cluster").first()
    if rule is None:
        stored = alerts.check_rule_create(actor=actor, team=team, channels=channels, **values)
        # A cluster-health rule without a threshold gets its metric's default, as through the API.
        wanted["threshold"] = stored.get("threshold")
        diff = {
            key: {"from": None, "to": value} for key, value in wanted.items() if value not in (None, [], "")
        }
        return Action.CREATE, diff, None
    current = _shown_rule(rule)
    if spec.get("threshold") is None:
        wanted["threshold"] = current["threshold"]  # left to the API's default, as the rule has it
    diff = {
        key: {"from": current[key], "to": value} for key, value in wanted.items() if current[key] != value
    }
    if diff:
        fields = {RULE_SPEC[key][0]: values[RULE_SPEC[key][0]] for key in diff if key in RULE_SPEC}
        if "cluster" in diff:
            fields["cluster"] = cluster
        alerts.check_rule_update(
            actor=actor, rule=rule, channels=channels if "channels" in diff else None, **fields
        )
    return (Action.UPDATE if diff else Action.UNCHANGED), diff, rule.pk


def check_delete(*, actor: Actor, kind: str, resource_id: int | None) -> int | None:
    """delete_rule's and delete_channel's check; the id of what is still there."""
    model = AlertRule if kind == "AlertRule" else NotificationChannel
    found = model.objects.filter(pk=resource_id).select_related("team").first()
    if found is None:
        return None
    require_team_role(actor, found.team, TeamRole.DEVELOPER)  # delete_rule's and delete_channel's check
    return found.pk


def apply_channel(
    *, actor: Actor, team: Team, name: str, action: str, spec: Mapping[str, Any], target_id: int | None
) -> int | None:
    if action == Action.DELETE:
        channel = NotificationChannel.objects.filter(pk=target_id).select_related("team").first()
        if channel is not None:
            alerts.delete_channel(actor=actor, channel=channel)
        return None
    kind, url = spec["type"], spec.get("url", "")
    recipients = list(spec.get("emailRecipients") or [])
    enabled = spec.get("enabled", True)
    if action == Action.CREATE:
        # The signing secret is not kept in the report: rotating it (API, console) shows a new one.
        channel, _secret = alerts.create_channel(
            actor=actor,
            team=team,
            name=name,
            kind=kind,
            url=url,
            email_recipients=recipients,
            enabled=enabled,
        )
        return channel.pk
    channel = NotificationChannel.objects.select_related("team").get(pk=target_id)
    changes: dict[str, Any] = {"enabled": enabled}
    if kind == ChannelKind.EMAIL:
        changes["email_recipients"] = recipients
    else:
        changes["url"] = url
    alerts.update_channel(actor=actor, channel=channel, **changes)
    return channel.pk


def apply_rule(
    *,
    actor: Actor,
    team: Team,
    cluster: Cluster | None,
    name: str,
    action: str,
    spec: Mapping[str, Any],
    diff: Mapping[str, Any],
    target_id: int | None,
) -> int | None:
    if action == Action.DELETE:
        rule = AlertRule.objects.filter(pk=target_id).select_related("team").first()
        if rule is not None:
            alerts.delete_rule(actor=actor, rule=rule)
        return None
    values = _rule_values(spec)
    channels = team_channels(team, list(spec.get("channels") or []))
    if action == Action.CREATE:
        return alerts.create_rule(
            actor=actor, team=team, channels=channels, name=name, cluster=cluster, **values
        ).pk
    rule = AlertRule.objects.select_related("team", "cluster").get(pk=target_id)
    fields = {RULE_SPEC[key][0]: values[RULE_SPEC[key][0]] for key in diff if key in RULE_SPEC}
    if "cluster" in diff:
        fields["cluster"] = cluster
    if fields or "channels" in diff:
        alerts.update_rule(
            actor=actor, rule=rule, channels=channels if "channels" in diff else None, **fields
        )
    return rule.pk


def channel_env_var(name: str) -> str:
    """The environment variable an exported channel's URL is read from."""
    return "STREAMHUB_CHANNEL_" + "".join(c if c.isalnum() else "_" for c in name.upper()) + "_URL"


def export_channels(team: Team) -> list[tuple[str, dict[str, Any]]]:
    exported = []
    for channel in NotificationChannel.objects.filter(team=team).order_by("name"):
        spec: dict[str, Any] = {"type": channel.kind, "enabled": channel.enabled}
        if channel.kind == ChannelKind.EMAIL:
            spec["emailRecipients"] = list(channel.email_recipients)
        else:
            spec["url"] = "${" + channel_env_var(channel.name) + "}"  # never the URL itself
        exported.append((channel.name, spec))
    return exported


def export_rules(team: Team, cluster: Cluster) -> list[tuple[str, Cluster | None, dict[str, Any]]]:
    """The team's rules on the cluster and on every cluster (those without one)."""
    exported = []
    rules = AlertRule.objects.filter(Q(cluster__isnull=True) | Q(cluster=cluster), team=team).order_by("name")
    for rule in rules.select_related("cluster").prefetch_related("channels"):
        shown = _shown_rule(rule)
        spec = {key: shown[key] for key, (_field, default) in RULE_SPEC.items() if shown[key] != default} | {
            "metric": rule.metric
        }
        if shown["channels"]:
            spec["channels"] = shown["channels"]
        exported.append((rule.name, rule.cluster, spec))
    return exported
