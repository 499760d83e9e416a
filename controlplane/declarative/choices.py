from django.db import models


class Kind(models.TextChoices):
    SERVICE_ACCOUNT = "ServiceAccount"
    TOPIC = "Topic"
    ACCESS_GRANT = "AccessGrant"
    QUOTA = "Quota"
    SCHEMA = "Schema"
    ALERT_RULE = "AlertRule"
    ALERT_CHANNEL = "AlertChannel"
    STREAMING_JOB = "StreamingJob"


# The kinds a plan can act on, in the order creates and updates run (a grant needs its service account, a
# quota its user); deletes run in the reverse order (a subject is deleted before its topic).
APPLIED_KINDS = [
    Kind.SERVICE_ACCOUNT,
    Kind.TOPIC,
    Kind.ACCESS_GRANT,
    Kind.QUOTA,
    Kind.SCHEMA,
    Kind.ALERT_CHANNEL,
    Kind.ALERT_RULE,
    Kind.STREAMING_JOB,
]
# Kinds that live in the organization or a team, not on one cluster.
ORGANIZATION_KINDS = [Kind.SERVICE_ACCOUNT, Kind.ALERT_CHANNEL]
# Kinds on one cluster or, without metadata.cluster, on every cluster of the organization.
ANY_CLUSTER_KINDS = [Kind.ALERT_RULE]
# Kinds on one cluster but named within their team, whatever cluster: claimed by name too.
TEAM_NAMED_KINDS = [Kind.STREAMING_JOB]
# Kinds named within their team or organization, whatever cluster they watch: a file set claims them by name.
CLAIMED_WITHOUT_CLUSTER = [*ORGANIZATION_KINDS, *ANY_CLUSTER_KINDS, *TEAM_NAMED_KINDS]


class Action(models.TextChoices):
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"
    UNCHANGED = "unchanged"
    REFUSED = "refused"


class ChangeStatus(models.TextChoices):
    APPLIED = "applied", "Applied"
    PENDING = "pending", "Sent; the cluster's confirmation is still awaited (an operation follows it)"
    UNKNOWN = "unknown", "Sent; the cluster did not answer and does not show it yet"
    PARTIAL = "partial", "Some steps applied (listed in done), a later one failed"
    FAILED = "failed", "Refused or failed; nothing changed"
    SKIPPED = "skipped", "Not attempted after an earlier change failed"


class ChangeSetState(models.TextChoices):
    APPLIED = "applied", "Every change applied"
    PARTIAL = "partial", "Some changes applied, some did not"
    FAILED = "failed", "No change applied"
