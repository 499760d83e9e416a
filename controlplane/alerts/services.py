"""Every change to alert rules, channels, silences and alerts goes through these functions: they check the
caller's role in the owning team, validate across fields, and audit. Evaluation (evaluation.py) is the
only other writer, of alert states and notifications."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from controlplane.alerts.channels import new_signing_secret
from controlplane.alerts.choices import (
    ACTIVE_STATES,
    CLUSTER_METRIC_DEFAULT_THRESHOLDS,
    RISING_COMPARISONS,
    AlertState,
    ChannelKind,
    Metric,
    NotificationKind,
    NotificationStatus,
)
from controlplane.alerts.models import Alert, AlertRule, Notification, NotificationChannel, Silence
from controlplane.alerts.notices import channel_test_payload
from controlplane.clusters.models import Cluster
from controlplane.core import outbound
from controlplane.core.changes import Change, audited_change
from controlplane.core.encryption import encrypt_secret
from controlplane.core.errors import Conflict, ServiceError
from controlplane.lag.observations import Health
from controlplane.tenancy.access import Actor, require_org_admin, require_team_role
from controlplane.tenancy.choices import TeamRole
from controlplane.tenancy.models import Team

MAX_SILENCE = timedelta(days=90)

RULE_FIELDS = [
    "name", "description", "cluster", "group_pattern", "topic_pattern", "granularity", "metric", "comparison",
    "threshold", "resolve_threshold", "statuses", "for_seconds", "severity", "renotify_interval_seconds",
    "send_resolved", "enabled", "all_teams",
]  # fmt: skip


def _invalid(details: dict[str, list[str]]) -> ServiceError:
    return ServiceError("The request is not valid.", code="invalid", details=details)


def _change(action: str, resource_type: str, team: Team, **fields: Any) -> Change:
    return Change(
        action=action,
        resource_type=resource_type,
        organization_id=team.organization_id,
        team_id=team.id,
        team_name=team.name,
        **fields,
    )


# Rules


def snapshot_rule(rule: AlertRule) -> dict[str, Any]:
    snapshot = {name: getattr(rule, name) for name in RULE_FIELDS if name != "cluster"}
    snapshot["cluster"] = rule.cluster.name if rule.cluster_id else None
    snapshot["channels"] = sorted(channel.name for channel in rule.channels.all()) if rule.pk else []
    return snapshot


def rule_problems(values: dict[str, Any]) -> dict[str, list[str]]:
    """Cross-field checks of a rule's complete values; each problem is listed under its field."""
    problems: dict[str, list[str]] = {}
    metric, threshold, resolve = (
        values.get("metric"),
        values.get("threshold"),
        values.get("resolve_threshold"),
    )
    if metric == Metric.STATUS:
        statuses = values.get("statuses") or []
        unknown = sorted(set(statuses) - set(Health.values))
        if not statuses:
            problems["statuses"] = ["Name at least one status that fires."]
        elif unknown:
            problems["statuses"] = [
                f"Unknown statuses: {', '.join(unknown)}. Use {', '.join(Health.values)}."
            ]
        if threshold is not None or resolve is not None:
            problems["threshold"] = ["A status rule has no threshold: it fires on the statuses it names."]
        return problems
    if values.get("statuses"):
        problems["statuses"] = ["Only status rules name statuses."]
    if threshold is None:
        problems["threshold"] = ["A threshold is required for this metric."]
        return problems
    if resolve is not None:
        rising = values.get("comparison") in RISING_COMPARISONS
        if rising and resolve > threshold:
            problems["resolve_threshold"] = ["The resolve threshold must not be above the threshold."]
        if not rising and resolve < threshold:
            problems["resolve_threshold"] = ["The resolve threshold must not be below the threshold."]
    return problems


def _with_default_threshold(values: dict[str, Any]) -> dict[str, Any]:
    """Cluster-health rules without a threshold get their metric's default (see CLUSTER_METRIC_DEFAULT_THRESHOLDS)."""
    metric = values.get("metric")
    if metric in CLUSTER_METRIC_DEFAULT_THRESHOLDS and values.get("threshold") is None:
        return {**values, "threshold": CLUSTER_METRIC_DEFAULT_THRESHOLDS[metric]}
    return values


