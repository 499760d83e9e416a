from django.conf import settings
from django.db import models

from controlplane.accounts.models import ServiceAccount
from controlplane.clusters.models import Cluster
from controlplane.jobs.choices import DesiredState, JobName, RunState, StreamingJobName, StreamState
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


class StreamingJob(models.Model):
    """A long-running Structured Streaming job from the streaming catalog, kept running by its supervisor
    (controlplane.jobs.streams) from its checkpoint under STREAMING_CHECKPOINT_DIR/<id>/."""

    team = models.ForeignKey(Team, on_delete=models.PROTECT, related_name="streaming_jobs")
    cluster = models.ForeignKey(Cluster, on_delete=models.PROTECT, related_name="streaming_jobs")
    service_account = models.ForeignKey(
        ServiceAccount, on_delete=models.SET_NULL, null=True, blank=True, related_name="streaming_jobs"
    )
    name = models.CharField(max_length=100)
    job = models.CharField(max_length=40, choices=StreamingJobName.choices)
    parameters = models.JSONField(default=dict)
    compute_target = models.CharField(max_length=500)
    desired_state = models.CharField(
        max_length=20, choices=DesiredState.choices, default=DesiredState.RUNNING
    )
    state = models.CharField(max_length=20, choices=StreamState.choices, default=StreamState.STARTING)
    reason = models.TextField(blank=True)
    # The service account's SCRAM password, Fernet-encrypted, kept while the job should run (restarts need
    # it) and wiped when it stops.
    credential_encrypted = models.TextField(blank=True)
    restart_requested = models.BooleanField(default=False)
    restart_count = models.PositiveIntegerField(default=0)
    consecutive_failures = models.PositiveIntegerField(default=0)
    # The latest restarts, newest last: [{"at", "reason", "delay_seconds", "requested"}] (at most 50).
    restarts = models.JSONField(default=list, blank=True)
    next_restart_at = models.DateTimeField(null=True, blank=True)
    # The latest StreamingQueryProgress, summarized (streaming.progress_summary).
    progress = models.JSONField(default=dict, blank=True)
    # Committed offsets per partition vs log end: {"sampled_at", "batch_id", "total_lag", "partitions": [...]}
    lag = models.JSONField(default=dict, blank=True)
    process_group = models.IntegerField(null=True, blank=True)
    supervisor_token = models.CharField(max_length=32, blank=True)
    supervisor_heartbeat_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)  # of the driver running now
    stopped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["team", "name"], name="unique_stream_name_per_team")]

    def __str__(self) -> str:
        return f"{self.name} ({self.job})"
