"""Celery entry points of the connect app."""

from celery import shared_task
from django.conf import settings

from controlplane.clusters.models import Cluster
from controlplane.connect import alerting


@shared_task(name="connect.evaluate_connector_alerts", time_limit=60, soft_time_limit=50, ignore_result=True)
def evaluate_connector_alerts(cluster_id: int) -> None:
    cluster = Cluster.objects.select_related("organization").filter(pk=cluster_id).first()
    if cluster is not None:
        alerting.evaluate_connector_alerts(cluster)


@shared_task(name="connect.evaluate_connector_alerts_all", time_limit=30, ignore_result=True)
def evaluate_connector_alerts_all() -> None:
    """Beat entry point, every lag-sampling interval: one evaluation per cluster with connectors."""
    for cluster_id in alerting.clusters_to_evaluate():
        evaluate_connector_alerts.apply_async(
            args=[cluster_id], expires=settings.LAG_SAMPLING_INTERVAL_SECONDS
        )
