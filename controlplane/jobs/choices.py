"""Enumerations of the jobs domain."""

from django.db import models

from controlplane.spark.jobs import CATALOG


class RunState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


FINISHED_STATES = (RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED)

JobName = models.TextChoices("JobName", [(name.upper(), name) for name in CATALOG])
