from console.celery import app
from console.schedules import BEAT_SCHEDULE
from controlplane.reconcile import tasks


def test_beat_runs_the_reconciler_by_a_registered_task_name_and_drops_stale_runs() -> None:
    entry = BEAT_SCHEDULE["reconcile.reconcile_all"]

    assert entry["task"] == tasks.reconcile_all.name
    assert entry["task"] in app.tasks
    assert entry["options"]["expires"] < entry["schedule"].total_seconds()


def test_a_reconcile_pass_has_a_time_limit() -> None:
    assert tasks.reconcile_cluster_task.time_limit is not None
    assert tasks.reconcile_cluster_task.soft_time_limit < tasks.reconcile_cluster_task.time_limit
