"""Every periodic task of the product, in one place (Celery beat reads CELERY_BEAT_SCHEDULE)."""

from datetime import timedelta

BEAT_SCHEDULE: dict[str, dict] = {
    # Proves the worker/beat/Redis loop is alive; cheap and idempotent.
    "core.heartbeat": {
        "task": "core.heartbeat",
        "schedule": timedelta(minutes=1),
        "options": {"expires": 55},
    },
    # Dead local brokers get restarted, external clusters get their health observed, stuck operations resent.
    "clusters.check_all": {
        "task": "clusters.check_all",
        "schedule": timedelta(seconds=15),
        "options": {"expires": 14},
    },
    # Desired vs observed state per cluster: re-create what is missing, cache observed state, report drift.
    "reconcile.reconcile_all": {
        "task": "reconcile.reconcile_all",
        "schedule": timedelta(seconds=60),
        "options": {"expires": 55},
    },
}
