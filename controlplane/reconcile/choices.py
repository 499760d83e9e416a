from django.db import models


class DriftKind(models.TextChoices):
    TOPIC_CONFIG_CHANGED = "topic_config_changed", "A managed topic's configs were changed outside"
    TOPIC_PARTITIONS_CHANGED = "topic_partitions_changed", "A managed topic's partition count differs"
    MANAGED_TOPIC_MISSING = "managed_topic_missing", "A managed topic was missing (re-created)"
    UNMANAGED_TOPIC = "unmanaged_topic", "A topic exists that the control plane does not manage"
    MANAGED_ACL_MISSING = "managed_acl_missing", "A managed ACL binding was missing (re-created)"
    UNMANAGED_ACL = "unmanaged_acl", "An ACL binding exists that the control plane does not manage"
    MANAGED_QUOTA_MISSING = "managed_quota_missing", "A managed quota was missing (re-applied)"
    QUOTA_CHANGED = "quota_changed", "A managed quota's values were changed outside"
    UNMANAGED_QUOTA = "unmanaged_quota", "A quota exists that the control plane does not manage"


class RunState(models.TextChoices):
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