def _check_rule(team: Team, values: dict[str, Any], channels: list[NotificationChannel] | None) -> None:
    problems = rule_problems(values)
    cluster: Cluster | None = values.get("cluster")
    if cluster is not None and cluster.organization_id != team.organization_id:
        problems["cluster"] = ["The cluster belongs to another organization."]
    if channels is not None:
        foreign = sorted(channel.pk for channel in channels if channel.team_id != team.id)
        if foreign:
            # Ids only: the refusal must not name another team's objects.
            problems["channels"] = [f"These channels belong to another team: {', '.join(map(str, foreign))}."]
    if problems:
        raise _invalid(problems)


def check_rule_create(
    *, actor: Actor, team: Team, channels: list[NotificationChannel] | None = None, **values: Any
) -> dict[str, Any]:
    """create_rule's checks, without writing: the values it would store."""
    require_team_role(actor, team, TeamRole.DEVELOPER)
    if values.get("all_teams"):
        require_org_admin(actor, team.organization)
    values = _with_default_threshold(values)
    _check_rule(team, values, channels or [])
    if AlertRule.objects.filter(team=team, name=values["name"]).exists():
        raise Conflict(f"The team already has a rule named {values['name']!r}.", code="duplicate")
    return values


def create_rule(
    *, actor: Actor, team: Team, channels: list[NotificationChannel] | None = None, **values: Any
) -> AlertRule:
    change = _change("alert_rule.create", "alert_rule", team, resource_name=values.get("name", ""))
    with audited_change(actor=actor, change=change):
        values = check_rule_create(actor=actor, team=team, channels=channels, **values)
        rule = AlertRule.objects.create(team=team, created_by=actor.user, **values)
        rule.channels.set(channels or [])
        change.on(rule)
        change.after = snapshot_rule(rule)
    return rule


def update_rule(
    *, actor: Actor, rule: AlertRule, channels: list[NotificationChannel] | None = None, **changes: Any
) -> AlertRule:
    """Changes a rule; disabling it resolves its active alerts quietly (nobody gets a resolved notice for
    a rule they switched off)."""
    change = _change("alert_rule.update", "alert_rule", rule.team, before=snapshot_rule(rule))
    change.on(rule)
    with audited_change(actor=actor, change=change):
        changes = check_rule_update(actor=actor, rule=rule, channels=channels, **changes)
        for field, value in changes.items():
            setattr(rule, field, value)
        rule.save()
        if channels is not None:
            rule.channels.set(channels)
        if not rule.enabled:
            _resolve_quietly(rule.alerts.filter(state__in=ACTIVE_STATES), "The rule was disabled.")
        change.after = snapshot_rule(rule)
    return rule


def check_rule_update(
    *, actor: Actor, rule: AlertRule, channels: list[NotificationChannel] | None = None, **changes: Any
) -> dict[str, Any]:
    """update_rule's checks, without writing: the field changes it would make."""
    require_team_role(actor, rule.team, TeamRole.DEVELOPER)
    if rule.all_teams or changes.get("all_teams"):
        # Only org admins change a rule that watches every team's groups (or make one).
        require_org_admin(actor, rule.team.organization)
    values = {name: getattr(rule, name) for name in RULE_FIELDS} | changes
    if "metric" in changes and "threshold" not in changes and changes["metric"] != rule.metric:
        values["threshold"] = None  # the old metric's threshold means nothing for the new one
    values = _with_default_threshold(values)
    changes = {name: values[name] for name in (*changes, "threshold") if name in values}
    _check_rule(rule.team, values, channels)
    name = values["name"]
    if name != rule.name and AlertRule.objects.filter(team=rule.team, name=name).exists():
        raise Conflict(f"The team already has a rule named {name!r}.", code="duplicate")
    return changes


def _resolve_quietly(alerts: Any, reason: str) -> None:
    now = timezone.now()
    alerts.filter(state=AlertState.PENDING).delete()
    alerts.filter(state=AlertState.FIRING).update(state=AlertState.RESOLVED, resolved_at=now, reason=reason)


def delete_rule(*, actor: Actor, rule: AlertRule) -> None:
    """Deletes the rule with its alerts and their history."""
    change = _change("alert_rule.delete", "alert_rule", rule.team, before=snapshot_rule(rule))
    change.on(rule)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, rule.team, TeamRole.DEVELOPER)
        rule.delete()


# Channels


def snapshot_channel(channel: NotificationChannel) -> dict[str, Any]:
    # The URL is left out: Slack-style incoming-webhook URLs are credentials themselves.
    return {
        "name": channel.name,
        "kind": channel.kind,
        "email_recipients": channel.email_recipients,
        "enabled": channel.enabled,
    }


