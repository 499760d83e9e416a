import pytest
import redis

from controlplane.core import services
from controlplane.core.tasks import echo, heartbeat
from tests.fixtures.servers import wait_until

pytestmark = pytest.mark.integration


def test_it_runs_a_task_enqueued_from_django_in_a_real_worker(celery_worker_process) -> None:
    result = echo.delay({"hello": "worker"})

    outcome = result.get(timeout=30)

    assert outcome["payload"] == {"hello": "worker"}
    assert outcome["worker_pid"] == celery_worker_process.pid  # ran in the worker, not in this process


def test_it_records_the_worker_heartbeat_in_redis(celery_worker_process, redis_url) -> None:
    redis.Redis.from_url(redis_url).delete(services.HEARTBEAT_KEY)
    assert services.read_worker_heartbeat() is None

    heartbeat.delay()  # results are ignored for heartbeats: its effect is the Redis key

    wait_until(lambda: services.read_worker_heartbeat() is not None, 30, "the heartbeat to be recorded")
