"""Job runs end to end: launched through the API, run by a real Celery worker on the `spark` queue with
spark-submit on local[2], reading a SASL + ACL broker as the team's service account."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import (
    AclBinding,
    AclOperation,
    AclPermissionType,
    AdminClient,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db import connection
from rest_framework.test import APIClient

from controlplane.accounts import services as accounts
from controlplane.clusters.encryption import encrypt_secret
from controlplane.clusters.models import Cluster
from controlplane.credentials import services as credentials
from controlplane.jobs import launcher
from controlplane.jobs.models import JobRun
from controlplane.tenancy import services as tenancy
from controlplane.tenancy.access import Actor
from controlplane.tenancy.choices import TeamRole
from tests.fixtures.broker import ADMIN_PASSWORD, ADMIN_USER
from tests.fixtures.servers import REPO_ROOT, stop_process, wait_until

pytestmark = pytest.mark.integration

SYSTEM = Actor.system()


def _database_url_of_this_test() -> str:
    settings_dict = connection.settings_dict
    if settings_dict["ENGINE"] != "django.db.backends.postgresql":
        pytest.skip("the worker process needs a database it can share with the test: set DATABASE_URL")
    password = f":{settings_dict['PASSWORD']}" if settings_dict.get("PASSWORD") else ""
    return (
        f"postgres://{settings_dict['USER']}{password}@{settings_dict['HOST']}:{settings_dict['PORT']}"
        f"/{settings_dict['NAME']}"
    )


@pytest.fixture
def spark_worker(transactional_db, redis_url: str, tmp_path: Path, settings) -> Iterator[subprocess.Popen]:
    """A real Celery worker consuming only the `spark` queue, on this test's database and data dir."""
    settings.CELERY_BROKER_URL = settings.CELERY_RESULT_BACKEND = settings.REDIS_URL = redis_url
    settings.DATA_DIR = tmp_path
    from console.celery import app

    app.conf.broker_url = app.conf.result_backend = redis_url
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "STREAMHUB_DATA_DIR": str(tmp_path),
        "DATABASE_URL": _database_url_of_this_test(),
        # The worker must decrypt the run's credential that this process encrypted.
        "SECRET_KEY": settings.SECRET_KEY,
    }
    command = [sys.executable, "-m", "celery", "-A", "console", "worker", "-l", "WARNING", "--pool", "solo"]
    command += ["-Q", "spark", "-n", f"spark-test-{os.getpid()}@%h"]
    process = subprocess.Popen(command, cwd=REPO_ROOT, env=env)
    yield process
    stop_process(process, timeout=30)


class Setup:
    def __init__(self, secure_broker, suffix: str) -> None:
        cache.clear()
        organization = tenancy.create_organization(actor=SYSTEM, name=f"Acme {suffix}")
        self.team = tenancy.create_team(actor=SYSTEM, organization=organization, name=f"Payments {suffix}")
        user = get_user_model().objects.create_user(
            f"dave-{suffix}", "dave@example.com", "a long test password"
        )
        tenancy.add_member(actor=SYSTEM, team=self.team, user=user, role=TeamRole.DEVELOPER)
        self.actor = Actor(user=user)
        _key, token = accounts.create_api_key(actor=self.actor, name="laptop", role=TeamRole.DEVELOPER)
        self.client = APIClient()
        self.client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        self.cluster = Cluster.objects.create(
            organization=organization,
            name=f"secure-{suffix}",
            provider="external",
            bootstrap_servers=secure_broker.bootstrap,
            security_protocol="SASL_PLAINTEXT",
            sasl_mechanism="SCRAM-SHA-512",
            admin_username=ADMIN_USER,
            admin_password_encrypted=encrypt_secret(ADMIN_PASSWORD),
            status="running",
        )
        self.account = accounts.create_service_account(
            actor=self.actor, team=self.team, name=f"reader-{suffix}"
        )
        _credential, self.password = credentials.issue_scram_credential(
            actor=self.actor, service_account=self.account, cluster=self.cluster, mechanism="SCRAM-SHA-512"
        )
        self.topic_prefix = f"jobs-{suffix}"
        self.admin = AdminClient(secure_broker.client_config())
        principal = f"User:{self.account.name}"
        bindings = [
            AclBinding(
                kind, name, ResourcePatternType.PREFIXED, principal, "*", operation, AclPermissionType.ALLOW
            )
            for kind, name, operation in [
                (ResourceType.TOPIC, self.topic_prefix, AclOperation.READ),
                (ResourceType.TOPIC, self.topic_prefix, AclOperation.DESCRIBE),
                (ResourceType.GROUP, "spark-", AclOperation.READ),
            ]
        ]
        for future in self.admin.create_acls(bindings).values():
            future.result(10)
        self.admin_config = secure_broker.client_config()

    def topic(self, name: str, partitions: int, records: list[tuple[int, bytes | None, bytes]]) -> str:
        topic = f"{self.topic_prefix}-{name}"
        self.admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(10)
        producer = Producer({**self.admin_config, "linger.ms": 5})
        for partition, key, value in records:
            producer.produce(topic, key=key, value=value, partition=partition)
        assert producer.flush(15) == 0
        return topic

    def launch(self, job: str, parameters: dict[str, Any], **extra: Any) -> dict[str, Any]:
        body = {
            "team": self.team.pk,
            "cluster": self.cluster.pk,
            "job": job,
            "parameters": parameters,
            "service_account": self.account.pk,
            "password": self.password,
            "compute_target": "local[2]",
            **extra,
        }
        response = self.client.post("/api/v1/job-runs/", body, format="json")
        assert response.status_code == 201, response.content
        return response.json()

    def get(self, run_id: int) -> dict[str, Any]:
        response = self.client.get(f"/api/v1/job-runs/{run_id}/")
        assert response.status_code == 200
        return response.json()

    def wait_finished(self, run_id: int, timeout: float = 150) -> dict[str, Any]:
        wait_until(
            lambda: self.get(run_id)["state"] in ("succeeded", "failed", "cancelled"),
            timeout,
            f"job run {run_id} to finish",
            interval=0.5,
        )
        return self.get(run_id)


