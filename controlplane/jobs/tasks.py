"""Celery entry points of the jobs app. Runs are sent to the `spark` queue (services.enqueue_run), which
runstack's worker consumes next to the default one."""

from celery import shared_task

from controlplane.jobs import services


@shared_task(
    name="jobs.run_job",
    # The run enforces its own time limit and stops Spark; this only catches a stuck watcher.
    time_limit=services.MAX_TIME_LIMIT_SECONDS + 300,
    soft_time_limit=services.MAX_TIME_LIMIT_SECONDS + 240,
    acks_late=True,
    ignore_result=True,
)
def run_job(run_id: int) -> str:
    """Runs one job run with spark-submit; a finished run is skipped, so redelivery is harmless."""
    return services.execute_job_run(run_id)
