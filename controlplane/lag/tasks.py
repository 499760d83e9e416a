"""Celery entry points of lag sampling: thin, named, time-limited; a run can always be repeated."""

import logging
import time

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from controlplane.clusters.choices import WATCHED_STATUSES
from controlplane.clusters.models import Cluster
from controlplane.kafka.errors import KafkaGatewayError
from controlplane.lag.history import lag_redis, prune_rollups, roll_up_cluster
from controlplane.lag.models import GroupLag
from controlplane.lag.sampler import sample_cluster_exclusively

logger = logging.getLogger(__name__)


@shared_task(name="lag.sample_cluster", time_limit=120, soft_time_limit=110, ignore_result=True)
def sample_cluster_task(cluster_id: int) -> bool:
    """One sampling run of the cluster; False when a previous run still holds the cluster's lock or the
    cluster did not answer (the next run tries again: no retry piles up behind the schedule)."""
    try:
        return sample_cluster_exclusively(cluster_id) is not None
    except KafkaGatewayError as error:
        logger.warning("lag sampling of cluster %s failed: %s", cluster_id, error)
        return False


@shared_task(name="lag.sample_all", time_limit=30, soft_time_limit=25, ignore_result=True)
def sample_all() -> None:
    """Beat entry point: one sampling run per watched cluster; a run not started within an interval is
    dropped (the next one covers it)."""
    for cluster_id in Cluster.objects.filter(status__in=WATCHED_STATUSES).values_list("id", flat=True):
        sample_cluster_task.apply_async(args=[cluster_id], expires=settings.LAG_SAMPLING_INTERVAL_SECONDS)


@shared_task(name="lag.roll_up", time_limit=300, soft_time_limit=280, ignore_result=True)
def roll_up_task(cluster_id: int) -> None:
    """Finished minutes of raw samples into 1-minute rollups, finished hours into 1-hour rollups (the
    markers in Redis make a repeated or overlapping call a no-op)."""
    group_ids = list(GroupLag.objects.filter(cluster_id=cluster_id).values_list("group_id", flat=True))
    roll_up_cluster(lag_redis(), cluster_id, group_ids, time.time())


@shared_task(name="lag.roll_up_all", time_limit=30, soft_time_limit=25, ignore_result=True)
def roll_up_all() -> None:
    """Beat entry point, every minute: one rollup per watched cluster."""
    for cluster_id in Cluster.objects.filter(status__in=WATCHED_STATUSES).values_list("id", flat=True):
        roll_up_task.apply_async(args=[cluster_id], expires=55)


@shared_task(name="lag.prune_rollups", time_limit=600, soft_time_limit=570, ignore_result=True)
def prune_rollups_task() -> int:
    """Retention: 1-minute rollups for 7 days, 1-hour rollups for 90 days (raw samples trim themselves)."""
    return prune_rollups(timezone.now())