@pytest.fixture
def setup(spark_worker, secure_broker, request) -> Setup:
    return Setup(secure_broker, request.node.name[-12:].strip("_").lower().replace("_", "-"))


def _command_lines() -> str:
    text = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                text.append((entry / "cmdline").read_bytes().decode(errors="replace"))
            except OSError:
                continue
    return "\n".join(text)


def test_a_launched_run_reports_progress_and_stores_results_computed_as_the_service_account(setup):
    records = [
        (i % 3, None if i % 10 == 0 else b"k%d" % (i % 4 if i % 2 else 1), b"v" * (i % 7)) for i in range(300)
    ]
    topic = setup.topic("orders", 3, records)
    run = setup.launch("key_skew", {"source": {"topic": topic}, "top": 2})
    assert run["state"] == "queued"
    seen_progress, password_in_process_list = [], False
    deadline = time.monotonic() + 150
    while time.monotonic() < deadline:
        current = setup.get(run["id"])
        if current["state"] == "running":
            password_in_process_list |= setup.password in _command_lines()
            if current["progress"].get("tasks_total"):
                seen_progress.append(current["progress_fraction"])
        if current["state"] in ("succeeded", "failed", "cancelled"):
            break
        time.sleep(0.2)
    assert current["state"] == "succeeded", current["reason"]
    assert seen_progress, "no progress was reported while the job ran"
    assert not password_in_process_list
    assert current["progress_fraction"] == 1.0
    assert current["duration_seconds"] > 0
    keys = collections.Counter(key for _, key, _ in records if key is not None)
    top = sorted(keys.items(), key=lambda item: (-item[1], item[0]))[:2]
    tables = {table["name"]: table for table in current["result"]["tables"]}
    assert tables["top_keys"]["rows"] == [[k.decode(), n] for k, n in top]
    assert current["result"]["metrics"]["records_read"] == 300
    assert current["result"]["metrics"]["records_per_second"] > 0
    log = setup.client.get(f"/api/v1/job-runs/{run['id']}/log/").json()["lines"]
    assert log
    assert not any(setup.password in line for line in log)
    # The credential lived only while the run ran.
    assert JobRun.objects.get(pk=run["id"]).credential_encrypted == ""


def test_cancelling_a_running_job_stops_its_spark_processes(setup):
    topic = setup.topic("cancel", 1, [(0, None, b"x")] * 10)
    run = setup.launch("data_quality", {"source": {"topic": topic}})
    wait_until(
        lambda: JobRun.objects.get(pk=run["id"]).process_group is not None,
        60,
        "spark-submit to start",
        interval=0.2,
    )
    session = JobRun.objects.get(pk=run["id"]).process_group
    assert launcher.session_processes(session)
    response = setup.client.post(f"/api/v1/job-runs/{run['id']}/cancel/")
    assert response.status_code == 202
    finished = setup.wait_finished(run["id"], timeout=60)
    assert finished["state"] == "cancelled"
    assert launcher.session_processes(session) == []


def test_bad_runs_fail_with_a_readable_reason_and_the_worker_keeps_serving(setup):
    unknown = setup.launch("key_skew", {"source": {"topic": f"{setup.topic_prefix}-missing"}})
    wrong_password = setup.launch(
        "key_skew", {"source": {"topic": f"{setup.topic_prefix}-missing"}}, password="not-the-password"
    )
    too_slow = setup.launch(
        "key_skew", {"source": {"topic": f"{setup.topic_prefix}-missing"}}, time_limit_seconds=10
    )
    assert "unknown topic" in setup.wait_finished(unknown["id"])["reason"]
    failed = setup.wait_finished(wrong_password["id"])
    assert failed["state"] == "failed"
    assert "authentication" in failed["reason"].lower() or "sasl" in failed["reason"].lower(), failed[
        "reason"
    ]
    slow = setup.wait_finished(too_slow["id"])
    assert slow == slow | {"state": "failed", "reason": "The job exceeded its time limit of 10 s."}


def test_the_api_refuses_launches_it_cannot_run(setup):
    response = setup.client.post(
        "/api/v1/job-runs/",
        {"team": setup.team.pk, "cluster": setup.cluster.pk, "job": "key_skew", "parameters": {"top": 3}},
        format="json",
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "credentials"
    response = setup.client.post(
        "/api/v1/job-runs/",
        {
            "team": setup.team.pk,
            "cluster": setup.cluster.pk,
            "job": "key_skew",
            "parameters": {"source": {"topic": "x"}, "bogus": 1},
            "service_account": setup.account.pk,
            "password": "p",
        },
        format="json",
    )
    assert response.status_code == 400
    assert "bogus" in response.json()["error"]["message"]
