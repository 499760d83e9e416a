"""Celery entry points of alerting: deliveries take a notification id and are safe to run twice."""

from datetime import timedelta

from celery import shared_task
from django.conf import settings

from controlplane.alerts import cluster_health, delivery


@shared_task(
    name="alerts.deliver_notification",
    time_limit=120,
    soft_time_limit=100,
    acks_late=True,
    ignore_result=True,
)
def deliver_notification(notification_id: int) -> None:
    """One delivery attempt; a failure worth retrying queues the next attempt after an exponential backoff."""
    delay = delivery.attempt_delivery(notification_id)
    if delay is not None:
        deliver_notification.apply_async(args=[notification_id], countdown=delay)


@shared_task(name="alerts.queue_unsent_notifications", time_limit=60, ignore_result=True)
def queue_unsent_notifications() -> int:
    """Queues notifications whose delivery task was never queued (the queue was unreachable then)."""
    ids = delivery.unsent_notification_ids(older_than=timedelta(minutes=2))
    for notification_id in ids:
        deliver_notification.delay(notification_id)
    return len(ids)


@shared_task(name="alerts.sample_cluster_health", time_limit=60, soft_time_limit=50, ignore_result=True)
def sample_cluster_health(cluster_id: int) -> None:
    """One cluster-health look at the cluster and an evaluation of its cluster-health rules."""
    cluster_health.sample_and_evaluate(cluster_id)


@shared_task(name="alerts.sample_cluster_health_all", time_limit=30, soft_time_limit=25, ignore_result=True)
def sample_cluster_health_all() -> None:
    """Beat entry point, every lag-sampling interval: one look per cluster a cluster-health rule covers; a
    look not started within the interval is dropped (the next one covers it)."""
    for cluster_id in cluster_health.clusters_to_sample():
        sample_cluster_health.apply_async(args=[cluster_id], expires=settings.LAG_SAMPLING_INTERVAL_SECONDS)
