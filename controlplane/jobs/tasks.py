"""Celery entry points of the jobs app. Runs are sent to the `spark` queue (services.enqueue_run), which
runstack's worker consumes next to the default one; streaming jobs' supervisors to `spark-streams`, consumed by
runstack's thread-pool worker (each running stream holds one of its threads)."""

from celery import shared_task

from controlplane.jobs import services, streams


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


@shared_task(
    name="jobs.supervise_stream",
    # Runs as long as its stream does; acknowledged on receipt, so a worker that dies does not hand it to
    # another (watch_streams enqueues a new one once the heartbeat goes stale).
    acks_late=False,
    time_limit=streams.SUPERVISOR_TIME_LIMIT_SECONDS,
    soft_time_limit=streams.SUPERVISOR_TIME_LIMIT_SECONDS - 60,
    ignore_result=True,
)
def supervise_stream(stream_id: int) -> str:
    """Keeps one streaming job running until it is stopped (streams.Supervisor)."""
    return streams.Supervisor(stream_id).run()


@shared_task(name="jobs.watch_streams", ignore_result=True)
def watch_streams() -> int:
    """Enqueues a supervisor for every stream that should run and has none alive."""
    rescued = streams.streams_to_rescue()
    for stream_id in rescued:
        streams.enqueue_supervisor(stream_id)
    return len(rescued)
