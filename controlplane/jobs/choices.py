"""Enumerations of the jobs domain."""

from django.db import models

from controlplane.spark.jobs import CATALOG, STREAMING_CATALOG


class RunState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


FINISHED_STATES = (RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED)

JobName = models.TextChoices("JobName", [(name.upper(), name) for name in CATALOG])


class StreamState(models.TextChoices):
    STARTING = "starting", "Starting"  # queued for its supervisor, or spark-submit starting
    RUNNING = "running", "Running"
    RESTARTING = "restarting", "Restarting"  # failed, waiting out its backoff before the next start
    STOPPING = "stopping", "Stopping"
    STOPPED = "stopped", "Stopped"
    FAILED = "failed", "Failed"  # gave up after too many failures in a row


class DesiredState(models.TextChoices):
    RUNNING = "running", "Running"
    STOPPED = "stopped", "Stopped"


StreamingJobName = models.TextChoices(
    "StreamingJobName", [(name.upper(), name) for name in STREAMING_CATALOG]
)