def _check_channel(kind: str, url: str, email_recipients: list[str]) -> None:
    problems: dict[str, list[str]] = {}
    if kind in (ChannelKind.WEBHOOK, ChannelKind.SLACK):
        if not url:
            problems["url"] = ["A webhook channel needs the URL to post to."]
        else:
            try:  # checked again at every send: what the name resolves to can change
                outbound.resolve(url)
            except outbound.UnresolvableHost:
                pass  # cannot be judged now (e.g. DNS is down); every send resolves and checks it
            except outbound.RefusedDestination as refusal:
                problems["url"] = [str(refusal)]
    elif not email_recipients:
        problems["email_recipients"] = ["An e-mail channel needs at least one recipient."]
    if problems:
        raise _invalid(problems)


def check_channel_create(
    *, actor: Actor, team: Team, name: str, kind: str, url: str, email_recipients: list[str]
) -> None:
    """create_channel's checks, without writing."""
    require_team_role(actor, team, TeamRole.DEVELOPER)
    _check_channel(kind, url, email_recipients)
    if NotificationChannel.objects.filter(team=team, name=name).exists():
        raise Conflict(f"The team already has a channel named {name!r}.", code="duplicate")


def check_channel_update(*, actor: Actor, channel: NotificationChannel, **changes: Any) -> None:
    """update_channel's checks, without writing."""
    require_team_role(actor, channel.team, TeamRole.DEVELOPER)
    url = changes.get("url", channel.url)
    recipients = changes.get("email_recipients", channel.email_recipients)
    _check_channel(channel.kind, url, recipients)
    name = changes.get("name", channel.name)
    if name != channel.name and NotificationChannel.objects.filter(team=channel.team, name=name).exists():
        raise Conflict(f"The team already has a channel named {name!r}.", code="duplicate")


def create_channel(
    *,
    actor: Actor,
    team: Team,
    name: str,
    kind: str,
    url: str = "",
    email_recipients: list[str] | None = None,
    enabled: bool = True,
) -> tuple[NotificationChannel, str]:
    """A channel, and for a webhook its signing secret: returned this once, stored only encrypted."""
    recipients = email_recipients or []
    change = _change("alert_channel.create", "alert_channel", team, resource_name=name)
    with audited_change(actor=actor, change=change):
        check_channel_create(
            actor=actor, team=team, name=name, kind=kind, url=url, email_recipients=recipients
        )
        secret = new_signing_secret() if kind == ChannelKind.WEBHOOK else ""
        channel = NotificationChannel.objects.create(
            team=team,
            name=name,
            kind=kind,
            url=url if kind != ChannelKind.EMAIL else "",
            email_recipients=recipients if kind == ChannelKind.EMAIL else [],
            secret_encrypted=encrypt_secret(secret),
            enabled=enabled,
            created_by=actor.user,
        )
        change.on(channel)
        change.after = snapshot_channel(channel)
    return channel, secret


def update_channel(*, actor: Actor, channel: NotificationChannel, **changes: Any) -> NotificationChannel:
    change = _change("alert_channel.update", "alert_channel", channel.team, before=snapshot_channel(channel))
    change.on(channel)
    with audited_change(actor=actor, change=change):
        check_channel_update(actor=actor, channel=channel, **changes)
        for field, value in changes.items():
            setattr(channel, field, value)
        channel.save()
        change.after = snapshot_channel(channel)
    return channel


def rotate_channel_secret(*, actor: Actor, channel: NotificationChannel) -> tuple[NotificationChannel, str]:
    """A new signing secret for a webhook channel; the old one stops signing at once."""
    change = _change("alert_channel.rotate_secret", "alert_channel", channel.team)
    change.on(channel)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, channel.team, TeamRole.DEVELOPER)
        if channel.kind != ChannelKind.WEBHOOK:
            raise ServiceError("Only webhook channels sign their requests.", code="not_signed")
        secret = new_signing_secret()
        channel.secret_encrypted = encrypt_secret(secret)
        channel.save(update_fields=["secret_encrypted", "updated_at"])
    return channel, secret


def delete_channel(*, actor: Actor, channel: NotificationChannel) -> None:
    change = _change("alert_channel.delete", "alert_channel", channel.team, before=snapshot_channel(channel))
    change.on(channel)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, channel.team, TeamRole.DEVELOPER)
        channel.delete()


