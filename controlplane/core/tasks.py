"""Celery entry points of the core app. Tasks are thin: they take ids, call services, are idempotent."""

from celery import shared_task

from controlplane.core import services


@shared_task(name="core.heartbeat", time_limit=30, soft_time_limit=20, ignore_result=True)
def heartbeat() -> None:
    """Beat-scheduled proof of life; the overview API reports the worker as alive while it is fresh."""
    services.record_worker_heartbeat()


@shared_task(name="core.echo", time_limit=30, soft_time_limit=20)
def echo(payload: dict) -> dict:
    """Round-trips a payload through the queue; used by health checks and the integration test."""
    return services.describe_worker_echo(payload)
