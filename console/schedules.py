"""Every periodic task of the product, in one place (Celery beat reads CELERY_BEAT_SCHEDULE)."""

from datetime import timedelta

from controlplane.lag.intervals import sampling_interval_seconds

LAG_SAMPLING_INTERVAL = sampling_interval_seconds()

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
    # Teams' changes the cluster did not confirm within the request: looked at until their outcome is known.
    "clusters.settle_changes": {
        "task": "clusters.settle_changes",
        "schedule": timedelta(seconds=10),
        "options": {"expires": 9},
    },
    # Desired vs observed state per cluster: re-create what is missing, cache observed state, report drift.
    "reconcile.reconcile_all": {
        "task": "reconcile.reconcile_all",
        "schedule": timedelta(seconds=60),
        "options": {"expires": 55},
    },
    # Streaming jobs that should run but whose supervisor is gone (its worker died) get a new one.
    "jobs.watch_streams": {
        "task": "jobs.watch_streams",
        "schedule": timedelta(seconds=30),
        "options": {"expires": 29},
    },
    # Consumer lag of every watched cluster (never overlapping per cluster: a Redis lock), every 5-60 s.
    "lag.sample_all": {
        "task": "lag.sample_all",
        "schedule": timedelta(seconds=LAG_SAMPLING_INTERVAL),
        "options": {"expires": LAG_SAMPLING_INTERVAL - 1},
    },
    # Raw lag samples of finished minutes (and hours) into the database's rollups.
    "lag.roll_up_all": {
        "task": "lag.roll_up_all",
        "schedule": timedelta(minutes=1),
        "options": {"expires": 55},
    },
    # Lag rollup retention: 1-minute rows for 7 days, 1-hour rows for 90 days.
    "lag.prune_rollups": {
        "task": "lag.prune_rollups",
        "schedule": timedelta(hours=1),
        "options": {"expires": 3000},
    },
    # Cluster-health alert rules (broker down, partitions, controller, disks, unreachable, failed): one look
    # per covered cluster each lag-sampling interval.
    "alerts.sample_cluster_health_all": {
        "task": "alerts.sample_cluster_health_all",
        "schedule": timedelta(seconds=LAG_SAMPLING_INTERVAL),
        "options": {"expires": LAG_SAMPLING_INTERVAL - 1},
    },
    # Connector alert rules (a connector or task paused, stopped or failed): Connect asked once per cluster
    # with connectors each lag-sampling interval.
    "connect.evaluate_connector_alerts_all": {
        "task": "connect.evaluate_connector_alerts_all",
        "schedule": timedelta(seconds=LAG_SAMPLING_INTERVAL),
        "options": {"expires": LAG_SAMPLING_INTERVAL - 1},
    },
    # Alert notifications whose delivery task could not be queued at the time (Redis was unreachable).
    "alerts.queue_unsent_notifications": {
        "task": "alerts.queue_unsent_notifications",
        "schedule": timedelta(minutes=1),
        "options": {"expires": 55},
    },
}