def send_test_notification(*, actor: Actor, channel: NotificationChannel) -> Notification:
    """Queues a test notice through the channel; its delivery attempts show whether the receiver works."""
    require_team_role(actor, channel.team, TeamRole.DEVELOPER)
    now = timezone.now()
    notification = Notification.objects.create(
        channel=channel,
        kind=NotificationKind.TEST,
        status=NotificationStatus.PENDING,
        payload=channel_test_payload(channel_name=channel.name, team_name=channel.team.name, at=now),
        created_at=now,
    )
    from controlplane.alerts.evaluation import enqueue_deliveries

    transaction.on_commit(lambda: enqueue_deliveries([notification.pk]))
    return notification


# Silences


def snapshot_silence(silence: Silence) -> dict[str, Any]:
    return {
        "cluster": silence.cluster.name if silence.cluster_id else None,
        "group_pattern": silence.group_pattern,
        "topic_pattern": silence.topic_pattern,
        "rule": silence.rule.name if silence.rule_id else None,
        "severity": silence.severity,
        "starts_at": silence.starts_at.isoformat(),
        "ends_at": silence.ends_at.isoformat(),
        "comment": silence.comment,
    }


def create_silence(
    *,
    actor: Actor,
    team: Team,
    ends_at: datetime,
    comment: str,
    starts_at: datetime | None = None,
    cluster: Cluster | None = None,
    rule: AlertRule | None = None,
    group_pattern: str = "*",
    topic_pattern: str = "*",
    severity: str = "",
) -> Silence:
    starts_at = starts_at or timezone.now()
    change = _change("alert_silence.create", "alert_silence", team)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, team, TeamRole.DEVELOPER)
        problems: dict[str, list[str]] = {}
        if ends_at <= starts_at:
            problems["ends_at"] = ["The silence must end after it starts."]
        elif ends_at - starts_at > MAX_SILENCE:
            problems["ends_at"] = ["A silence lasts at most 90 days."]
        if ends_at <= timezone.now():
            problems.setdefault("ends_at", ["The silence would already be over."])
        if rule is not None and rule.team_id != team.id:
            problems["rule"] = ["The rule belongs to another team."]
        if cluster is not None and cluster.organization_id != team.organization_id:
            problems["cluster"] = ["The cluster belongs to another organization."]
        if problems:
            raise _invalid(problems)
        silence = Silence.objects.create(
            team=team,
            cluster=cluster,
            rule=rule,
            group_pattern=group_pattern,
            topic_pattern=topic_pattern,
            severity=severity,
            starts_at=starts_at,
            ends_at=ends_at,
            comment=comment,
            created_by=actor.user,
            created_by_name=actor.name,
        )
        change.on(silence)
        change.after = snapshot_silence(silence)
    return silence


def expire_silence(*, actor: Actor, silence: Silence) -> Silence:
    """Ends a silence now (a future one never starts); notifications flow again from the next evaluation."""
    change = _change("alert_silence.expire", "alert_silence", silence.team, before=snapshot_silence(silence))
    change.on(silence)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, silence.team, TeamRole.DEVELOPER)
        now = timezone.now()
        if silence.ends_at <= now:
            raise Conflict("The silence is already over.", code="expired")
        silence.ends_at = max(now, silence.starts_at)
        silence.save(update_fields=["ends_at"])
        change.after = snapshot_silence(silence)
    return silence


# Alerts


def acknowledge_alert(*, actor: Actor, alert: Alert) -> Alert:
    """Someone is on it: recorded with who and when, and reminders stop; the resolved notice still goes out."""
    team = alert.rule.team
    change = _change("alert.acknowledge", "alert", team)
    change.on(alert)
    with audited_change(actor=actor, change=change):
        require_team_role(actor, team, TeamRole.DEVELOPER)
        if alert.state not in ACTIVE_STATES:
            raise Conflict("The alert is already resolved.", code="resolved")
        if alert.acknowledged_at is not None:
            raise Conflict(f"{alert.acknowledged_by_name} already acknowledged it.", code="acknowledged")
        alert.acknowledged_at = timezone.now()
        alert.acknowledged_by = actor.user if actor.service_account is None else None
        alert.acknowledged_by_name = actor.name
        alert.save(update_fields=["acknowledged_at", "acknowledged_by", "acknowledged_by_name"])
        change.after = {"acknowledged_by": actor.name, "acknowledged_at": alert.acknowledged_at.isoformat()}
    return alert
