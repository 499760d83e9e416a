"""Celery entry points of the clusters app: thin, named, time-limited, idempotent (they take ids)."""

from celery import shared_task

from controlplane.clusters import outcomes, services, workflows
from controlplane.clusters.choices import WATCHED_STATUSES
from controlplane.clusters.models import Cluster


@shared_task(
    name="clusters.run_operation",
    time_limit=workflows.OPERATION_TIME_LIMIT_SECONDS,
    soft_time_limit=workflows.OPERATION_TIME_LIMIT_SECONDS - 30,
    acks_late=True,
    ignore_result=True,
)
def run_operation(operation_id: int) -> str:
    """Provision, delete or restart brokers; a redelivered operation resumes, a finished one is skipped."""
    return workflows.run_operation(operation_id)


@shared_task(name="clusters.check_health", time_limit=60, soft_time_limit=50, ignore_result=True)
def check_health(cluster_id: int) -> None:
    cluster = Cluster.objects.select_related("organization").filter(pk=cluster_id).first()
    if cluster is not None:
        services.check_cluster_health(cluster=cluster)


@shared_task(name="clusters.check_all", time_limit=30, soft_time_limit=25, ignore_result=True)
def check_all() -> None:
    """Beat entry point: one health check per watched cluster, and a resend of operations stuck in pending."""
    for cluster_id in Cluster.objects.filter(status__in=WATCHED_STATUSES).values_list("id", flat=True):
        check_health.apply_async(args=[cluster_id], expires=30)
    services.resend_stuck_operations()


@shared_task(name="clusters.settle_changes", time_limit=60, soft_time_limit=50, ignore_result=True)
def settle_changes() -> None:
    """Beat entry point: looks at the cluster for every team change whose outcome is not confirmed yet."""
    outcomes.settle_running()
