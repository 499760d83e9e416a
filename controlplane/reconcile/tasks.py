"""Celery entry points of reconciliation: thin, named, time-limited, idempotent (a pass can always rerun)."""

from celery import shared_task

from controlplane.clusters.choices import WATCHED_STATUSES
from controlplane.clusters.models import Cluster
from controlplane.reconcile.reconciler import reconcile_cluster


@shared_task(name="reconcile.reconcile_cluster", time_limit=300, soft_time_limit=280, ignore_result=True)
def reconcile_cluster_task(cluster_id: int) -> None:
    cluster = (
        Cluster.objects.select_related("organization")
        .filter(pk=cluster_id, status__in=WATCHED_STATUSES)
        .first()
    )
    if cluster is not None:
        reconcile_cluster(cluster)


@shared_task(name="reconcile.reconcile_all", time_limit=30, soft_time_limit=25, ignore_result=True)
def reconcile_all() -> None:
    """Beat entry point: one reconciliation pass per watched cluster."""
    for cluster_id in Cluster.objects.filter(status__in=WATCHED_STATUSES).values_list("id", flat=True):
        reconcile_cluster_task.apply_async(args=[cluster_id], expires=55)
