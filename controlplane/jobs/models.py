from django.conf import settings
from django.db import models

from controlplane.accounts.models import ServiceAccount
from controlplane.clusters.models import Cluster
from controlplane.jobs.choices import JobName, RunState
from controlplane.tenancy.models import Team


class JobRun(models.Model):
    """One run of a catalog job over a cluster's topic data, as the team's service account."""

    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="job_runs")
    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="job_runs")
    service_account = models.ForeignKey(
        ServiceAccount, on_delete=models.SET_NULL, null=True, blank=True, related_name="job_runs"
    )
    job = models.CharField(max_length=40, choices=JobName.choices)
    parameters = models.JSONField(default=dict)
    # local[N], spark://…, k8s://… (spark-submit --master) or sc://… (Spark Connect, --remote)
    compute_target = models.CharField(max_length=500)
    time_limit_seconds = models.PositiveIntegerField(default=1800)
    state = models.CharField(max_length=20, choices=RunState.choices, default=RunState.QUEUED)
    reason = models.TextField(blank=True)
    # {"stages_done", "stages_total", "tasks_done", "tasks_total", "records_read"} from Spark's status API
    progress = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)
    # The service account's SCRAM password for this run, Fernet-encrypted; wiped when the run finishes.
    credential_encrypted = models.TextField(blank=True)
    cancel_requested = models.BooleanField(default=False)
    process_group = models.IntegerField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["team", "state"])]

    def __str__(self) -> str:
        return f"{self.job} #{self.pk}"
